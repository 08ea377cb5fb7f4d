// SPDX-License-Identifier: Apache-2.0
// The whole fusion pipeline on an encoder-like HirModule: embedding, two pre-norm layers of
// self-attention + MLP with residual adds, a final layer norm and masked mean pooling.
#include <gtest/gtest.h>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

constexpr int64_t kBatch = 2, kSeq = 9, kDim = 16, kVocab = 50;

HirModule encoder() {
  HirModule m;
  auto ids = m.input("ids", {kBatch, kSeq});
  auto mask = m.input("mask", {kBatch, kSeq});
  Value x = m.embedding(ids, "emb", kVocab, kDim);
  for (int l = 0; l < 2; ++l) {
    std::string p = "layer" + std::to_string(l);
    x = m.add(x, m.self_attention(m.layer_norm(x, p + ".ln1"), p + ".attn", 2, mask));
    x = m.add(x, m.mlp(m.layer_norm(x, p + ".ln2"), p + ".mlp", 3 * kDim));
  }
  m.output("embedding", m.mean_pool(m.layer_norm(x, "ln_f"), mask));
  return m;
}

InputMap encoder_inputs() {
  InputMap in;
  auto& ids = in["ids"];
  auto& mask = in["mask"];
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t s = 0; s < kSeq; ++s) {
      ids.push_back(static_cast<float>((b * 31 + s * 7) % kVocab));
      mask.push_back(b == 1 && s >= 6 ? 0.f : 1.f);  // the second sequence has 3 padded tokens
    }
  return in;
}

class PassEncoder : public ::testing::TestWithParam<Device> {};

TEST_P(PassEncoder, FusesToTheExpectedKernels) {
  FusionRuns runs = run_fused_and_plain(encoder().lower(), GetParam(), encoder_inputs(), 123);
  const CompileReport& f = runs.fused;
  // per layer: q, k and v as one product (bias), o (bias + residual), up (bias + gelu), down
  // (bias + residual)
  EXPECT_EQ(count_kernels(f, "fused_matmul"), 8u) << kernel_ops(f);
  EXPECT_EQ(count_kernels(f, "attention"), 2u);
  EXPECT_EQ(count_kernels(f, "layer_norm"), 5u);
  EXPECT_EQ(count_kernels(f, "gather"), 1u);
  EXPECT_EQ(count_kernels(f, "fused_elementwise"), 1u);  // max(count, 1e-6) and the division
  EXPECT_EQ(count_kernels(f, "mul"), 1u);                // x * mask, read by the sum
  EXPECT_EQ(count_kernels(f, "sum"), 2u);
  EXPECT_EQ(f.kernels.size(), 20u) << kernel_ops(f);
  for (const char* op : {"matmul", "add", "gelu", "maximum", "div"})
    EXPECT_EQ(count_kernels(f, op), 0u) << op << " in " << kernel_ops(f);
  // 2 layers x (3 x 1 + 3 x 2) absorbed nodes; the elementwise pass drops maximum and its constant
  EXPECT_EQ(nodes_removed(f, "fuse_matmul_epilogue"), 18);
  EXPECT_EQ(nodes_removed(f, "fuse_qkv"), 4);  // 2 layers x (3 products out, 1 in)
  EXPECT_EQ(nodes_removed(f, "fuse_elementwise"), 2);
  EXPECT_FALSE(pass_report(f, "fuse_attention").changed);  // the HIR already emits attention
  EXPECT_FALSE(pass_report(f, "fuse_add_norm").changed);   // each residual sum also feeds the next add
  EXPECT_EQ(count_kernels(runs.plain, "matmul"), 12u);
  // unfused: gather, 2 x (2 norms, 6 matmuls, 6 bias adds, gelu, attention, 2 residual adds),
  // final norm, and mean pooling's mul, 2 sums, maximum, div
  EXPECT_EQ(runs.plain.kernels.size(), 43u) << kernel_ops(runs.plain);
  ASSERT_EQ(runs.fused_out[0].size(), static_cast<size_t>(kBatch * kDim));
  expect_same_outputs(runs);
}

TEST_P(PassEncoder, DumpPassesKeepsTheIrOfEveryChangedPass) {
  CompileOptions opt;
  opt.threads = 1;
  opt.dump_passes = true;
  CompiledGraph c = Session(GetParam()).compile_hir(encoder(), opt);
  size_t changed = 0;
  for (const PassReport& p : c.report().passes) {
    if (p.name == "memory_plan+kernels") continue;
    EXPECT_EQ(p.changed, !p.ir_after.empty()) << p.name;
    changed += p.changed;
  }
  EXPECT_GE(changed, 2u);
  const std::string& epi = pass_report(c.report(), "fuse_matmul_epilogue").ir_after;
  EXPECT_NE(epi.find("fused_matmul("), std::string::npos);
  EXPECT_EQ(epi.find("fused_elementwise("), std::string::npos);  // that pass has not run yet
  EXPECT_NE(pass_report(c.report(), "fuse_elementwise").ir_after.find("fused_elementwise("), std::string::npos);

  opt.dump_passes = false;
  CompiledGraph quiet = Session(GetParam()).compile_hir(encoder(), opt);
  for (const PassReport& p : quiet.report().passes) EXPECT_TRUE(p.ir_after.empty()) << p.name;
}

INSTANTIATE_TEST_SUITE_P(Devices, PassEncoder, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
