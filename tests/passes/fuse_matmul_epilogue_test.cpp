// SPDX-License-Identifier: Apache-2.0
// fuse_matmul_epilogue: matmul + bias + activation + residual become one fused_matmul, and only
// when the pattern really holds (single consumers, bias shapes, residual shapes).
#include <gtest/gtest.h>

#include <optional>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassEpilogue : public ::testing::TestWithParam<Device> {};

Value activate(Graph& g, Activation act, Value x) {
  switch (act) {
    case Activation::Relu: return g.relu(x);
    case Activation::Gelu: return g.gelu(x);
    case Activation::GeluTanh: return g.gelu_tanh(x);
    case Activation::Silu: return g.silu(x);
    case Activation::Tanh: return g.tanh(x);
    case Activation::Sigmoid: return g.sigmoid(x);
    case Activation::None: break;
  }
  return x;
}

// The IR text of the fused graph (dump of the epilogue pass).
std::string epilogue_ir(const FusionRuns& r) { return pass_report(r.fused, "fuse_matmul_epilogue").ir_after; }

TEST_P(PassEpilogue, BiasActivationResidualBecomeOneKernel) {
  Graph g;
  auto x = g.input("x", {2, 5, 7});
  auto w = g.param("w", {7, 3});
  auto b = g.param("b", {3});
  auto r = g.input("r", {2, 5, 3});
  // residual on the left of the add, bias on the right
  g.output("y", g.add(r, g.gelu(g.add(g.matmul(x, w), b))));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 3, true);
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.plain, "matmul"), 1u);
  EXPECT_EQ(runs.plain.kernels.size(), 4u) << kernel_ops(runs.plain);
  EXPECT_EQ(nodes_removed(runs.fused, "fuse_matmul_epilogue"), 3);
  EXPECT_NE(epilogue_ir(runs).find("epilogue=bias+gelu+residual"), std::string::npos) << epilogue_ir(runs);
  expect_same_outputs(runs);
}

TEST_P(PassEpilogue, EveryActivationAndBiasShape) {
  const Activation acts[] = {Activation::Relu, Activation::Gelu, Activation::GeluTanh,
                             Activation::Silu, Activation::Tanh, Activation::Sigmoid};
  const Shape bias_shapes[] = {{5}, {1, 5}, {1, 1, 5}};
  uint32_t seed = 11;
  for (Activation act : acts)
    for (const Shape& bs : bias_shapes) {
      SCOPED_TRACE(to_string(act) + " bias " + shape_to_string(bs));
      Graph g;
      auto x = g.input("x", {3, 1, 4});
      auto w = g.param("w", {4, 5});
      auto b = g.input("b", bs);
      g.output("y", activate(g, act, g.add(b, g.matmul(x, w))));  // bias on the left
      FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, seed++, true);
      EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
      EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u);
      EXPECT_EQ(nodes_removed(runs.fused, "fuse_matmul_epilogue"), 2);
      EXPECT_NE(epilogue_ir(runs).find("epilogue=bias+" + to_string(act) + ")"), std::string::npos) << epilogue_ir(runs);
      expect_same_outputs(runs);
    }
}

TEST_P(PassEpilogue, AnySubsetOfTheEpilogue) {
  struct Case {
    const char* name;
    bool bias, act, residual;
    const char* text;
  };
  const Case cases[] = {
      {"bias", true, false, false, "epilogue=bias+none)"},
      {"act", false, true, false, "epilogue=silu)"},
      {"residual", false, false, true, "epilogue=none+residual)"},
      {"bias+residual", true, false, true, "epilogue=bias+none+residual)"},
      {"act+residual", false, true, true, "epilogue=silu+residual)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    auto x = g.input("x", {2, 9});
    std::optional<Value> r;
    if (c.residual) r = g.input("r", {2, 6});
    auto w = g.param("w", {9, 6});
    Value y = g.matmul(x, w);
    if (c.bias) y = g.add(y, g.param("b", {6}));
    if (c.act) y = g.silu(y);
    if (c.residual) y = g.add(y, *r);
    g.output("y", y);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 5, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(nodes_removed(runs.fused, "fuse_matmul_epilogue"), int(c.bias) + int(c.act) + int(c.residual));
    EXPECT_NE(epilogue_ir(runs).find(c.text), std::string::npos) << epilogue_ir(runs);
    expect_same_outputs(runs);
  }
}

TEST_P(PassEpilogue, SecondConsumerBlocksFusion) {
  // The product itself is an output: nothing may be absorbed.
  Graph g;
  auto x = g.input("x", {4, 3});
  auto w = g.param("w", {3, 2});
  auto b = g.param("b", {2});
  auto y = g.matmul(x, w);
  g.output("y", g.relu(g.add(y, b)));
  g.output("product", y);
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "matmul"), 1u);
  EXPECT_FALSE(pass_report(runs.fused, "fuse_matmul_epilogue").changed);
  expect_same_outputs(runs);

  // The biased value has a second reader: the bias fuses, the activation stays on its own.
  Graph h;
  auto hx = h.input("x", {4, 3});
  auto hz = h.add(h.matmul(hx, h.param("w", {3, 2})), h.param("b", {2}));
  h.output("a", h.relu(hz));
  h.output("b", h.mul(hz, hz));
  FusionRuns runs2 = run_fused_and_plain(h, GetParam(), {}, 7, true);
  EXPECT_EQ(count_kernels(runs2.fused, "fused_matmul"), 1u) << kernel_ops(runs2.fused);
  EXPECT_EQ(count_kernels(runs2.fused, "relu"), 1u) << kernel_ops(runs2.fused);
  EXPECT_NE(epilogue_ir(runs2).find("epilogue=bias+none)"), std::string::npos) << epilogue_ir(runs2);
  expect_same_outputs(runs2);
}

TEST_P(PassEpilogue, FullShapeBiasIsAResidualNotABias) {
  // add(y, full) before an activation: a residual cannot come before the activation, so only the
  // add is absorbed (as a residual) and the relu stays a kernel of its own.
  Graph g;
  auto x = g.input("x", {4, 3});
  auto w = g.param("w", {3, 5});
  auto full = g.input("full", {4, 5});
  g.output("y", g.relu(g.add(g.matmul(x, w), full)));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 9, true);
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "relu"), 1u) << kernel_ops(runs.fused);
  EXPECT_NE(epilogue_ir(runs).find("epilogue=none+residual)"), std::string::npos) << epilogue_ir(runs);
  expect_same_outputs(runs);
}

TEST_P(PassEpilogue, ShapesOutsideThePatternAreLeftAlone) {
  // A "bias" that widens the result ([3, 4] + [2, 1, 4] -> [2, 3, 4]) and a residual that
  // broadcasts ([3, 4] + [3, 1]) are neither bias nor residual.
  Graph g;
  auto x = g.input("x", {3, 2});
  auto b = g.input("b", {2, 1, 4});
  auto c = g.input("c", {3, 1});
  auto w = g.param("w", {2, 4});
  g.output("wide", g.add(g.matmul(x, w), b));
  g.output("col", g.add(g.matmul(x, w), c));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "matmul"), 2u);
  EXPECT_EQ(count_kernels(runs.fused, "add"), 2u);
  expect_same_outputs(runs);
}

TEST_P(PassEpilogue, BatchedAndBroadcastMatmul) {
  // batch dims broadcast ([2, 1, 3, 4] x [5, 4, 6]) and a residual of the full output shape
  Graph g;
  auto a = g.input("a", {2, 1, 3, 4});
  auto b = g.input("b", {5, 4, 6});
  auto r = g.input("r", {2, 5, 3, 6});
  g.output("y", g.add(g.tanh(g.add(g.matmul(a, b), g.param("bias", {1, 6}))), r));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(nodes_removed(runs.fused, "fuse_matmul_epilogue"), 3);
  expect_same_outputs(runs);
}

// nn.Linear as PyTorch's ONNX exporter writes it: Add(bias, MatMul(x [B, S, K], W [K, N])), then the
// residual Add(y, x); a bias that varies over rows is a plain add, not an epilogue bias.
TEST_P(PassEpilogue, ExportedLinearOnA3dActivation) {
  for (bool residual : {false, true}) {
    SCOPED_TRACE(residual ? "bias + residual" : "bias");
    Graph g;
    auto x = g.input("x", {2, 5, 6});
    auto y = g.add(g.param("bias", {6}), g.matmul(x, g.param("weight", {6, 6})));
    if (residual) y = g.add(y, x);
    g.output("y", y);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 17, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_NE(epilogue_ir(runs).find(residual ? "epilogue=bias+none+residual)" : "epilogue=bias+none)"),
              std::string::npos)
        << epilogue_ir(runs);
    EXPECT_EQ(nodes_removed(runs.fused, "fuse_matmul_epilogue"), residual ? 2 : 1);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("a [S, N] bias varies over rows: a residual-shaped add is not a bias");
    Graph g;
    auto x = g.input("x", {2, 5, 6});
    g.output("y", g.add(g.param("rows", {5, 6}), g.matmul(x, g.param("weight", {6, 6}))));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 18, true);
    EXPECT_FALSE(pass_report(runs.fused, "fuse_matmul_epilogue").changed) << epilogue_ir(runs);
    EXPECT_EQ(count_kernels(runs.fused, "matmul"), 1u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
}

// ONNX Gemm with transB = 1 (PyTorch's Linear on 2-D input, as a pooler or classifier head):
// matmul(x, transpose(w)) with w a [N, K] param. The fused matmul reads w itself, packed
// transposed once, so no transpose kernel runs per call; with or without an epilogue.
TEST_P(PassEpilogue, TransposedParamIsPackedNotTransposedPerCall) {
  for (bool epilogue : {false, true}) {
    SCOPED_TRACE(epilogue ? "bias + tanh" : "no epilogue");
    Graph g;
    auto x = g.input("x", {5, 7});
    auto y = g.matmul(x, g.transpose(g.param("w", {3, 7}), {1, 0}));
    if (epilogue) y = g.tanh(g.add(y, g.param("b", {3})));
    g.output("y", y);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 21, true);
    EXPECT_EQ(count_kernels(runs.plain, "transpose"), 1u) << kernel_ops(runs.plain);
    EXPECT_EQ(count_kernels(runs.fused, "transpose"), 0u) << kernel_ops(runs.fused);
    ASSERT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(runs.fused.kernels[0].op, "fused_matmul");
    EXPECT_NE(epilogue_ir(runs).find(epilogue ? "epilogue=bias+tanh, b transposed)" : "epilogue=none, b transposed)"),
              std::string::npos)
        << epilogue_ir(runs);
    if (GetParam() == Device::Cpu) {
      const std::string& kernel = runs.fused.kernels[0].kernel;
      EXPECT_NE(kernel.find("+bT"), std::string::npos) << kernel;
      EXPECT_EQ(kernel.rfind("gemm[", 0), 0u) << kernel;  // packed, not a per-call batched pack
    }
    expect_same_outputs(runs);
  }
}

// One square param read both ways: the packed copies of w and of w transposed must stay two
// (the process-wide registry shares packings by data, so the layout has to tell them apart).
TEST_P(PassEpilogue, ParamReadPlainAndTransposedKeepsTwoPackings) {
  Graph g;
  auto x = g.input("x", {4, 6});
  auto w = g.param("w", {6, 6});
  g.output("plain", g.matmul(x, w));
  g.output("transposed", g.matmul(x, g.transpose(w, {1, 0})));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 23, true);
  EXPECT_EQ(count_kernels(runs.fused, "transpose"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "matmul"), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
  // And the two products differ (w is not symmetric), so a shared packing could not pass.
  EXPECT_GT(max_rel_error(runs.fused_out[0], runs.fused_out[1]), 1e-2);
}

// Only a param is read transposed: the transpose of an activation, or of a rank-3 param, stays.
TEST_P(PassEpilogue, TransposeOfAnActivationStays) {
  Graph g;
  auto x = g.input("x", {4, 6});
  auto v = g.input("v", {5, 6});
  auto w3 = g.param("w3", {2, 5, 6});
  g.output("activation", g.matmul(x, g.transpose(v, {1, 0})));
  g.output("rank3", g.matmul(g.input("x3", {2, 4, 6}), g.transpose(w3, {0, 2, 1})));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 25, true);
  EXPECT_EQ(count_kernels(runs.fused, "transpose"), 2u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 0u) << kernel_ops(runs.fused);
  EXPECT_FALSE(pass_report(runs.fused, "fuse_matmul_epilogue").changed);
  expect_same_outputs(runs);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassEpilogue, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
