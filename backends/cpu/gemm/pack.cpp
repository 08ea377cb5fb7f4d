// SPDX-License-Identifier: Apache-2.0
#include "backends/cpu/gemm/pack.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <tuple>

#include "core/check.hpp"
#include "core/numeric/half.hpp"

namespace rungs::backend::cpu::gemm {
namespace {

uint32_t encode16(float x, Format f) {
  return f == Format::BF16 ? numeric::f32_to_bf16(x) : numeric::f32_to_f16(x);
}

// B[kk, j] of the source matrix (row stride ldb), stored as B or as B transposed.
float source_at(const float* src, int64_t ldb, const PackLayout& l, int64_t kk, int64_t j) {
  return l.transposed ? src[j * ldb + kk] : src[kk * ldb + j];
}

// The word at (word row r, column j) of a panel, from the source matrix (zero past k and n).
uint32_t packed_word(const float* src, int64_t ldb, const PackLayout& l, int64_t r, int64_t j) {
  if (j >= l.n) return 0;
  if (l.format == Format::F32) return numeric::float_bits(source_at(src, ldb, l, r, j));
  const int64_t k0 = 2 * r;
  const uint32_t lo = encode16(source_at(src, ldb, l, k0, j), l.format);
  const uint32_t hi = k0 + 1 < l.k ? encode16(source_at(src, ldb, l, k0 + 1, j), l.format) : 0u;
  return lo | hi << 16;
}

// 64-bit hash of the bytes (a multiply-xorshift mix of 8-byte words).
uint64_t hash_floats(std::span<const float> data) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const size_t size = data.size_bytes();
  uint64_t h = 0x9e3779b97f4a7c15ull ^ size;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < size; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

struct Key {
  uint64_t hash;
  int64_t k, n, nr, batches;
  Format format;
  bool transposed;
  friend bool operator<(const Key& a, const Key& b) {
    return std::tie(a.hash, a.k, a.n, a.nr, a.batches, a.format, a.transposed) <
           std::tie(b.hash, b.k, b.n, b.nr, b.batches, b.format, b.transposed);
  }
};

struct Registry {
  std::mutex mu;
  std::multimap<Key, std::weak_ptr<const PackedB>> entries;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: kernels may outlive static destruction
  return *r;
}

}  // namespace

void pack_b(const float* src, int64_t ldb, const PackLayout& l, uint32_t* dst) {
  const int64_t rows = l.word_rows();
  for (int64_t p = 0; p < l.panels(); ++p) {
    uint32_t* panel = dst + p * l.panel_words();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < l.nr; ++j) panel[r * l.nr + j] = packed_word(src, ldb, l, r, p * l.nr + j);
    }
  }
}

void PackedB::Free::operator()(uint32_t* p) const { ::operator delete[](p, std::align_val_t(64)); }

PackedB::PackedB(const PackLayout& layout, int64_t batches)
    : layout_(layout),
      batches_(batches),
      words_(static_cast<uint32_t*>(::operator new[](std::max<size_t>(bytes(), 64), std::align_val_t(64)))) {}

bool PackedB::holds(std::span<const float> data) const {
  const PackLayout& l = layout_;
  if (static_cast<int64_t>(data.size()) != batches_ * l.k * l.n) return false;
  const int64_t ld = l.transposed ? l.k : l.n;
  for (int64_t b = 0; b < batches_; ++b) {
    const float* src = data.data() + b * l.k * l.n;
    const uint32_t* packed = batch(b);
    for (int64_t p = 0; p < l.panels(); ++p) {
      for (int64_t r = 0; r < l.word_rows(); ++r) {
        for (int64_t j = 0; j < l.nr; ++j) {
          if (packed[(p * l.word_rows() + r) * l.nr + j] != packed_word(src, ld, l, r, p * l.nr + j))
            return false;
        }
      }
    }
  }
  return true;
}

std::shared_ptr<const PackedB> pack_shared(std::span<const float> data, const PackLayout& layout,
                                           int64_t batches) {
  internal_check(static_cast<int64_t>(data.size()) == batches * layout.k * layout.n,
                 "pack_shared: data size does not match the layout");
  const Key key{hash_floats(data), layout.k, layout.n, layout.nr, batches, layout.format, layout.transposed};
  Registry& reg = registry();
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    auto [lo, hi] = reg.entries.equal_range(key);
    for (auto it = lo; it != hi; ++it) {
      if (auto hit = it->second.lock(); hit && hit->holds(data)) return hit;
    }
  }
  // Pack outside the lock; two racing packers of the same data may both pack, one copy is kept.
  auto packed = std::make_shared<PackedB>(layout, batches);
  for (int64_t b = 0; b < batches; ++b)
    pack_b(data.data() + b * layout.k * layout.n, layout.transposed ? layout.k : layout.n, layout, packed->batch(b));

  std::lock_guard<std::mutex> lock(reg.mu);
  for (auto it = reg.entries.begin(); it != reg.entries.end();) {
    it = it->second.expired() ? reg.entries.erase(it) : std::next(it);
  }
  auto [lo, hi] = reg.entries.equal_range(key);
  for (auto it = lo; it != hi; ++it) {
    if (auto hit = it->second.lock(); hit && hit->holds(data)) return hit;
  }
  reg.entries.emplace(key, packed);
  return packed;
}

size_t shared_packed_count() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  size_t n = 0;
  for (auto& [key, weak] : reg.entries) n += weak.expired() ? 0 : 1;
  return n;
}

}  // namespace rungs::backend::cpu::gemm
