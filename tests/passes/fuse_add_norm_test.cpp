// SPDX-License-Identifier: Apache-2.0
// fuse_add_norm: add(a, b) read only by a layer/rms norm becomes one fused_add_norm.
#include <gtest/gtest.h>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassAddNorm : public ::testing::TestWithParam<Device> {};

TEST_P(PassAddNorm, LayerNormAndRmsNorm) {
  for (bool rms : {false, true}) {
    SCOPED_TRACE(rms ? "rms_norm" : "layer_norm");
    Graph g;
    auto a = g.input("a", {2, 3, 7});
    auto b = g.input("b", {2, 3, 7});
    auto gamma = g.param("gamma", {7});
    auto s = g.add(a, b);
    g.output("y", rms ? g.rms_norm(s, gamma, 1e-3f) : g.layer_norm(s, gamma, g.param("beta", {7}), 1e-3f));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 21, true);
    EXPECT_EQ(count_kernels(runs.fused, "fused_add_norm"), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(runs.plain.kernels.size(), 2u) << kernel_ops(runs.plain);
    EXPECT_EQ(nodes_removed(runs.fused, "fuse_add_norm"), 1);
    const std::string ir = pass_report(runs.fused, "fuse_add_norm").ir_after;
    EXPECT_NE(ir.find(rms ? "fused_add_norm.rms_norm(" : "fused_add_norm.layer_norm("), std::string::npos) << ir;
    EXPECT_NE(ir.find("eps=0.001"), std::string::npos) << ir;
    expect_same_outputs(runs);
  }
}

TEST_P(PassAddNorm, SingleRow) {
  Graph g;
  auto a = g.input("a", {1, 1});
  auto b = g.input("b", {1, 1});
  g.output("y", g.layer_norm(g.add(b, a), g.param("gamma", {1}), g.param("beta", {1})));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_add_norm"), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

TEST_P(PassAddNorm, BroadcastingAddIsLeftAlone) {
  Graph g;
  auto a = g.input("a", {4, 5});
  auto b = g.input("b", {5});
  g.output("y", g.rms_norm(g.add(a, b), g.param("gamma", {5})));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_add_norm"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "rms_norm"), 1u);
  expect_same_outputs(runs);
}

TEST_P(PassAddNorm, SecondConsumerOfTheSumBlocksFusion) {
  // the pre-norm residual stream: the sum feeds the norm and the next residual add
  Graph g;
  auto a = g.input("a", {3, 6});
  auto b = g.input("b", {3, 6});
  auto s = g.add(a, b);
  auto n = g.layer_norm(s, g.param("gamma", {6}), g.param("beta", {6}));
  g.output("y", g.add(s, n));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_add_norm"), 0u) << kernel_ops(runs.fused);
  EXPECT_FALSE(pass_report(runs.fused, "fuse_add_norm").changed);
  expect_same_outputs(runs);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassAddNorm, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
