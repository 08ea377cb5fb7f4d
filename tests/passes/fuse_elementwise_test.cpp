// SPDX-License-Identifier: Apache-2.0
// fuse_elementwise: single-consumer trees of elementwise ops become one fused_elementwise loop with
// broadcasting inputs, deduplicated registers and scalar immediates.
#include <gtest/gtest.h>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassElementwise : public ::testing::TestWithParam<Device> {};

std::string elementwise_ir(const FusionRuns& r) { return pass_report(r.fused, "fuse_elementwise").ir_after; }

TEST_P(PassElementwise, BroadcastingChainBecomesOneLoop) {
  Graph g;
  auto x = g.input("x", {3, 1, 5});
  auto b = g.input("b", {4, 1});
  auto c = g.input("c", {5});
  auto half = g.constant({0.5f}, {1});
  auto y = g.tanh(g.mul(g.add(x, b), half));              // [3, 4, 5]
  auto z = g.sub(g.exp(g.neg(y)), c);     // broadcast on the last axis
  g.output("z", g.maximum(z, g.constant({-0.25f}, {1, 1, 1})));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 31, true);
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_elementwise"), 1u);
  EXPECT_EQ(runs.plain.kernels.size(), 7u) << kernel_ops(runs.plain);
  // 7 ops become 1, and both scalar constants become immediates
  EXPECT_EQ(nodes_removed(runs.fused, "fuse_elementwise"), 6 + 2);
  EXPECT_EQ(runs.fused.kernels[0].shape, (Shape{3, 4, 5}));
  const std::string ir = elementwise_ir(runs);
  EXPECT_NE(ir.find("mul(r3, 0.5)"), std::string::npos) << ir;
  EXPECT_NE(ir.find(", -0.25)"), std::string::npos) << ir;
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, MaskAndActivationPatternsWithTheNewOpsBecomeOneLoop) {
  // What exporters write around a mask and an erf GELU: where(not(mask == 1), -1e4, 0) added to
  // scores, x * 0.5 * (1 + erf(x / sqrt 2)), a comparison and pow: 13 ops, one loop.
  Graph g;
  auto x = g.input("x", {2, 3, 8});
  auto mask = g.input("mask", {2, 1, 8});
  auto one = g.constant({1.f}, {1});
  auto additive = g.where(g.logical_not(g.equal(mask, one)), g.constant({-1e4f}, {1}), g.constant({0.f}, {1}));
  auto erf_gelu = g.mul(g.mul(x, g.constant({0.5f}, {1})),
                        g.add(one, g.erf(g.div(x, g.constant({1.41421356f}, {1})))));
  auto y = g.add(g.add(erf_gelu, additive), g.pow(g.sin(x), g.constant({2.f}, {1})));
  g.output("y", g.sub(y, g.less_equal(g.cos(x), g.constant({0.f}, {1}))));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 41, true);
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_elementwise"), 1u);
  EXPECT_EQ(runs.plain.kernels.size(), 15u) << kernel_ops(runs.plain);
  const std::string ir = elementwise_ir(runs);
  EXPECT_NE(ir.find("=where(r"), std::string::npos) << ir;
  EXPECT_NE(ir.find("pow(r"), std::string::npos) << ir;
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, RepeatedInputsShareARegister) {
  Graph g;
  auto x = g.input("x", {7});
  auto sq = g.mul(x, x);
  auto d = g.sub(x, g.abs(x));
  g.output("y", g.add(sq, d));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 3, true);
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  const std::string ir = elementwise_ir(runs);
  EXPECT_NE(ir.find("fused_elementwise(%0, {r1=mul(r0, r0)"), std::string::npos) << ir;
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, TreesWithSeveralInputs) {
  Graph g;
  auto a = g.input("a", {2, 3});
  auto b = g.input("b", {3});
  auto c = g.input("c", {2, 1});
  auto d = g.input("d", {1});
  g.output("y", g.minimum(g.mul(a, b), g.div(c, g.add(g.abs(d), g.constant({1.f}, {1})))));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 5, true);
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(nodes_removed(runs.fused, "fuse_elementwise"), 5);  // 5 ops -> 1, the constant 1 -> immediate
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, ImmediateOnTheLeft) {
  Graph g;
  auto x = g.input("x", {4, 3});
  g.output("y", g.div(g.constant({1.f}, {1}), g.add(x, g.constant({2.f}, {1}))));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 5, true);
  const std::string ir = elementwise_ir(runs);
  EXPECT_NE(ir.find("div(1, r1)"), std::string::npos) << ir;
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, LoneOpsStayPrimitiveUnlessTheyGainAnImmediate) {
  Graph g;
  auto x = g.input("x", {5});
  g.output("relu", g.relu(x));
  g.output("add", g.add(x, x));
  g.output("scaled", g.mul(x, g.constant({3.f}, {1})));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "relu"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "add"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_elementwise"), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, SharedValuesSplitTrees) {
  // t feeds two trees, so it is computed once (as its own tree) and read by both.
  Graph g;
  auto x = g.input("x", {3, 4});
  auto y = g.input("y", {4});
  auto t = g.exp(g.neg(x));
  g.output("u", g.relu(g.add(t, y)));
  g.output("v", g.mul(t, g.constant({2.f}, {1})));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_elementwise"), 3u) << kernel_ops(runs.fused);
  EXPECT_EQ(runs.fused.kernels.size(), 3u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, StopsAtReductionsAndLeavesEpiloguesAlone) {
  // relu is absorbed by the matmul epilogue; the scale, shift and mask after it form one loop,
  // which stops at the reduction.
  Graph g;
  auto x = g.input("x", {3, 4});
  auto shift = g.input("shift", {5});
  auto m = g.input("m", {3, 1});
  auto w = g.param("w", {4, 5});
  auto h = g.relu(g.add(g.matmul(x, w), g.param("b", {5})));
  auto s = g.add(g.mul(h, g.constant({0.5f}, {1})), shift);
  g.output("pooled", g.sum(g.mul(s, m), {0}));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_elementwise"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "relu"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "sum"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(runs.fused.kernels.size(), 3u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

TEST_P(PassElementwise, MaskedMeanPoolFusesTheDivisionChain) {
  HirModule m;
  auto x = m.input("x", {2, 5, 3});
  auto mask = m.input("mask", {2, 5});
  m.output("pooled", m.mean_pool(x, mask));
  InputMap fixed{{"mask", {1, 1, 1, 0, 0, 0, 0, 0, 0, 0}}};  // row 1 fully masked: pools to 0
  FusionRuns runs = run_fused_and_plain(m.lower(), GetParam(), fixed);
  EXPECT_EQ(count_kernels(runs.fused, "fused_elementwise"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "maximum"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "div"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "mul"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "sum"), 2u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
  for (int i = 3; i < 6; ++i) EXPECT_EQ(runs.fused_out[0][i], 0.f);
}

TEST_P(PassElementwise, LongChain) {
  Graph g;
  auto x = g.input("x", {1, 33});
  Value y = x;
  for (int i = 0; i < 200; ++i) y = (i % 2) ? g.tanh(y) : g.add(y, x);
  g.output("y", y);
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassElementwise, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
