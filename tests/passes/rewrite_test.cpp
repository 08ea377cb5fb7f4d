// SPDX-License-Identifier: Apache-2.0
// The Rewriter all fusion passes share, and the passes' contract on the IR directly: topological
// order kept, verify() clean after every pass, a second run changes nothing.
#include <gtest/gtest.h>

#include "core/compile/pipeline.hpp"
#include "core/ir/graph_access.hpp"
#include "core/passes/constant_fold.hpp"
#include "core/passes/dead_code.hpp"
#include "core/passes/fuse_activation.hpp"
#include "core/passes/fuse_add_norm.hpp"
#include "core/passes/fuse_attention.hpp"
#include "core/passes/fuse_elementwise.hpp"
#include "core/passes/fuse_layer_norm.hpp"
#include "core/passes/fuse_matmul_epilogue.hpp"
#include "core/passes/fuse_mean_pool.hpp"
#include "core/passes/rewrite.hpp"
#include "core/passes/verify.hpp"
#include "fusion_harness.hpp"
#include "rungs/rungs.hpp"

namespace {

using namespace rungs;
using ir::Node;
using ir::Op;

TEST(PassRewriter, AppendedHelpersLandBeforeTheirReaderAndDeadNodesGo) {
  Graph g;
  auto x = g.input("x", {2, 3});
  auto unused = g.param("unused", {4});
  auto a = g.relu(x);
  auto b = g.neg(a);
  auto c = g.exp(b);
  g.output("c", c);
  (void)unused;
  ir::GraphImpl impl = ir::impl_of(g);
  passes::Rewriter rw(impl);
  EXPECT_EQ(rw.uses(a.id), 1u);
  EXPECT_EQ(rw.sole_consumer(a.id), std::optional<uint32_t>(b.id));
  EXPECT_EQ(rw.sole_consumer(c.id), std::nullopt);  // read by an output only
  // c := abs(helper) with helper = tanh(x) appended after c
  Node helper;
  helper.op = Op::Tanh;
  helper.in = {x.id};
  helper.shape = {2, 3};
  uint32_t h = rw.append(helper);
  Node root;
  root.op = Op::Abs;
  root.in = {h};
  root.shape = {2, 3};
  rw.replace(c.id, root);
  EXPECT_EQ(rw.uses(b.id), 0u);
  EXPECT_EQ(rw.uses(a.id), 0u);  // released transitively
  EXPECT_TRUE(rw.finish());
  passes::verify(impl);
  EXPECT_EQ(ir::to_text(impl),
            "%0 = input(\"x\") : [2, 3]\n"
            "%1 = param(\"unused\") : [4]\n"
            "%2 = tanh(%0) : [2, 3]\n"
            "%3 = abs(%2) : [2, 3]\n"
            "output \"c\" = %3\n");
}

TEST(PassRewriter, NoRewriteNoChange) {
  Graph g;
  auto x = g.input("x", {2});
  g.output("y", g.relu(x));
  ir::GraphImpl impl = ir::impl_of(g);
  passes::Rewriter rw(impl);
  EXPECT_FALSE(rw.finish());
  EXPECT_EQ(ir::to_text(impl), g.to_text());
}

// An encoder-ish graph with a primitive attention and a decomposed one.
Graph mixed() {
  HirModule m;
  auto x = m.input("x", {2, 5, 8});
  auto mask = m.input("mask", {2, 5});
  auto h = m.add(x, m.self_attention(m.layer_norm(x, "ln1"), "attn", 2, mask));
  h = m.add(h, m.mlp(m.rms_norm(h, "ln2"), "mlp", 12, Activation::Silu));
  auto y = m.mir(
      [](Graph& g, std::span<const Value> a) {
        auto s = g.div(g.matmul(a[0], g.transpose(a[0], {0, 2, 1})), g.constant({4.f}, {1}));
        auto o = g.matmul(g.softmax(s), a[0]);
        return g.layer_norm(g.add(o, a[0]), g.constant(std::vector<float>(8, 1.f), {8}),
                            g.constant(std::vector<float>(8, 0.f), {8}));
      },
      {h});
  m.output("pooled", m.mean_pool(y, mask));
  return m.lower();
}

TEST(PassContract, VerifiedAfterEveryPassAndIdempotent) {
  ir::GraphImpl impl = ir::impl_of(mixed());
  passes::eliminate_dead_code(impl);
  std::vector<compile::NamedPass> pipeline = {{"constant_fold", compile::fold_constants}};
  for (const compile::NamedPass& p : compile::fusion_passes()) pipeline.push_back(p);
  const auto outputs_before = impl.outputs;
  for (const auto& [name, pass] : pipeline) {
    SCOPED_TRACE(name);
    const size_t before = impl.nodes.size();
    bool changed = pass(impl);
    EXPECT_NO_THROW(passes::verify(impl));
    if (!changed) EXPECT_EQ(impl.nodes.size(), before);
    const std::string text = ir::to_text(impl);
    EXPECT_FALSE(pass(impl)) << "a second run changed the graph";
    EXPECT_EQ(ir::to_text(impl), text);
    ASSERT_EQ(impl.outputs.size(), outputs_before.size());
    EXPECT_EQ(impl.outputs[0].first, outputs_before[0].first);
  }
  // every fused kind appears
  std::string text = ir::to_text(impl);
  for (const char* op : {"fused_matmul(", "fused_add_norm.layer_norm(", "fused_elementwise(", "attention("})
    EXPECT_NE(text.find(op), std::string::npos) << op << "\n" << text;
  EXPECT_EQ(text.find("softmax("), std::string::npos) << text;
}

TEST(PassContract, MixedGraphMatchesUnfused) {
  for (Device d : {Device::Reference, Device::Cpu}) {
    SCOPED_TRACE(to_string(d));
    rungs::testing::InputMap fixed{{"mask", {1, 1, 1, 1, 1, 1, 1, 0, 0, 0}}};
    rungs::testing::FusionRuns runs = rungs::testing::run_fused_and_plain(mixed(), d, fixed, 5);
    EXPECT_EQ(rungs::testing::count_kernels(runs.fused, "attention"), 2u) << rungs::testing::kernel_ops(runs.fused);
    EXPECT_EQ(rungs::testing::count_kernels(runs.fused, "fused_add_norm"), 1u) << rungs::testing::kernel_ops(runs.fused);
    rungs::testing::expect_same_outputs(runs);
  }
}

}  // namespace
