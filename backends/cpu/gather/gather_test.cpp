// SPDX-License-Identifier: Apache-2.0
// Gather kernel vs its scalar reference, on every ISA this machine has, for every weight format.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cpu/gather/gather.hpp"
#include "backends/cpu/rows/testing.hpp"
#include "core/numeric/half.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;
using Format = PrecisionPolicy::Format;

OneOp gather_op(int64_t v, int64_t d, const Shape& ids, Source table) {
  Shape out = ids;
  out.push_back(d);
  return OneOp(ops::Op::Gather, out, {{v, d}, ids}, {table, Source::Activation});
}

PrecisionPolicy policy_of(Format f) { return PrecisionPolicy{f}; }

// The table as the kernel stores it: rounded through the format.
Tensor rounded(const Tensor& t, Format f) {
  Tensor r = t;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (f == Format::BF16) r.data[i] = numeric::bf16_to_f32(numeric::f32_to_bf16(t.data[i]));
    if (f == Format::F16) r.data[i] = numeric::f16_to_f32(numeric::f32_to_f16(t.data[i]));
  }
  return r;
}

// Ids: in range, rounding cases, negative, past the end, NaN.
Tensor ids_for(const Shape& s, int64_t v) {
  Tensor ids = make_tensor(s, 9, -0.4f, float(v) - 0.6f);
  const float specials[] = {-1.f, float(v), float(v) + 7.f, std::nanf(""), 2.4f, 2.6f, 0.5f, -0.5f};
  for (size_t i = 0; i < std::size(specials) && int64_t(i) < ids.numel(); ++i) ids.data[i * 3 % ids.numel()] = specials[i];
  return ids;
}

void expect_gather(Isa isa, Format f, int64_t v, int64_t d, const Shape& ids_shape, int threads = 1) {
  SCOPED_TRACE(std::string(isa_name(isa)) + " format " + std::to_string(int(f)) + " d " + std::to_string(d));
  OneOp g = gather_op(v, d, ids_shape, Source::Param);
  auto k = make_gather_kernel(g.spec(threads, policy_of(f)), isa);
  ASSERT_NE(k, nullptr);
  Tensor table = make_tensor({v, d}, 2, -100.f, 100.f);
  Tensor ids = ids_for(ids_shape, v);
  const bool owned = k->owns_weight(0);
  EXPECT_EQ(owned, f != Format::F32);
  TensorArg targ = table.arg();
  if (owned) {
    k->set_weight(0, std::span<const float>(table.data.data(), table.numel()));
    ASSERT_EQ(k->held_weights().size(), 1u);
    EXPECT_EQ(k->held_weights()[0].bytes, size_t(v * d * 2));
    targ.data = nullptr;  // as the executor does for an owned weight
  }
  Shape out_shape = ids_shape;
  out_shape.push_back(d);
  const auto got = run(*k, {targ, ids.arg()}, Dims::of(out_shape), threads);
  const Tensor want_table = rounded(table, f);
  std::vector<float> want(got.size());
  gather_reference(want_table.arg(), ids.arg(), want.data());
  ASSERT_EQ(got, want);
}

TEST(GatherKernel, EveryFormatAroundTheBatchWidth) {
  ASSERT_FALSE(vector_isas().empty());
  for (Isa isa : vector_isas())
    for (Format f : {Format::F32, Format::BF16, Format::F16})
      for (int64_t d : tile_sizes(lanes(isa))) expect_gather(isa, f, 11, d, {3, 5});
}

TEST(GatherKernel, OutOfRangeAndNanIdsGiveZeroRows) {
  for (Isa isa : vector_isas()) {
    OneOp g = gather_op(4, 3, {5}, Source::Activation);
    auto k = make_gather_kernel(g.spec(), isa);
    Tensor table = make_tensor({4, 3}, 1, 1.f, 2.f);  // no zeros in the table
    Tensor ids = make_tensor({5}, 1);
    const float id_values[] = {-1.f, 4.f, std::nanf(""), 3.4f, -0.49f};
    std::copy(std::begin(id_values), std::end(id_values), ids.data.begin());
    const auto got = run(*k, {table.arg(), ids.arg()}, Dims::of({5, 3}));
    for (int j = 0; j < 9; ++j) EXPECT_EQ(got[j], 0.f) << j;
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[9 + j], table.data[9 + j]);  // 3.4 -> row 3
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[12 + j], table.data[j]);     // -0.49 -> row 0
  }
}

TEST(GatherKernel, HalfWideningKeepsSpecialValues) {
  // Subnormals, the largest half, overflow to Inf, Inf, NaN, signed zero: widened bit-exactly.
  const float values[] = {6e-8f, -3e-6f, 65504.f, 1e6f, INFINITY, -INFINITY, std::nanf(""), -0.f, 1.f / 3, 0.1f,
                          -2.5f, 1e-4f, 7.f, 1e-30f, -65504.f, 0.f, 42.f};
  const int64_t d = std::size(values);
  for (Isa isa : vector_isas())
    for (Format f : {Format::BF16, Format::F16}) {
      OneOp g = gather_op(1, d, {1}, Source::Param);
      auto k = make_gather_kernel(g.spec(1, policy_of(f)), isa);
      k->set_weight(0, values);
      Tensor ids = make_tensor({1}, 1);
      ids.data[0] = 0.f;
      const auto got = run(*k, {TensorArg{nullptr, Dims::of({1, d})}, ids.arg()}, Dims::of({1, d}));
      for (int64_t j = 0; j < d; ++j) {
        const float want = f == Format::BF16 ? numeric::bf16_to_f32(numeric::f32_to_bf16(values[j]))
                                             : numeric::f16_to_f32(numeric::f32_to_f16(values[j]));
        uint32_t a, b;
        std::memcpy(&a, &got[j], 4);
        std::memcpy(&b, &want, 4);
        if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[j])) << j;
        else EXPECT_EQ(a, b) << "value " << values[j] << " format " << int(f);
      }
    }
}

TEST(GatherKernel, LadderExtentsAndThreads) {
  for (Isa isa : vector_isas()) {
    for (int64_t s : ladder_extents()) expect_gather(isa, Format::BF16, 1000, 96, {2, s});
    expect_gather(isa, Format::F16, 5000, 768, {4, 256}, 3);
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
