// SPDX-License-Identifier: Apache-2.0
// backends/cpu/gather/gather_kernel.hpp: the gather kernel over xsimd batches.
// Included only by the per-ISA translation units (gather_<isa>.cpp).
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/gather/gather.hpp"
#include "backends/cpu/rows/arch.hpp"
#include "backends/cpu/rows/simd.hpp"
#include "core/check.hpp"
#include "core/numeric/half.hpp"

namespace rungs::backend::cpu {
namespace gather_detail {

using Format = PrecisionPolicy::Format;

// W 16-bit values widened to f32 lanes.
template <class A>
vfloat<A> widen(const uint16_t* h, Format f) {
  using I = xsimd::batch<int32_t, A>;
  const I bits = I::load_unaligned(h);  // zero-extends each uint16 (values < 2^16 fit an int32)
  if (f == Format::BF16) return xsimd::bitwise_cast<float>(bits << 16);
  // IEEE half: shift exponent and mantissa into place and rescale by 2^112, which is exact for
  // normals and subnormals alike; Inf / NaN get the all-ones f32 exponent.
  const I magnitude = bits & I(0x7fff);
  const I sign = (bits & I(0x8000)) << 16;
  const vfloat<A> scaled = xsimd::bitwise_cast<float>(magnitude << 13) * vfloat<A>(0x1p112f);
  const I special = (magnitude << 13) | I(0x7f800000);
  const I out = xsimd::select(magnitude >= I(0x7c00), special, xsimd::bitwise_cast<int32_t>(scaled));
  return xsimd::bitwise_cast<float>(out | sign);
}

template <class A>
class GatherKernel final : public Kernel {
  using B = vfloat<A>;
  static constexpr int64_t W = B::size;

 public:
  // owned: the table is a Param kept here in a 16-bit `format`; otherwise it is read as f32 from
  // the input buffer (an f32 Param stays in the executor's param buffer: no second copy).
  GatherKernel(bool owned, Format format, int64_t rows, int64_t dim)
      : owned_(owned), format_(owned ? format : Format::F32), rows_(rows), dim_(dim) {}

  bool owns_weight(size_t input) const override { return owned_ && input == 0; }

  void set_weight(size_t input, std::span<const float> data) override {
    internal_check(owns_weight(input) && static_cast<int64_t>(data.size()) == rows_ * dim_,
                   "gather: set_weight with the wrong input or size");
    half_.assign(data.size() + kReadPastBytes / sizeof(uint16_t), 0);
    for (size_t i = 0; i < data.size(); ++i)
      half_[i] = format_ == Format::BF16 ? numeric::f32_to_bf16(data[i]) : numeric::f32_to_f16(data[i]);
    set_ = true;
  }

  std::vector<HeldWeight> held_weights() const override {  // the table's own half copy
    if (!owned_) return {};
    return {{this, static_cast<size_t>(rows_ * dim_) * sizeof(uint16_t)}};
  }

  void run(const RunContext& ctx, std::span<const TensorArg> in, float* out,
           const Dims& out_dims) const override {
    (void)out_dims;
    internal_check(!owned_ || set_, "gather: table param used before set_param");
    const int64_t v = in[0].dims[0], d = in[0].dims[1], n = in[1].dims.numel();
    const float* ids = in[1].data;
    ctx.parallel_for(n, grain_for(d), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        float* y = out + i * d;
        const auto row = gather_row(ids[i], v);
        if (!row) std::memset(y, 0, static_cast<size_t>(d) * sizeof(float));
        else if (format_ == Format::F32) copy_row(in[0].data + *row * d, y, d);
        else widen_row(half_.data() + *row * d, y, d);
      }
    });
  }

  std::string describe() const override {
    const char* f = format_ == Format::F32 ? "f32" : format_ == Format::BF16 ? "bf16" : "f16";
    return std::string("gather[") + arch_label<A>() + "](" + f + ")";
  }

 private:
  static void copy_row(const float* src, float* y, int64_t d) { std::memcpy(y, src, static_cast<size_t>(d) * 4); }

  void widen_row(const uint16_t* src, float* y, int64_t d) const {
    int64_t j = 0;
    for (; j + W <= d; j += W) widen<A>(src + j, format_).store_unaligned(y + j);
    if (j < d) store_tail<A>(y + j, widen<A>(src + j, format_), static_cast<size_t>(d - j));
  }

  bool owned_;
  Format format_;
  int64_t rows_, dim_;
  bool set_ = false;
  std::vector<uint16_t> half_;  // + slack: a row's tail is loaded as a whole batch
};

}  // namespace gather_detail

template <class Arch>
std::unique_ptr<Kernel> make_gather_for(const KernelParams& params) {
  using gather_detail::Format;
  const InputParams& table = params.inputs[0];
  const bool owned = table.source == Source::Param && params.policy.weights != Format::F32;
  return std::make_unique<gather_detail::GatherKernel<Arch>>(owned, params.policy.weights, table.dims[0],
                                                             table.dims[1]);
}

}  // namespace rungs::backend::cpu
