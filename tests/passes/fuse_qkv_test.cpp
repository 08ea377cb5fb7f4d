// SPDX-License-Identifier: Apache-2.0
// fuse_qkv: a self-attention's q, k and v projections become one product with the three weights
// side by side, read by the attention in place; q, k and v sliced from one product lose their
// slice copies. Node counts, kernels and outputs against the unfused graph, and near misses.
#include <gtest/gtest.h>

#include <string>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassQkv : public ::testing::TestWithParam<Device> {};

struct Projections {
  bool bias = true;
  bool constant_v = false;    // v's weight a Constant (the others Params)
  bool transposed = false;    // weights stored [N, K] and read through a transpose
  bool cross = false;         // k and v project another input (cross-attention)
  bool k_read_twice = false;  // k is also a graph output
  int64_t dv = 8;             // v's width (q and k: 8)
};

// x [2, 6, 16] projected to q, k, v, attention with 2 heads and a key mask.
Graph encoder_block(const Projections& p) {
  Graph g;
  auto x = g.input("x", {2, 6, 16});
  auto y = p.cross ? g.input("y", {2, 6, 16}) : x;
  auto mask = g.input("mask", {2, 6});
  auto project = [&](const std::string& name, Value from, int64_t n, bool constant) {
    Value w = constant       ? g.constant(random_vector(static_cast<size_t>(16 * n), 99), {16, n})
              : p.transposed ? g.transpose(g.param("w" + name, {n, 16}), {1, 0})
                             : g.param("w" + name, {16, n});
    Value out = g.matmul(from, w);
    return p.bias ? g.add(out, g.param("b" + name, {n})) : out;
  };
  auto q = project("q", x, 8, false);
  auto k = project("k", y, 8, false);
  auto v = project("v", y, p.dv, p.constant_v);
  AttentionOptions opt;
  opt.heads = 2;
  opt.key_mask = mask;
  g.output("o", g.attention(q, k, v, opt));
  if (p.k_read_twice) g.output("k", k);
  return g;
}

InputMap mask_input() {
  return {{"mask", {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}}};  // the second row has 3 padded keys
}

TEST_P(PassQkv, ThreeProjectionsBecomeOneProduct) {
  for (bool bias : {true, false})
    for (int64_t dv : {8, 12}) {
      SCOPED_TRACE(std::string(bias ? "bias" : "no bias") + ", v width " + std::to_string(dv));
      FusionRuns runs = run_fused_and_plain(encoder_block({.bias = bias, .dv = dv}), GetParam(), mask_input(), 5, true);
      EXPECT_EQ(runs.fused.kernels.size(), 2u) << kernel_ops(runs.fused);
      EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 1u) << kernel_ops(runs.fused);
      EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u);
      EXPECT_EQ(count_kernels(runs.plain, "matmul"), 3u);
      // three products out, one in
      EXPECT_EQ(nodes_removed(runs.fused, "fuse_qkv"), 2);
      const std::string ir = pass_report(runs.fused, "fuse_qkv").ir_after;
      EXPECT_NE(ir.find("b in 3 parts"), std::string::npos) << ir;
      EXPECT_NE(ir.find("packed q|k|v (q and k 8 wide)"), std::string::npos) << ir;
      EXPECT_NE(ir.find("[2, 6, " + std::to_string(16 + dv) + "]"), std::string::npos) << ir;
      if (GetParam() == Device::Cpu) {
        bool parts = false;
        for (const KernelReport& k : runs.fused.kernels) parts |= k.kernel.find("+parts3") != std::string::npos;
        EXPECT_TRUE(parts) << "the vector GEMM runs the product";
      }
      expect_same_outputs(runs);
    }
}

TEST_P(PassQkv, TransposedWeights) {
  FusionRuns runs = run_fused_and_plain(encoder_block({.transposed = true}), GetParam(), mask_input(), 6, true);
  EXPECT_EQ(runs.fused.kernels.size(), 2u) << kernel_ops(runs.fused);
  EXPECT_NE(pass_report(runs.fused, "fuse_qkv").ir_after.find("b transposed, b in 3 parts"), std::string::npos);
  expect_same_outputs(runs);
}

TEST_P(PassQkv, NearMissesStaySeparate) {
  struct Miss {
    const char* what;
    Projections p;
  } misses[] = {
      {"cross-attention: k and v read another input", {.cross = true}},
      {"k is read elsewhere too", {.k_read_twice = true}},
      {"v's weight is a constant, the others params", {.constant_v = true}},
  };
  for (const Miss& m : misses) {
    SCOPED_TRACE(m.what);
    FusionRuns runs = run_fused_and_plain(encoder_block(m.p), GetParam(), mask_input(), 7, true);
    EXPECT_FALSE(pass_report(runs.fused, "fuse_qkv").changed);
    EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 3u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
}

// One product of x with a [16, 8 + 8 + 12] weight, then q, k and v sliced from it (an exported
// fused projection and its Split): the attention reads the product in place, no slice runs.
Graph split_block(int64_t v_start) {
  Graph g;
  auto x = g.input("x", {2, 6, 16});
  auto mask = g.input("mask", {2, 6});
  auto qkv = g.add(g.matmul(x, g.param("w", {16, 28})), g.param("b", {28}));
  AttentionOptions opt;
  opt.heads = 2;
  opt.key_mask = mask;
  g.output("o", g.attention(g.slice(qkv, 2, 0, 8), g.slice(qkv, -1, 8, 8), g.slice(qkv, 2, v_start, 28 - v_start),
                            opt));
  return g;
}

TEST_P(PassQkv, SlicesOfOneProductAreReadInPlace) {
  FusionRuns runs = run_fused_and_plain(split_block(16), GetParam(), mask_input(), 8, true);
  EXPECT_EQ(count_kernels(runs.fused, "slice"), 0u) << kernel_ops(runs.fused);
  EXPECT_EQ(runs.fused.kernels.size(), 2u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.plain, "slice"), 3u);
  EXPECT_EQ(nodes_removed(runs.fused, "fuse_qkv"), 3);
  EXPECT_NE(pass_report(runs.fused, "fuse_qkv").ir_after.find("packed q|k|v (q and k 8 wide)"), std::string::npos);
  expect_same_outputs(runs);

  // v not right after k (columns 16..19 unused): the slices stay
  FusionRuns gap = run_fused_and_plain(split_block(20), GetParam(), mask_input(), 8, true);
  EXPECT_FALSE(pass_report(gap.fused, "fuse_qkv").changed);
  EXPECT_EQ(count_kernels(gap.fused, "slice"), 3u) << kernel_ops(gap.fused);
  expect_same_outputs(gap);
}

INSTANTIATE_TEST_SUITE_P(Devices, PassQkv, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
