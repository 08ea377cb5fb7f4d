// SPDX-License-Identifier: Apache-2.0
// fuse_layer_norm: layer norm and rms norm as PyTorch's ONNX exporter writes them (ReduceMean, Sub,
// Pow 2 or Mul, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta) become one norm node, and near
// misses stay primitive and still compute the same values.
#include <gtest/gtest.h>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassLayerNorm : public ::testing::TestWithParam<Device> {};

struct LnSpell {
  bool gamma_first = false;  // gamma * n instead of n * gamma
  bool beta_first = false;
  bool rsqrt = false;       // d * rsqrt(v) instead of d / sqrt(v)
  bool reciprocal = false;  // d * (1 / sqrt(v))
  bool row_shaped = false;  // gamma, beta as [1, 1, D]
  bool affine = true;
  int mean_axis = -1;  // the first mean's axis (a near miss when not the last)
  float eps = 1e-5f;
  bool pow = false;  // Pow(d, 2) instead of Mul(d, d)
};

// The exporter's decomposition of nn.LayerNorm over the last axis of x [2, 5, 8].
Graph decomposed_ln(const LnSpell& s) {
  Graph g;
  auto x = g.input("x", {2, 5, 8});
  auto d = g.sub(x, g.mean(x, {s.mean_axis}, true));
  auto sq = s.pow ? g.pow(d, g.constant({2.f}, {})) : g.mul(d, d);
  auto v = g.add(g.mean(sq, {-1}, true), g.constant({s.eps}, {}));
  Value n;
  if (s.rsqrt)
    n = g.mul(d, g.rsqrt(v));
  else if (s.reciprocal)
    n = g.mul(g.div(g.constant({1.f}, {}), g.sqrt(v)), d);
  else
    n = g.div(d, g.sqrt(v));
  if (s.affine) {
    Shape vs = s.row_shaped ? Shape{1, 1, 8} : Shape{8};
    auto gamma = g.param("gamma", vs), beta = g.param("beta", vs);
    n = s.gamma_first ? g.mul(gamma, n) : g.mul(n, gamma);
    n = s.beta_first ? g.add(beta, n) : g.add(n, beta);
  }
  g.output("y", n);
  return g;
}

TEST_P(PassLayerNorm, ExporterSpellingsBecomeOneLayerNorm) {
  std::vector<std::pair<const char*, LnSpell>> cases = {
      {"torch export", {}},
      {"gamma, beta first", {true, true}},
      {"rsqrt", {false, false, true}},
      {"reciprocal", {false, false, false, true}},
      {"[1, 1, D] gamma and beta", {false, false, false, false, true}},
      {"no affine", {false, false, false, false, false, false}},
      {"bert eps", {false, false, false, false, false, true, -1, 1e-12f}},
      {"Pow(d, 2)", {false, false, false, false, false, true, -1, 1e-12f, true}},
  };
  for (const auto& [name, spell] : cases) {
    SCOPED_TRACE(name);
    Graph g = decomposed_ln(spell);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 11, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm"), 1u) << kernel_ops(runs.fused);
    EXPECT_GE(runs.plain.kernels.size(), 7u) << kernel_ops(runs.plain);
    const std::string ir = pass_report(runs.fused, "fuse_layer_norm").ir_after;
    EXPECT_NE(ir.find("layer_norm("), std::string::npos) << ir;
    expect_same_outputs(runs, 1e-5);
  }
}

TEST_P(PassLayerNorm, NodeCountOfTheTorchExport) {
  // x, gamma, beta, mean, sub, mul, mean, eps, add, sqrt, div, mul, add -> x, gamma, beta, layer_norm
  Graph g = decomposed_ln({});
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 3);
  const PassReport& p = pass_report(runs.fused, "fuse_layer_norm");
  EXPECT_EQ(p.nodes_before, 13u);
  EXPECT_EQ(p.nodes_after, 4u);
  expect_same_outputs(runs);
}

TEST_P(PassLayerNorm, RmsNormSpellings) {
  for (int form = 0; form < 3; ++form) {
    SCOPED_TRACE(form);
    Graph g;
    auto x = g.input("x", {3, 16});
    auto v = g.add(g.constant({1e-6f}, {1}), g.mean(g.mul(x, x), {1}, true));
    Value n;
    if (form == 0)
      n = g.div(x, g.sqrt(v));
    else if (form == 1)
      n = g.mul(g.rsqrt(v), x);
    else
      n = g.mul(x, g.rsqrt(v));
    if (form != 2) n = g.mul(g.param("gamma", {16}), n);
    g.output("y", n);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 5 + form, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "rms_norm"), 1u) << kernel_ops(runs.fused);
    EXPECT_NE(pass_report(runs.fused, "fuse_layer_norm").ir_after.find("eps=1e-06"), std::string::npos)
        << pass_report(runs.fused, "fuse_layer_norm").ir_after;
    expect_same_outputs(runs);
  }
}

TEST_P(PassLayerNorm, FollowedByResidualNormGetsTheAddFused) {
  // post-LN BERT: LayerNorm(attn_out + x), both [B, S, D]: the recognised norm then takes the add
  Graph g;
  auto a = g.input("a", {1, 4, 8});
  auto b = g.input("b", {1, 4, 8});
  auto x = g.add(a, b);
  auto d = g.sub(x, g.mean(x, {2}, true));
  auto n = g.div(d, g.sqrt(g.add(g.mean(g.mul(d, d), {2}, true), g.constant({1e-12f}, {1}))));
  g.output("y", g.add(g.mul(n, g.param("gamma", {8})), g.param("beta", {8})));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "fused_add_norm"), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

// Near misses: each computes something else (or shares a value), is left alone, and still runs.
TEST_P(PassLayerNorm, NearMissesAreNotFused) {
  {
    SCOPED_TRACE("first mean over another axis");
    LnSpell s;
    s.mean_axis = 1;
    FusionRuns runs = run_fused_and_plain(decomposed_ln(s), GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("variance over another axis");
    Graph g;
    auto x = g.input("x", {4, 6});
    auto d = g.sub(x, g.mean(x, {1}, true));
    g.output("y", g.div(d, g.sqrt(g.add(g.mean(g.mul(d, d), {0}, true), g.constant({1e-5f}, {1})))));
    FusionRuns runs = run_fused_and_plain(g, GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm") + count_kernels(runs.fused, "rms_norm"), 0u)
        << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("the centred value is also an output");
    Graph g;
    auto x = g.input("x", {4, 6});
    auto d = g.sub(x, g.mean(x, {1}, true));
    g.output("y", g.div(d, g.sqrt(g.add(g.mean(g.mul(d, d), {1}, true), g.constant({1e-5f}, {1})))));
    g.output("d", d);
    FusionRuns runs = run_fused_and_plain(g, GetParam());
    // still exactly an rms norm of d (d itself computed once): no layer_norm, same values
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("eps not a scalar constant");
    Graph g;
    auto x = g.input("x", {4, 6});
    auto d = g.sub(x, g.mean(x, {1}, true));
    g.output("y", g.div(d, g.sqrt(g.add(g.mean(g.mul(d, d), {1}, true), g.input("eps", {1})))));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"eps", {0.5f}}});
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm") + count_kernels(runs.fused, "rms_norm"), 0u)
        << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("square of another value");
    Graph g;
    auto x = g.input("x", {4, 6});
    auto d = g.sub(x, g.mean(x, {1}, true));
    g.output("y", g.div(d, g.sqrt(g.mean(g.mul(d, x), {1}, true))));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"x", {1, 2, 3, 4, 5, 6, 2, 2, 3, 4, 5, 6, 3, 3, 3, 4, 5, 9, 1, 1, 1, 1, 1, 7}}});
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm") + count_kernels(runs.fused, "rms_norm"), 0u)
        << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("Pow(d, 3)");
    Graph g;
    auto x = g.input("x", {4, 6});
    auto d = g.sub(x, g.mean(x, {1}, true));
    auto v = g.add(g.mean(g.pow(d, g.constant({3.f}, {})), {1}, true), g.constant({100.f}, {}));
    g.output("y", g.div(d, g.sqrt(v)));
    FusionRuns runs = run_fused_and_plain(g, GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm") + count_kernels(runs.fused, "rms_norm"), 0u)
        << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("gamma that varies over rows");
    Graph g;
    auto x = g.input("x", {4, 6});
    auto d = g.sub(x, g.mean(x, {1}, true));
    auto n = g.div(d, g.sqrt(g.add(g.mean(g.mul(d, d), {1}, true), g.constant({1e-5f}, {1}))));
    g.output("y", g.mul(n, g.param("gamma", {4, 1})));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 9, true);
    // the norm itself is fused (ones as gamma); the row scale stays a separate multiply
    EXPECT_EQ(count_kernels(runs.fused, "layer_norm"), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(runs.fused.kernels.size(), 2u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
}

TEST_P(PassLayerNorm, FusionOffKeepsThePrimitives) {
  CompileOptions off;
  off.fusion = false;
  CompiledGraph c = Session(GetParam()).compile(decomposed_ln({}), off);
  EXPECT_EQ(count_kernels(c.report(), "layer_norm"), 0u);
  for (const PassReport& p : c.report().passes) EXPECT_NE(p.name, "fuse_layer_norm");
}

INSTANTIATE_TEST_SUITE_P(Devices, PassLayerNorm, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
