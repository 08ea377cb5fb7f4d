// SPDX-License-Identifier: Apache-2.0
// fuse_mean_pool: sentence-transformers' masked mean pooling as an ONNX import writes it (the mask
// expanded to [B, S, D] by an add of zeros, Clip(min) as maximum) becomes HirModule::mean_pool's
// form (the [B, S, 1] mask broadcast, a [B, 1] count); near misses stay as they are.
#include <gtest/gtest.h>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassMeanPool : public ::testing::TestWithParam<Device> {};

struct PoolSpell {
  bool ones = false;      // expand as mul by ones instead of add of zeros
  bool swapped = false;   // e * x, maximum(c, n)
  float floor = 1e-9f;    // Clip's min
  int count_axis = 1;     // the count's axis (a near miss when not 1)
  bool e_shared = false;  // the expanded mask is also an output
  float fill = 0.f;       // the expand constant (a near miss when not 0 for add)
};

// x [2, 4, 6], mask [2, 4]: sum(x * e, 1) / clamp(sum(e, 1), min)
Graph exported_pool(const PoolSpell& s) {
  const int64_t B = 2, S = 4, D = 6;
  Graph g;
  auto x = g.input("x", {B, S, D});
  auto mask = g.input("mask", {B, S});
  auto m = g.reshape(mask, {B, S, 1});  // Unsqueeze(-1)
  auto fill = g.constant(std::vector<float>(B * S * D, s.ones ? 1.f : s.fill), {B, S, D});
  auto e = s.ones ? g.mul(m, fill) : g.add(m, fill);  // Expand, Cast
  auto total = g.sum(s.swapped ? g.mul(e, x) : g.mul(x, e), {1});
  auto n = g.sum(e, {s.count_axis});
  auto c = g.constant({s.floor}, {});
  auto safe = s.swapped ? g.maximum(c, n) : g.maximum(n, c);
  g.output("pooled", g.div(total, safe));
  if (s.e_shared) g.output("e", e);
  return g;
}

const InputMap kMask{{"mask", {1, 1, 1, 0, 1, 0, 0, 0}}};

TEST_P(PassMeanPool, ExportedPoolingBecomesTheBroadcastForm) {
  PoolSpell add_zeros, mul_ones, swapped;
  mul_ones.ones = true;
  swapped.swapped = true;
  for (const auto& [name, s] : {std::pair{"add zeros", add_zeros}, {"mul ones", mul_ones}, {"swapped", swapped}}) {
    SCOPED_TRACE(name);
    FusionRuns runs = run_fused_and_plain(exported_pool(s), GetParam(), kMask, 12, true);
    const PassReport& p = pass_report(runs.fused, "fuse_mean_pool");
    EXPECT_TRUE(p.changed);
    // x, mask, reshape, fill, e, mul, sum, sum, c, maximum, div -> without fill and e
    EXPECT_EQ(p.nodes_before, 11u);
    EXPECT_EQ(p.nodes_after, 9u) << p.ir_after;
    // the count is [2, 1] now: no [B, S, D] mask is made and none is stored
    EXPECT_NE(p.ir_after.find("sum(%2, axes=[1]) : [2, 1]"), std::string::npos) << p.ir_after;
    for (const KernelReport& k : runs.fused.kernels) EXPECT_NE(k.op, "add") << kernel_ops(runs.fused);
    EXPECT_LT(runs.fused.kernels.size(), runs.plain.kernels.size()) << kernel_ops(runs.fused);
    expect_same_outputs(runs, 1e-6);
  }
}

TEST_P(PassMeanPool, AllMaskedRowPoolsToZero) {
  FusionRuns runs = run_fused_and_plain(exported_pool({}), GetParam(), {{"mask", {1, 1, 0, 0, 0, 0, 0, 0}}}, 13);
  EXPECT_TRUE(pass_report(runs.fused, "fuse_mean_pool").changed);
  for (size_t i = 6; i < 12; ++i) EXPECT_EQ(runs.fused_out[0][i], 0.f);
  expect_same_outputs(runs, 1e-6);
}

TEST_P(PassMeanPool, NearMissesAreNotRewritten) {
  PoolSpell axis, shared, nonzero;
  axis.count_axis = 2;
  shared.e_shared = true;
  nonzero.fill = 0.5f;
  const std::pair<const char*, PoolSpell> cases[] = {
      {"count over another axis", axis},
      {"expanded mask also an output", shared},
      {"expand constant not zeros", nonzero},
  };
  for (const auto& [name, s] : cases) {
    SCOPED_TRACE(name);
    Graph g;
    if (s.count_axis == 2) {
      // sum(e, 2) is [B, S]; keep the graph valid by pooling over S = D
      const int64_t B = 2, S = 3;
      auto x = g.input("x", {B, S, S});
      auto m = g.reshape(g.input("mask", {B, S}), {B, S, 1});
      auto e = g.add(m, g.constant(std::vector<float>(B * S * S, 0.f), {B, S, S}));
      g.output("pooled", g.div(g.sum(g.mul(x, e), {1}), g.maximum(g.sum(e, {2}), g.constant({1e-9f}, {}))));
      FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"mask", {1, 1, 1, 1, 1, 1}}});
      EXPECT_FALSE(pass_report(runs.fused, "fuse_mean_pool").changed);
      expect_same_outputs(runs, 1e-6);
      continue;
    }
    FusionRuns runs = run_fused_and_plain(exported_pool(s), GetParam(), kMask, 14);
    EXPECT_FALSE(pass_report(runs.fused, "fuse_mean_pool").changed);
    expect_same_outputs(runs, 1e-6);
  }
}

TEST_P(PassMeanPool, HirModuleFormIsLeftAsItIs) {
  HirModule m;
  auto x = m.input("x", {2, 4, 6});
  m.output("pooled", m.mean_pool(x, m.input("mask", {2, 4})));
  FusionRuns runs = run_fused_and_plain(m.lower(), GetParam(), kMask);
  EXPECT_FALSE(pass_report(runs.fused, "fuse_mean_pool").changed);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassMeanPool, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
