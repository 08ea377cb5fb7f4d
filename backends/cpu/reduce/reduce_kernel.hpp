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
    const float fill = kind_ == ReduceKind::Max ? -std::numeric_limits<float>::infinity() : 0.f;
    const float post = kind_ == ReduceKind::Mean ? 1.f / static_cast<float>(p.count) : 1.f;
    if (p.count == 0 || p.size.empty()) {  // nothing reduced or nothing to reduce over
      for (int64_t o = 0; o < p.outputs; ++o) out[o] = p.count == 0 ? fill * post : x[o] * post;
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

  std::string describe() const override {
    const char* k = kind_ == ReduceKind::Sum ? "sum" : kind_ == ReduceKind::Mean ? "mean" : "max";
    return std::string("reduce_") + k + "[" + arch_label<A>() + "]";
  }

 private:
  B combine(const B& a, const B& b) const { return kind_ == ReduceKind::Max ? vmath::maximum(a, b) : a + b; }

  // Reduce the runs base + roffs[i] + [0, len) to one value.
  float horizontal(const float* base, const std::vector<int64_t>& roffs, int64_t len) const {
    const float fill = kind_ == ReduceKind::Max ? -std::numeric_limits<float>::infinity() : 0.f;
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

  // out[0, cols) = reduction over r of base[roffs[r] + (0, cols)], cols <= kColumnBatches * W.
  void vertical(const float* base, const std::vector<int64_t>& roffs, float* out, int64_t cols, float post) const {
    const float fill = kind_ == ReduceKind::Max ? -std::numeric_limits<float>::infinity() : 0.f;
    B acc[kColumnBatches];
    for (auto& a : acc) a = B(fill);
    const int used = static_cast<int>((cols + W - 1) / W);
    for (int64_t r : roffs)
      for (int u = 0; u < kColumnBatches; ++u)
        if (u < used) acc[u] = combine(acc[u], B::load_unaligned(base + r + u * W));
    for (int u = 0; u < used; ++u) {
      const B v = acc[u] * B(post);
      const int64_t n = std::min<int64_t>(W, cols - u * W);
      if (n == W) v.store_unaligned(out + u * W);
      else store_tail<A>(out + u * W, v, static_cast<size_t>(n));
    }
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
