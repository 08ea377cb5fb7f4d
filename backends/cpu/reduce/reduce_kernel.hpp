// SPDX-License-Identifier: Apache-2.0
// backends/cpu/reduce/reduce_kernel.hpp: the reduce kernel over xsimd batches.
// Included only by the per-ISA translation units (reduce_<isa>.cpp).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/reduce/reduce.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/simd.hpp"
#include "backends/cpu/rows/vmath.hpp"

namespace rungs::backend::cpu {
namespace reduce_detail {

constexpr int kColumnBatches = 4;  // column tile of the vertical case: 4 batches in registers

template <class A>
class ReduceKernel final : public Kernel {
  using B = vfloat<A>;
  static constexpr int64_t W = B::size;

 public:
  ReduceKernel(ReduceKind kind, std::vector<int64_t> axes) : kind_(kind), axes_(std::move(axes)) {}

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    (void)out_dims;
    const ReducePlan p = plan_reduce(in[0].dims, axes_);
    const float* x = in[0].data;
    if (p.outputs == 0) return;
    const float post = kind_ == ReduceKind::Mean ? 1.f / static_cast<float>(p.count) : 1.f;
    if (p.count == 0 || p.size.empty()) {  // nothing reduced or nothing to reduce over
      for (int64_t o = 0; o < p.outputs; ++o) out[o] = p.count == 0 ? fill() * post : x[o] * post;
      return;
    }
    const size_t last = p.size.size() - 1;
    const int64_t len = p.size[last];
    // Reduced combinations outside the innermost group, and kept ones (output order).
    const std::vector<int64_t> roffs = reduce_offsets(p, last, true);
    const std::vector<int64_t> koffs = reduce_offsets(p, last, false);
    if (p.reduced[last]) {
      ctx.parallel_for(p.outputs, grain_for(p.count), [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) out[o] = horizontal(x + koffs[o], roffs, len) * post;
      });
    } else {
      constexpr int64_t tile = kColumnBatches * W;
      const int64_t tiles = (len + tile - 1) / tile;
      ctx.parallel_for(p.outputs / len * tiles, grain_for(p.count * tile), [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t row = u / tiles, c = (u % tiles) * tile;
          vertical(x + koffs[row] + c, roffs, out + row * len + c, std::min(tile, len - c), post);
        }
      });
    }
  }

  bool sums_row_blocks() const override { return true; }

  void sum_row_blocks(const float* x, int64_t rows, int64_t inner, int64_t first_row, float* blocks) const override {
    float* dst = blocks + first_row / kRowBlock * inner;
    for (int64_t b0 = 0; b0 < rows; b0 += kRowBlock, dst += inner) {
      const int64_t n = std::min(kRowBlock, rows - b0);
      for (int64_t c = 0; c < inner; c += W) {
        const float* col = x + b0 * inner + c;
        B t = B::load_unaligned(col);
        for (int64_t r = 1; r < n; ++r) t = combine(t, B::load_unaligned(col + r * inner));
        store(dst + c, t, inner - c);
      }
    }
  }

  void finish_row_blocks(const float* blocks, int64_t rows, int64_t inner, float* out) const override {
    const int64_t count = (rows + kRowBlock - 1) / kRowBlock;
    const B post(kind_ == ReduceKind::Mean ? 1.f / static_cast<float>(rows) : 1.f);
    for (int64_t c = 0; c < inner; c += W) {
      B acc(fill());
      for (int64_t b = 0; b < count; ++b) acc = combine(acc, B::load_unaligned(blocks + b * inner + c));
      store(out + c, acc * post, inner - c);
    }
  }

  std::string describe() const override {
    const char* k = kind_ == ReduceKind::Sum ? "sum" : kind_ == ReduceKind::Mean ? "mean" : "max";
    return std::string("reduce_") + k + "[" + arch_label<A>() + "]";
  }

 private:
  B combine(const B& a, const B& b) const { return kind_ == ReduceKind::Max ? vmath::maximum(a, b) : a + b; }
  float fill() const { return kind_ == ReduceKind::Max ? -std::numeric_limits<float>::infinity() : 0.f; }
  // The first min(W, n) lanes of v at p.
  static void store(float* p, const B& v, int64_t n) {
    if (n >= W) v.store_unaligned(p);
    else store_tail<A>(p, v, static_cast<size_t>(n));
  }

  // Reduce the runs base + roffs[i] + [0, len) to one value.
  float horizontal(const float* base, const std::vector<int64_t>& roffs, int64_t len) const {
    const float fill = this->fill();
    B acc0(fill), acc1(fill);
    const int64_t full = len - len % W;
    for (int64_t r : roffs) {
      const float* run = base + r;
      int64_t i = 0;
      for (; i + 2 * W <= full; i += 2 * W) {
        acc0 = combine(acc0, B::load_unaligned(run + i));
        acc1 = combine(acc1, B::load_unaligned(run + i + W));
      }
      if (i < full) acc0 = combine(acc0, B::load_unaligned(run + i));
      if (full < len) acc1 = combine(acc1, keep_first<A>(B::load_unaligned(run + full), size_t(len - full), fill));
    }
    const B acc = combine(acc0, acc1);
    return kind_ == ReduceKind::Max ? vmath::reduce_maximum(acc) : xsimd::reduce_add(acc);
  }

  // out[0, cols) = reduction over r of base[roffs[r] + (0, cols)], cols <= kColumnBatches * W:
  // blocks of kRowBlock runs reduced, then the blocks in order (sum_row_blocks and
  // finish_row_blocks split the same sums between threads).
  void vertical(const float* base, const std::vector<int64_t>& roffs, float* out, int64_t cols, float post) const {
    B acc[kColumnBatches];
    for (auto& a : acc) a = B(fill());
    const int used = static_cast<int>((cols + W - 1) / W);
    const auto runs = static_cast<int64_t>(roffs.size());
    for (int64_t b0 = 0; b0 < runs; b0 += kRowBlock) {
      const int64_t b1 = std::min(runs, b0 + kRowBlock);
      for (int u = 0; u < kColumnBatches; ++u) {
        if (u >= used) break;
        B t = B::load_unaligned(base + roffs[b0] + u * W);
        for (int64_t r = b0 + 1; r < b1; ++r) t = combine(t, B::load_unaligned(base + roffs[r] + u * W));
        acc[u] = combine(acc[u], t);
      }
    }
    for (int u = 0; u < used; ++u) store(out + u * W, acc[u] * B(post), cols - u * W);
  }

  ReduceKind kind_;
  std::vector<int64_t> axes_;
};

}  // namespace reduce_detail

template <class Arch>
std::unique_ptr<Kernel> make_reduce_for(const KernelParams& params) {
  return std::make_unique<reduce_detail::ReduceKernel<Arch>>(params.reduce.kind, params.reduce.axes);
}

}  // namespace rungs::backend::cpu
