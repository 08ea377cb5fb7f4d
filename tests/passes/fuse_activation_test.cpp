// SPDX-License-Identifier: Apache-2.0
// fuse_activation: GELU (erf and tanh forms) and SiLU as PyTorch's ONNX
// exporter writes them become one activation node, which the matmul epilogue then absorbs; near
// misses (another constant, a shared intermediate) stay primitive and compute the same values.
#include <gtest/gtest.h>

#include <functional>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassActivation : public ::testing::TestWithParam<Device> {};

using Spelling = std::function<Value(Graph&, Value)>;

Value c(Graph& g, float v) { return g.constant({v}, {}); }

// F.gelu(x, approximate='tanh') at opset 14: Mul(x, x), Mul(x, .), Mul(0.044715, .), Add(x, .),
// Mul(sqrt(2/pi), .), Tanh, Add(1, .), Mul(x, .), Mul(0.5, .).
Value gelu_tanh_torch(Graph& g, Value x) {
  auto cube = g.mul(x, g.mul(x, x));
  auto u = g.mul(c(g, 0.7978845834732056f), g.add(x, g.mul(c(g, 0.044714998453855515f), cube)));
  return g.mul(c(g, 0.5f), g.mul(x, g.add(c(g, 1.f), g.tanh(u))));
}
// HF NewGELU written the other way round: 0.5 * x * (1 + tanh(...)), inner products reassociated.
Value gelu_tanh_hf(Graph& g, Value x) {
  auto cube = g.mul(g.mul(x, x), x);
  auto u = g.mul(g.add(g.mul(cube, c(g, 0.044715f)), x), c(g, 0.7978845608f));
  return g.mul(g.mul(c(g, 0.5f), x), g.add(g.tanh(u), c(g, 1.f)));
}
// F.gelu at opsets 13/14: Div(x, 1.4142135), Erf, Add(., 1), Mul(x, .), Mul(., 0.5).
Value gelu_torch(Graph& g, Value x) {
  return g.mul(g.mul(x, g.add(g.erf(g.div(x, c(g, 1.4142135381698608f))), c(g, 1.f))), c(g, 0.5f));
}
// HF BERT's gelu: x * 0.5 * (1.0 + erf(x / sqrt(2)))
Value gelu_hf(Graph& g, Value x) {
  return g.mul(g.mul(x, c(g, 0.5f)), g.add(c(g, 1.f), g.erf(g.div(x, c(g, 1.4142135381698608f)))));
}
// x * 0.70710677 instead of the division, 0.5 first
Value gelu_mul(Graph& g, Value x) {
  return g.mul(c(g, 0.5f), g.mul(g.add(g.erf(g.mul(x, c(g, 0.70710677f))), c(g, 1.f)), x));
}
// NewGELU with torch.pow(x, 3.0)
Value gelu_tanh_pow(Graph& g, Value x) {
  auto u = g.mul(g.add(x, g.mul(c(g, 0.044715f), g.pow(x, c(g, 3.f)))), c(g, 0.7978845608f));
  return g.mul(g.mul(c(g, 0.5f), x), g.add(c(g, 1.f), g.tanh(u)));
}
Value silu_torch(Graph& g, Value x) { return g.mul(x, g.sigmoid(x)); }
Value silu_sigmoid_left(Graph& g, Value x) { return g.mul(g.sigmoid(x), x); }
Value silu_exp(Graph& g, Value x) { return g.div(x, g.add(c(g, 1.f), g.exp(g.neg(x)))); }

// x [2, 5, 6] -> act -> output, the activation alone.
Graph alone(const Spelling& act) {
  Graph g;
  g.output("y", act(g, g.input("x", {2, 5, 6})));
  return g;
}

TEST_P(PassActivation, ExporterSpellingsBecomeOneNode) {
  const std::vector<std::tuple<const char*, Spelling, const char*>> cases = {
      {"gelu, torch", gelu_torch, "gelu("},
      {"gelu, hf", gelu_hf, "gelu("},
      {"gelu, x * 0.7071", gelu_mul, "gelu("},
      {"gelu tanh, torch", gelu_tanh_torch, "gelu_tanh("},
      {"gelu tanh, pow 3", gelu_tanh_pow, "gelu_tanh("},
      {"gelu tanh, hf", gelu_tanh_hf, "gelu_tanh("},
      {"silu", silu_torch, "silu("},
      {"silu, sigmoid first", silu_sigmoid_left, "silu("},
      {"silu as x / (1 + exp(-x))", silu_exp, "silu("},
  };
  for (const auto& [name, act, op] : cases) {
    SCOPED_TRACE(name);
    FusionRuns runs = run_fused_and_plain(alone(act), GetParam(), {}, 3, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    const std::string ir = pass_report(runs.fused, "fuse_activation").ir_after;
    EXPECT_NE(ir.find(op), std::string::npos) << ir;
    // x and the activation are all that is left
    EXPECT_EQ(pass_report(runs.fused, "fuse_activation").nodes_after, 2u) << ir;
    expect_same_outputs(runs, 2e-6);
  }
}

TEST_P(PassActivation, LinearThenExportedActivationIsOneFusedMatmul) {
  // x [2, 5, 6] @ w [6, 12] + b, then the activation: one fused_matmul with the activation in it
  const std::vector<std::pair<Spelling, const char*>> cases = {{gelu_torch, "epilogue=bias+gelu)"},
                                                               {gelu_tanh_torch, "epilogue=bias+gelu_tanh)"},
                                                               {silu_torch, "epilogue=bias+silu)"}};
  for (const auto& [act, epi] : cases) {
    SCOPED_TRACE(epi);
    Graph g;
    auto x = g.input("x", {2, 5, 6});
    auto h = g.add(g.param("b", {12}), g.matmul(x, g.param("w", {6, 12})));
    g.output("y", act(g, h));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 8, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u) << kernel_ops(runs.fused);
    const std::string ir = pass_report(runs.fused, "fuse_matmul_epilogue").ir_after;
    EXPECT_NE(ir.find(epi), std::string::npos) << ir;
    expect_same_outputs(runs, 2e-6);
  }
}

TEST_P(PassActivation, NearMissesAreNotFused) {
  const std::vector<std::pair<const char*, Spelling>> cases = {
      {"0.6 instead of 0.5",
       [](Graph& g, Value x) {
         auto u = g.mul(c(g, 0.7978845834732056f), g.add(x, g.mul(c(g, 0.044715f), g.mul(x, g.mul(x, x)))));
         return g.mul(c(g, 0.6f), g.mul(x, g.add(c(g, 1.f), g.tanh(u))));
       }},
      {"0.0447 instead of 0.044715",
       [](Graph& g, Value x) {
         auto u = g.mul(c(g, 0.7978845834732056f), g.add(x, g.mul(c(g, 0.0447f), g.mul(x, g.mul(x, x)))));
         return g.mul(c(g, 0.5f), g.mul(x, g.add(c(g, 1.f), g.tanh(u))));
       }},
      {"erf of x / 1.5", [](Graph& g, Value x) {
         return g.mul(g.mul(x, g.add(g.erf(g.div(x, c(g, 1.5f))), c(g, 1.f))), c(g, 0.5f));
       }},
      {"erf without the + 1", [](Graph& g, Value x) {
         return g.mul(g.mul(x, g.erf(g.div(x, c(g, 1.4142135381698608f)))), c(g, 0.5f));
       }},
      {"sigmoid gelu approximation x * sigmoid(1.702 x)", [](Graph& g, Value x) { return g.mul(x, g.sigmoid(g.mul(x, c(g, 1.702f)))); }},
      {"x * sigmoid(x + 0.5)", [](Graph& g, Value x) { return g.mul(x, g.sigmoid(g.add(x, c(g, 0.5f)))); }},
      {"x * sigmoid(y)", [](Graph& g, Value x) { return g.mul(x, g.sigmoid(g.exp(g.input("y", g.shape(x))))); }},
  };
  for (const auto& [name, act] : cases) {
    SCOPED_TRACE(name);
    FusionRuns runs = run_fused_and_plain(alone(act), GetParam(), {}, 4, true);
    EXPECT_FALSE(pass_report(runs.fused, "fuse_activation").changed) << pass_report(runs.fused, "fuse_activation").ir_after;
    expect_same_outputs(runs, 2e-6);
  }
}

TEST_P(PassActivation, SharedIntermediateBlocksFusion) {
  // tanh(u) is also an output: replacing the tree would still need it, so nothing is fused
  Graph g;
  auto x = g.input("x", {3, 4});
  auto u = g.mul(c(g, 0.7978845834732056f), g.add(x, g.mul(c(g, 0.044715f), g.mul(x, g.mul(x, x)))));
  auto t = g.tanh(u);
  g.output("y", g.mul(c(g, 0.5f), g.mul(x, g.add(c(g, 1.f), t))));
  g.output("t", t);
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_FALSE(pass_report(runs.fused, "fuse_activation").changed);
  expect_same_outputs(runs, 2e-6);
}

TEST_P(PassActivation, SiluOfAValueReadElsewhereStillFuses) {
  // x feeds the activation and a residual add: x is the leaf, so it may have other readers
  Graph g;
  auto x = g.exp(g.input("x", {4, 8}));
  g.output("y", g.add(silu_torch(g, x), x));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 2, true);
  EXPECT_NE(pass_report(runs.fused, "fuse_activation").ir_after.find("silu("), std::string::npos);
  expect_same_outputs(runs, 2e-6);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassActivation, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
