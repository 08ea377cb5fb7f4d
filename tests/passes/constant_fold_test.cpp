// SPDX-License-Identifier: Apache-2.0
// constant_fold: nodes whose inputs are all constants become constants, with the same numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "core/ir/graph_access.hpp"
#include "core/passes/constant_fold.hpp"
#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassConstantFold : public ::testing::TestWithParam<Device> {};

// x * exp(c1 + c2) + transpose(c3) @ c4 with the constant parts either constants or inputs.
Graph build(bool as_constants, const InputMap& data) {
  Graph g;
  auto x = g.input("x", {2, 3});
  auto leaf = [&](const char* name, Shape s) {
    return as_constants ? g.constant(data.at(name), s) : g.input(name, s);
  };
  auto c1 = leaf("c1", {2, 3});
  auto c2 = leaf("c2", {3});
  auto c3 = leaf("c3", {4, 2});
  auto c4 = leaf("c4", {4, 3});
  auto folded = g.add(g.exp(g.add(c1, c2)), g.matmul(g.transpose(c3, {1, 0}), c4));
  g.output("y", g.mul(x, folded));
  return g;
}

TEST_P(PassConstantFold, FoldsChainsAndKeepsNumbers) {
  InputMap data{{"x", random_vector(6, 1)},
                {"c1", random_vector(6, 2)},
                {"c2", random_vector(3, 3)},
                {"c3", random_vector(8, 4)},
                {"c4", random_vector(12, 5)}};
  Graph with_constants = build(true, data);
  Graph with_inputs = build(false, data);
  FusionRuns folded = run_fused_and_plain(with_constants, GetParam(), data);
  FusionRuns reference = run_fused_and_plain(with_inputs, GetParam(), data);
  // add, exp, transpose, matmul, add fold into one constant; their 4 constant leaves die with them.
  EXPECT_EQ(nodes_removed(folded.plain, "constant_fold"), 8);
  EXPECT_TRUE(pass_report(folded.plain, "constant_fold").changed);
  EXPECT_EQ(folded.plain.kernels.size(), 1u) << kernel_ops(folded.plain);
  EXPECT_EQ(count_kernels(folded.plain, "mul"), 1u);
  EXPECT_FALSE(pass_report(reference.plain, "constant_fold").changed);
  EXPECT_EQ(reference.plain.kernels.size(), 6u) << kernel_ops(reference.plain);
  EXPECT_LE(max_rel_error(folded.plain_out[0], reference.plain_out[0]), 1e-6);
  EXPECT_LE(max_rel_error(folded.fused_out[0], reference.plain_out[0]), 1e-6);
  // and an independent scalar check of one element: y[1][2]
  const auto& c1 = data["c1"];
  const auto& c2 = data["c2"];
  const auto& c3 = data["c3"];
  const auto& c4 = data["c4"];
  double dot = 0;
  for (int k = 0; k < 4; ++k) dot += c3[k * 2 + 1] * c4[k * 3 + 2];
  double want = data["x"][5] * (std::exp(c1[5] + c2[2]) + dot);
  EXPECT_NEAR(folded.plain_out[0][5], want, 1e-5);
}

TEST_P(PassConstantFold, HugeResultsAreNotFolded) {
  Graph g;
  auto x = g.input("x", {1, 1});
  auto c = g.constant(std::vector<float>(1 << 10, 0.5f), {1 << 10, 1});
  auto big = g.add(c, g.constant(std::vector<float>(1 << 11, 0.25f), {1, 1 << 11}));  // 2M elements
  g.output("y", g.sum(g.mul(big, x), {0, 1}));
  CompileOptions opt;
  opt.fusion = false;
  CompiledGraph cg = Session(GetParam()).compile(g, opt);
  EXPECT_FALSE(pass_report(cg.report(), "constant_fold").changed);
  EXPECT_EQ(count_kernels(cg.report(), "add"), 1u) << kernel_ops(cg.report());
  std::vector<float> one{2.f};
  NamedInput in{"x", one};
  auto out = cg.run({&in, 1});
  EXPECT_NEAR(out[0][0], 0.75 * 2.0 * (1 << 21), 1.0);
}

TEST_P(PassConstantFold, InputsAndParamsAreNeverFolded) {
  Graph g;
  auto p = g.param("p", {3});
  auto x = g.input("x", {3});
  auto two = g.constant({2.f}, {1});
  g.output("y", g.add(g.mul(p, two), g.mul(x, g.neg(two))));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  // only neg(2) folds; the graph keeps its input and param
  EXPECT_EQ(nodes_removed(runs.plain, "constant_fold"), 0);  // neg -> constant, in place
  EXPECT_TRUE(pass_report(runs.plain, "constant_fold").changed);
  EXPECT_EQ(count_kernels(runs.plain, "neg"), 0u) << kernel_ops(runs.plain);
  EXPECT_EQ(count_kernels(runs.plain, "mul"), 2u) << kernel_ops(runs.plain);
  expect_same_outputs(runs);
}

TEST_P(PassConstantFold, FoldedOutputsKeepTheirNamesAndOrder) {
  Graph g;
  auto x = g.input("x", {2});
  auto c = g.constant({1.f, -2.f}, {2});
  g.output("first", g.relu(x));
  g.output("folded", g.abs(g.neg(c)));
  g.output("input", x);
  g.output("last", g.add(x, g.exp(c)));
  for (bool fusion : {false, true}) {
    CompileOptions opt;
    opt.fusion = fusion;
    CompiledGraph cg = Session(GetParam()).compile(g, opt);
    EXPECT_EQ(cg.output_names(), (std::vector<std::string>{"first", "folded", "input", "last"}));
    std::vector<float> xv{-0.5f, 3.f};
    NamedInput in{"x", xv};
    auto out = cg.run({&in, 1});
    ASSERT_EQ(out.size(), 4u);
    EXPECT_EQ(out[0], (std::vector<float>{0.f, 3.f}));
    EXPECT_EQ(out[1], (std::vector<float>{1.f, 2.f}));
    EXPECT_EQ(out[2], xv);
    EXPECT_FLOAT_EQ(out[3][0], -0.5f + std::exp(1.f));
    EXPECT_FLOAT_EQ(out[3][1], 3.f + std::exp(-2.f));
    EXPECT_EQ(count_kernels(cg.report(), "neg"), 0u) << kernel_ops(cg.report());
    EXPECT_EQ(count_kernels(cg.report(), "exp"), 0u) << kernel_ops(cg.report());
  }
}

// The pass runs no kernel itself: it stores whatever the evaluator compile hands it returns, once
// per foldable node (docs/architecture.md: passes sit below the backends).
TEST(PassConstantFoldEvaluator, UsesTheEvaluatorItIsGiven) {
  Graph g;
  auto x = g.input("x", {2});
  auto c = g.exp(g.constant({0.f, 1.f}, {2}));
  g.output("y", g.add(x, c));
  ir::GraphImpl impl = ir::impl_of(g);
  std::vector<ir::Op> asked;
  const bool changed = passes::fold_constants(impl, [&](const ir::GraphImpl& gi, uint32_t id) {
    asked.push_back(gi.nodes[id].op);
    return std::vector<float>{7.f, 8.f};
  });
  EXPECT_TRUE(changed);
  EXPECT_EQ(asked, std::vector<ir::Op>{ir::Op::Exp});
  const ir::Node& folded = impl.nodes[impl.nodes[impl.outputs[0].second].in[1]];
  ASSERT_EQ(folded.op, ir::Op::Constant);
  EXPECT_EQ(*folded.data, (std::vector<float>{7.f, 8.f}));
  // A wrong-sized value is an internal error, not a silently corrupt constant.
  ir::GraphImpl again = ir::impl_of(g);
  EXPECT_THROW(passes::fold_constants(again, [](const ir::GraphImpl&, uint32_t) { return std::vector<float>{1.f}; }),
               Error);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassConstantFold, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
