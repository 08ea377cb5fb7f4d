// SPDX-License-Identifier: Apache-2.0
// backends/cpu/softmax/softmax_kernel.hpp: the softmax kernel over xsimd batches.
// Included only by the per-ISA translation units (softmax_<isa>.cpp).
#pragma once

#include <limits>
#include <string>

#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/simd.hpp"
#include "backends/cpu/rows/vmath.hpp"
#include "backends/cpu/softmax/softmax.hpp"

namespace rungs::backend::cpu {
namespace softmax_detail {

// One contiguous row of n floats.
template <class A>
void softmax_row(const float* x, float* y, size_t n) {
  using B = vfloat<A>;
  constexpr size_t W = B::size;
  const B m(row_max<A>(x, n));
  B sum(0.f), tail(0.f);
  size_t i = 0;
  for (; i + W <= n; i += W) {
    B e = vmath::exp_nonpositive(B::load_unaligned(x + i) - m);
    e.store_unaligned(y + i);
    sum += e;
  }
  const size_t rest = n - i;
  if (rest) {
    tail = keep_first<A>(vmath::exp_nonpositive(B::load_unaligned(x + i) - m), rest, 0.f);
    sum += tail;
  }
  const B inv(1.f / xsimd::reduce_add(sum));
  for (i = 0; i + W <= n; i += W) (B::load_unaligned(y + i) * inv).store_unaligned(y + i);
  if (rest) store_tail<A>(y + i, tail * inv, rest);  // the tail never re-reads y past the row
}

// Columns [c, c + cols) (cols <= W) of one [n, inner] slab: strided along the axis.
template <class A>
void softmax_columns(const float* x, float* y, int64_t n, int64_t inner, size_t cols) {
  using B = vfloat<A>;
  B m(-std::numeric_limits<float>::infinity());
  for (int64_t a = 0; a < n; ++a) m = vmath::maximum(m, B::load_unaligned(x + a * inner));
  B sum(0.f);
  for (int64_t a = 0; a < n; ++a) sum += vmath::exp_nonpositive(B::load_unaligned(x + a * inner) - m);
  const B inv = B(1.f) / sum;
  for (int64_t a = 0; a < n; ++a) {
    // exp recomputed rather than re-read from y: y past `cols` may belong to another thread.
    const B r = vmath::exp_nonpositive(B::load_unaligned(x + a * inner) - m) * inv;
    if (cols == B::size) r.store_unaligned(y + a * inner);
    else store_tail<A>(y + a * inner, r, cols);
  }
}

template <class A>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(int axis) : axis_(axis) {}

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    const float* x = in[0].data;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis_; ++k) outer *= out_dims[k];
    for (int k = axis_ + 1; k < out_dims.rank; ++k) inner *= out_dims[k];
    const int64_t n = out_dims[axis_];
    if (outer * n * inner == 0) return;
    if (inner == 1) {
      ctx.parallel_for(outer, grain_for(3 * n), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) softmax_row<A>(x + r * n, out + r * n, static_cast<size_t>(n));
      });
      return;
    }
    constexpr int64_t W = vfloat<A>::size;
    const int64_t blocks = (inner + W - 1) / W;
    ctx.parallel_for(outer * blocks, grain_for(3 * n * W), [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t o = u / blocks, c = (u % blocks) * W;
        const int64_t off = o * n * inner + c;
        softmax_columns<A>(x + off, out + off, n, inner, static_cast<size_t>(std::min(W, inner - c)));
      }
    });
  }

  std::string describe() const override {
    return std::string("softmax[") + arch_label<A>() + "](axis " + std::to_string(axis_) + ")";
  }

 private:
  int axis_;
};

}  // namespace softmax_detail

template <class Arch>
std::unique_ptr<Kernel> make_softmax_for(const KernelParams& params) {
  return std::make_unique<softmax_detail::SoftmaxKernel<Arch>>(params.softmax.axis);
}

}  // namespace rungs::backend::cpu
