// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gemm/pack.hpp: B packed into panels (layout in gemm.hpp), and the process-wide
// registry that keeps one copy of each packed weight.
//
// Several compiled graphs (the buckets of a cache) that set the same param data get the same
// PackedB: the registry keys weak pointers by a hash of the data and the packing (K, N, panel
// width, format, batches), and compares the data against the packed copy on every hit, so a hash
// collision only costs a second copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "backends/cpu/gemm/gemm.hpp"

namespace rungs::backend::cpu::gemm {

struct PackLayout {
  int64_t k = 0;
  int64_t n = 0;
  int64_t nr = 0;  // panel width
  Format format = Format::F32;
  bool transposed = false;  // the source holds B transposed: [n, k] row-major

  int64_t panels() const { return (n + nr - 1) / nr; }
  int64_t word_rows() const { return (k + format_k_step(format) - 1) / format_k_step(format); }
  int64_t panel_words() const { return word_rows() * nr; }
  int64_t words() const { return panels() * panel_words(); }  // one matrix
  friend bool operator==(const PackLayout&, const PackLayout&) = default;
};

// Pack one row-major [k, n] matrix (row stride ldb; [n, k] when layout.transposed) into
// layout.words() 32-bit words at dst.
void pack_b(const float* src, int64_t ldb, const PackLayout& layout, uint32_t* dst);

// `batches` matrices packed one after the other (layout.words() apart).
class PackedB {
 public:
  PackedB(const PackLayout& layout, int64_t batches);
  const PackLayout& layout() const { return layout_; }
  int64_t batches() const { return batches_; }
  const uint32_t* batch(int64_t i) const { return words_.get() + i * layout_.words(); }
  uint32_t* batch(int64_t i) { return words_.get() + i * layout_.words(); }
  size_t bytes() const { return static_cast<size_t>(batches_ * layout_.words()) * 4; }
  // Whether packing `data` ([batches, k, n] row-major, or [batches, n, k] when the layout is
  // transposed) gives exactly this copy (bitwise).
  bool holds(std::span<const float> data) const;

 private:
  struct Free {
    void operator()(uint32_t* p) const;
  };
  PackLayout layout_;
  int64_t batches_;
  std::unique_ptr<uint32_t[], Free> words_;
};

// The packed copy of `data` ([batches, k, n], or [batches, n, k] when transposed), shared with every other holder of the same data
// packed the same way. Thread-safe.
std::shared_ptr<const PackedB> pack_shared(std::span<const float> data, const PackLayout& layout,
                                           int64_t batches);
// Packed copies alive in the registry (for tests and reports).
size_t shared_packed_count();

}  // namespace rungs::backend::cpu::gemm
