// SPDX-License-Identifier: Apache-2.0
// backends/cpu/norm/norm_kernel.hpp: the norm kernel over xsimd batches.
// Included only by the per-ISA translation units (norm_<isa>.cpp).
#pragma once

#include <string>

#include "backends/cpu/norm/norm.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/simd.hpp"

namespace rungs::backend::cpu {
namespace norm_detail {

// One row: `load(i)` yields the row's batch at i (x, or a + b), tail lanes unused.
template <class A, class Load>
void norm_row(const NormParams& p, Load load, const float* gamma, const float* beta, float* y, size_t n) {
  using B = vfloat<A>;
  constexpr size_t W = B::size;
  const size_t full = n - n % W, rest = n - full;
  // The mean as shift + m, kept apart: centred values are (x - shift) - m.
  B shift(0.f), m(0.f);
  if (!p.rms) {
    // The mean is taken of x - x[0] (shifted data): a constant row gives exactly x[0], so its
    // centred values are exactly 0 and the output exactly beta. Summing x itself rounds the mean
    // off the row's value, and the normalisation then multiplies that rounding by 1/sqrt(eps)
    // (about 316): two chained layer norms over a constant row came out 0.4% off the
    // reference (found by fuzz_api). For the same reason the small part m is never added to the
    // shift: in [-7, -7, -7, -7 - 1ulp, -7, -7] the mean -7 - ulp/6 rounds to -7, the centred
    // values would no longer sum to zero, and a following sum over the row came out 1e-4 off
    // (fuzz_api again). (x - shift) is exact for values near the shift, and m is small.
    alignas(64) float first[W];
    load(0).store_aligned(first);
    shift = B(first[0]);
    B s(0.f);
    for (size_t i = 0; i < full; i += W) s += load(i) - shift;
    if (rest) s += keep_first<A>(load(full) - shift, rest, 0.f);
    m = B(xsimd::reduce_add(s) / static_cast<float>(n));
  }
  auto centred = [&](B x) { return (x - shift) - m; };
  B sq(0.f);
  for (size_t i = 0; i < full; i += W) {
    const B c = centred(load(i));
    sq = xsimd::fma(c, c, sq);
  }
  if (rest) {
    const B c = keep_first<A>(centred(load(full)), rest, 0.f);
    sq = xsimd::fma(c, c, sq);
  }
  const B inv(1.f / std::sqrt(xsimd::reduce_add(sq) / static_cast<float>(n) + p.eps));
  auto out = [&](size_t i) {
    const B scaled = centred(load(i)) * inv * B::load_unaligned(gamma + i);
    return beta ? scaled + B::load_unaligned(beta + i) : scaled;
  };
  for (size_t i = 0; i < full; i += W) out(i).store_unaligned(y + i);
  if (rest) store_tail<A>(y + full, out(full), rest);
}

template <class A>
class NormKernel final : public Kernel {
 public:
  explicit NormKernel(NormParams p) : p_(p) {}

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    using B = vfloat<A>;
    const int64_t rows = out_dims.rows(), d = out_dims.last();
    if (rows * d == 0) return;
    const size_t g = p_.add ? 2 : 1;
    const float* gamma = in[g].data;
    const float* beta = p_.has_beta ? in[g + 1].data : nullptr;
    const float* a = in[0].data;
    const float* b = p_.add ? in[1].data : nullptr;
    ctx.parallel_for(rows, grain_for(3 * d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* ar = a + r * d;
        float* y = out + r * d;
        if (b) {
          const float* br = b + r * d;
          norm_row<A>(p_, [&](size_t i) { return B::load_unaligned(ar + i) + B::load_unaligned(br + i); },
                      gamma, beta, y, static_cast<size_t>(d));
        } else {
          norm_row<A>(p_, [&](size_t i) { return B::load_unaligned(ar + i); }, gamma, beta, y,
                      static_cast<size_t>(d));
        }
      }
    });
  }

  std::string describe() const override {
    return std::string(p_.add ? "add_" : "") + (p_.rms ? "rms_norm[" : "layer_norm[") + arch_label<A>() + "]";
  }

 private:
  NormParams p_;
};

}  // namespace norm_detail

template <class Arch>
std::unique_ptr<Kernel> make_norm_for(const KernelParams& params) {
  return std::make_unique<norm_detail::NormKernel<Arch>>(params.norm);
}

}  // namespace rungs::backend::cpu
