// SPDX-License-Identifier: Apache-2.0
// PrecisionPolicy: bf16 / f16 weights against f32, with documented error bounds (docs/precision.md).
#include <gtest/gtest.h>

#include "core/numeric/half.hpp"
#include "test_models.hpp"

namespace {

using namespace rungs;
using rungs::testing::max_rel_error;

TEST(Precision, HalfConversionsRoundToNearestEven) {
  using namespace rungs::numeric;
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(f16_to_f32(f32_to_f16(1.0f)), 1.0f);
  EXPECT_EQ(f16_to_f32(f32_to_f16(65504.f)), 65504.f);
  EXPECT_TRUE(std::isinf(f16_to_f32(f32_to_f16(1e6f))));
  EXPECT_EQ(f16_to_f32(f32_to_f16(5.960464477539063e-08f)), 5.960464477539063e-08f);  // smallest subnormal
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
  // 1 + 2^-8 is halfway between two bf16 values: ties to even (1.0).
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f + 1.0f / 256)), 1.0f);
  for (float x : {0.1f, -3.7f, 1234.5f, 1e-3f}) {
    EXPECT_NEAR(bf16_to_f32(f32_to_bf16(x)), x, std::fabs(x) / 256);
    EXPECT_NEAR(f16_to_f32(f32_to_f16(x)), x, std::fabs(x) / 2048);
  }
}

TEST(Precision, PolicyNames) {
  EXPECT_EQ(PrecisionPolicy::f32().name(), "f32");
  EXPECT_EQ(PrecisionPolicy::bf16_weights().name(), "bf16_weights");
  EXPECT_EQ(PrecisionPolicy::f16_weights().name(), "f16_weights");
}

// The encoder's embedding: bf16 within 2e-2, f16 within 3e-3 of f32 (relative to max(1, |x|)).
TEST(Precision, EncoderAccuracyBounds) {
  auto enc = rungs::testing::make_encoder(16);
  ParamMap params = rungs::testing::random_params(enc, 9);
  auto [ids, mask] = rungs::testing::encoder_inputs(12, 16, 50, 4);
  std::vector<NamedInput> in = {{"ids", ids}, {"mask", mask}};
  for (Device d : {Device::Reference, Device::Cpu}) {
    auto run = [&](PrecisionPolicy p) {
      CompiledGraph c = Session(d).with_policy(p).compile_hir(enc);
      EXPECT_EQ(c.report().policy, p.name());
      for (const auto& [n, v] : params) c.set_param(n, v);
      return c.run(in)[1];
    };
    auto f32 = run(PrecisionPolicy::f32());
    double e_bf16 = max_rel_error(run(PrecisionPolicy::bf16_weights()), f32);
    double e_f16 = max_rel_error(run(PrecisionPolicy::f16_weights()), f32);
    EXPECT_LT(e_bf16, 2e-2) << to_string(d);
    EXPECT_LT(e_f16, 3e-3) << to_string(d);
    EXPECT_GT(e_bf16, 0.0) << "bf16 rounding should change something";
    EXPECT_LT(e_f16, e_bf16) << "f16 keeps more mantissa bits than bf16";
  }
}

TEST(Precision, OptionsPolicyOverridesSession) {
  Graph g;
  auto x = g.input("x", {1, 2});
  g.output("y", g.matmul(x, g.param("w", {2, 1})));
  CompileOptions opt;
  opt.policy = PrecisionPolicy::bf16_weights();
  CompiledGraph c = Session(Device::Reference).with_policy(PrecisionPolicy::f16_weights()).compile(g, opt);
  EXPECT_EQ(c.report().policy, "bf16_weights");
  c.set_param("w", std::vector<float>{1.0f + 1.0f / 128 + 1.0f / 1024, 0.f});  // not representable in bf16
  std::vector<float> xv = {1.f, 0.f};
  NamedInput in{"x", xv};
  EXPECT_EQ(c.run({&in, 1})[0][0], 1.0f + 1.0f / 128);
}

// On Device::Cpu, weights feeding a matmul or gather are stored in the 16-bit format.
TEST(Precision, HalfWeightsHalveParamMemoryOnCpu) {
  auto enc = rungs::testing::make_encoder(16);
  ParamMap params = rungs::testing::random_params(enc, 9);
  auto bytes = [&](PrecisionPolicy p) {
    CompiledGraph c = Session(Device::Cpu).with_policy(p).compile_hir(enc);
    for (const auto& [n, v] : params) c.set_param(n, v);
    return c.report().param_bytes;
  };
  size_t f32 = bytes(PrecisionPolicy::f32()), bf16 = bytes(PrecisionPolicy::bf16_weights());
  size_t f16 = bytes(PrecisionPolicy::f16_weights());
  EXPECT_GT(f32, 0u);
  EXPECT_LT(bf16, f32 * 6 / 10) << "bf16 " << bf16 << " vs f32 " << f32;
  EXPECT_LT(f16, f32 * 6 / 10) << "f16 " << f16 << " vs f32 " << f32;
}

}  // namespace
