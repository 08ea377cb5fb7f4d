// SPDX-License-Identifier: Apache-2.0
// kernel_params: what core/compile tells a backend about each IR node. The kernel tests build
// KernelParams by hand, so this is where the IR -> KernelParams mapping itself is checked.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/compile/kernel_params.hpp"
#include "core/ir/graph_access.hpp"

namespace {

using namespace rungs;
using backend::Dims;
using backend::KernelParams;
using backend::Source;
using ops::Op;

KernelParams params_of(const Graph& g, Value v, PrecisionPolicy policy = PrecisionPolicy::f32(), int threads = 1) {
  return compile::kernel_params(ir::impl_of(g), v.id, policy, threads);
}

TEST(KernelParams, DimsSourcesPolicyAndThreads) {
  Graph g;
  auto x = g.input("x", {3, 8});
  auto w = g.param("w", {8, 5});
  auto c = g.constant(std::vector<float>(5, 2.f), {5});
  auto product = g.matmul(x, w);
  auto y = g.add(product, c);
  const KernelParams mm = params_of(g, product, PrecisionPolicy::bf16_weights(), 3);
  EXPECT_EQ(mm.op, Op::MatMul);
  EXPECT_EQ(mm.out, Dims::of({3, 5}));
  ASSERT_EQ(mm.inputs.size(), 2u);
  EXPECT_EQ(mm.inputs[0].dims, Dims::of({3, 8}));
  EXPECT_EQ(mm.inputs[0].source, Source::Activation);
  EXPECT_EQ(mm.inputs[1].source, Source::Param);
  EXPECT_EQ(mm.inputs[1].data, nullptr);
  EXPECT_EQ(mm.policy.weights, PrecisionPolicy::Format::BF16);
  EXPECT_EQ(mm.threads, 3);

  const KernelParams add = params_of(g, y);
  EXPECT_EQ(add.op, Op::Add);
  ASSERT_EQ(add.inputs.size(), 2u);
  EXPECT_EQ(add.inputs[1].source, Source::Constant);
  ASSERT_NE(add.inputs[1].data, nullptr);
  EXPECT_EQ(*add.inputs[1].data, std::vector<float>(5, 2.f)) << "a Constant's values reach the kernel";
}

TEST(KernelParams, EachFamilysParameters) {
  Graph g;
  auto x = g.input("x", {2, 4, 6});
  const KernelParams sm = params_of(g, g.softmax(x, -2));
  EXPECT_EQ(sm.softmax.axis, 1) << "the axis is normalized to [0, rank)";

  auto gamma = g.input("gamma", {6}), beta = g.input("beta", {6});
  const KernelParams ln = params_of(g, g.layer_norm(x, gamma, beta, 1e-3f));
  EXPECT_FALSE(ln.norm.rms);
  EXPECT_FALSE(ln.norm.add);
  EXPECT_TRUE(ln.norm.has_beta);
  EXPECT_FLOAT_EQ(ln.norm.eps, 1e-3f);
  const KernelParams rms = params_of(g, g.rms_norm(x, gamma, 1e-6f));
  EXPECT_TRUE(rms.norm.rms);
  EXPECT_FALSE(rms.norm.has_beta);

  const KernelParams mean = params_of(g, g.mean(x, {-1, 0}));
  EXPECT_EQ(mean.reduce.kind, backend::ReduceKind::Mean);
  EXPECT_EQ(mean.reduce.axes, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(params_of(g, g.max(x, {1})).reduce.kind, backend::ReduceKind::Max);
  EXPECT_EQ(params_of(g, g.sum(x, {1})).reduce.kind, backend::ReduceKind::Sum);

  auto mask = g.input("mask", {2, 4});
  const KernelParams at = params_of(g, g.attention(x, x, x, {.heads = 3, .causal = true, .key_mask = mask, .scale = 0.5f}));
  EXPECT_EQ(at.attention.heads, 3);
  EXPECT_TRUE(at.attention.causal);
  EXPECT_TRUE(at.attention.has_mask);
  EXPECT_EQ(at.attention.scale, 0.5f);
  EXPECT_EQ(at.inputs.size(), 4u);

  EXPECT_EQ(params_of(g, g.transpose(x, {2, 0, 1})).transpose.perm, (std::vector<int64_t>{2, 0, 1}));
  const KernelParams sl = params_of(g, g.slice(x, -1, 2, 3));
  EXPECT_EQ(sl.slice.axis, 2);
  EXPECT_EQ(sl.slice.start, 2);
  EXPECT_EQ(sl.slice.length, 3);
  EXPECT_EQ(params_of(g, g.concat({x, x}, 1)).concat.axis, 1);
}

// The fused ops exist only after the passes: build them in the IR directly.
TEST(KernelParams, FusedOps) {
  ir::GraphImpl g;
  const uint32_t a = g.add(ir::Node{.op = Op::Input, .shape = {4, 8}, .name = "a"});
  const uint32_t b = g.add(ir::Node{.op = Op::Input, .shape = {4, 8}, .name = "b"});
  const uint32_t gamma = g.add(ir::Node{.op = Op::Param, .shape = {8}, .name = "gamma"});

  ir::Node norm{.op = Op::FusedAddNorm, .in = {a, b, gamma}, .shape = {4, 8}, .eps = 1e-6f};
  norm.norm = Op::RmsNorm;
  const KernelParams fan = compile::kernel_params(g, g.add(norm), PrecisionPolicy::f32(), 1);
  EXPECT_TRUE(fan.norm.add);
  EXPECT_TRUE(fan.norm.rms);
  EXPECT_FALSE(fan.norm.has_beta);
  EXPECT_FLOAT_EQ(fan.norm.eps, 1e-6f);

  ir::Node ew{.op = Op::FusedElementwise, .in = {a, b}, .shape = {4, 8}};
  ew.prog = {{Op::Mul, 2, 0, -1, 0.5f}, {Op::Add, 3, 2, 1}};
  ew.regs = 4;
  const KernelParams fe = compile::kernel_params(g, g.add(ew), PrecisionPolicy::f32(), 1);
  ASSERT_EQ(fe.elementwise.code.size(), 2u);
  EXPECT_EQ(fe.elementwise.code[0].op, Op::Mul);
  EXPECT_EQ(fe.elementwise.code[0].imm, 0.5f) << "scalar constants travel in the program";
  EXPECT_EQ(fe.elementwise.regs, 4);

  ir::Node mm{.op = Op::FusedMatMul, .in = {a, gamma}, .shape = {4, 8}};
  mm.epi = {.bias = false, .act = Activation::Gelu, .residual = false};
  const KernelParams fm = compile::kernel_params(g, g.add(mm), PrecisionPolicy::f32(), 1);
  EXPECT_EQ(fm.epilogue.act, Activation::Gelu);
  EXPECT_FALSE(fm.epilogue.bias);
}

}  // namespace
