// SPDX-License-Identifier: Apache-2.0
// A post-LN BERT encoder written as PyTorch's ONNX exporter writes it (opset 14: decomposed layer
// norms, the -10000 extended mask, the erf GELU, Reshape/Transpose heads, masked mean pooling with
// Expand) against the same encoder built with HirModule: after the passes both run the same
// kernels, and with the same weights they compute the same embedding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/compile/pipeline.hpp"
#include "core/ir/graph_access.hpp"
#include "core/passes/dead_code.hpp"
#include "core/passes/fuse_activation.hpp"
#include "core/passes/fuse_add_norm.hpp"
#include "core/passes/fuse_attention.hpp"
#include "core/passes/fuse_elementwise.hpp"
#include "core/passes/fuse_layer_norm.hpp"
#include "core/passes/fuse_matmul_epilogue.hpp"
#include "core/passes/fuse_mean_pool.hpp"
#include "core/passes/verify.hpp"
#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

constexpr int64_t B = 2, S = 7, D = 16, H = 2, Dh = D / H, F = 3 * D, V = 40, L = 2;

// Each primitive as the ONNX frontend maps the exporter's node onto the Graph API.
class Exported {
 public:
  Graph g;
  Value param(const std::string& name, Shape s) { return g.param(name, std::move(s)); }
  Value c(float v) { return g.constant({v}, {}); }
  // Add(bias, MatMul(x, W))
  Value linear(Value x, const std::string& name, int64_t out) {
    return g.add(param(name + ".bias", {out}), g.matmul(x, param(name + ".weight", {g.shape(x).back(), out})));
  }
  Value layer_norm(Value x, const std::string& name, float eps) {
    auto d = g.sub(x, g.mean(x, {-1}, true));
    auto v = g.add(g.mean(g.mul(d, d), {-1}, true), c(eps));  // Pow(d, 2) maps to Mul(d, d)
    auto n = g.div(d, g.sqrt(v));
    return g.add(g.mul(n, param(name + ".gamma", {D})), param(name + ".beta", {D}));
  }
  Value gelu(Value x) {  // nn.GELU(): Div, Erf, Add, Mul, Mul
    return g.mul(g.mul(x, g.add(g.erf(g.div(x, c(1.4142135381698608f))), c(1.f))), c(0.5f));
  }
  Value attention(Value x, Value ext_mask, const std::string& name) {
    auto split = [&](Value t) { return g.reshape(t, {B, S, H, Dh}); };
    auto q = g.transpose(split(linear(x, name + ".q", D)), {0, 2, 1, 3});
    auto kt = g.transpose(split(linear(x, name + ".k", D)), {0, 2, 3, 1});
    auto v = g.transpose(split(linear(x, name + ".v", D)), {0, 2, 1, 3});
    auto s = g.add(g.div(g.matmul(q, kt), c(std::sqrt(static_cast<float>(Dh)))), ext_mask);
    auto o = g.matmul(g.softmax(s, -1), v);
    return linear(g.reshape(g.transpose(o, {0, 2, 1, 3}), {B, S, -1}), name + ".o", D);
  }
};

Graph exported_encoder() {
  Exported e;
  Graph& g = e.g;
  auto ids = g.input("ids", {B, S});
  auto mask = g.input("mask", {B, S});
  // the extended mask, once for all layers: (1 - mask[:, None, None, :]) * -10000
  auto ext = g.mul(g.sub(e.c(1.f), g.reshape(mask, {B, 1, 1, S})), e.c(-10000.f));
  Value x = e.layer_norm(g.gather(e.param("emb.table", {V, D}), ids), "emb_ln", 1e-12f);
  for (int l = 0; l < L; ++l) {
    const std::string p = "layer" + std::to_string(l);
    x = e.layer_norm(g.add(e.attention(x, ext, p + ".attn"), x), p + ".ln1", 1e-12f);
    auto h = e.linear(e.gelu(e.linear(x, p + ".mlp.up", F)), p + ".mlp.down", D);
    x = e.layer_norm(g.add(h, x), p + ".ln2", 1e-12f);
  }
  // sentence-transformers pooling: Unsqueeze, Expand (an add of zeros), Cast, Mul, ReduceSum, Clip, Div
  auto m = g.add(g.reshape(mask, {B, S, 1}), g.constant(std::vector<float>(B * S * D, 0.f), {B, S, D}));
  auto total = g.sum(g.mul(x, m), {1});
  g.output("embedding", g.div(total, g.maximum(g.sum(m, {1}), e.c(1e-9f))));
  return g;
}

HirModule hand_built() {
  HirModule m;
  auto ids = m.input("ids", {B, S});
  auto mask = m.input("mask", {B, S});
  Value x = m.layer_norm(m.embedding(ids, "emb", V, D), "emb_ln", 1e-12f);
  for (int l = 0; l < L; ++l) {
    const std::string p = "layer" + std::to_string(l);
    x = m.layer_norm(m.add(m.self_attention(x, p + ".attn", H, mask), x), p + ".ln1", 1e-12f);
    x = m.layer_norm(m.add(m.mlp(x, p + ".mlp", F, Activation::Gelu), x), p + ".ln2", 1e-12f);
  }
  m.output("embedding", m.mean_pool(x, mask));
  return m;
}

InputMap inputs() {
  InputMap in;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      in["ids"].push_back(static_cast<float>((b * 13 + s * 5) % V));
      in["mask"].push_back(b == 1 && s >= 4 ? 0.f : 1.f);  // the second sequence is padded after 4
    }
  return in;
}

std::vector<std::string> sorted_kernels(const CompileReport& r) {
  std::vector<std::string> ops;
  for (const KernelReport& k : r.kernels) ops.push_back(k.op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

class PassExportedEncoder : public ::testing::TestWithParam<Device> {};

TEST_P(PassExportedEncoder, RunsTheHandBuiltKernels) {
  CompileOptions opt;
  opt.threads = 1;
  CompiledGraph exported = Session(GetParam()).compile(exported_encoder(), opt);
  CompiledGraph hand = Session(GetParam()).compile_hir(hand_built(), opt);
  const CompileReport& er = exported.report();
  EXPECT_EQ(sorted_kernels(er), sorted_kernels(hand.report())) << "exported: " << kernel_ops(er)
                                                               << "\nhand-built: " << kernel_ops(hand.report());
  // per layer: q, k and v (one product), o (bias + residual), up (bias + gelu), down (bias +
  // residual)
  EXPECT_EQ(count_kernels(er, "fused_matmul"), 4u * L) << kernel_ops(er);
  EXPECT_EQ(count_kernels(er, "attention"), static_cast<size_t>(L));
  EXPECT_EQ(count_kernels(er, "layer_norm"), 1u + 2u * L);
  for (const char* op : {"softmax", "transpose", "matmul", "sqrt", "erf", "add"})
    EXPECT_EQ(count_kernels(er, op), 0u) << op << " in " << kernel_ops(er);

  // The same weights under the same names: the same embedding.
  ParamMap params;
  uint32_t seed = 900;
  for (const std::string& name : hand.param_names())
    params[name] = random_vector(static_cast<size_t>(shape_numel(hand.param_shape(name))), seed++, -0.5f, 0.5f);
  ASSERT_EQ(exported.param_names().size(), params.size());
  for (const auto& [name, data] : params) {
    exported.set_param(name, data);
    hand.set_param(name, data);
  }
  std::vector<NamedInput> named;
  const InputMap in = inputs();
  for (const auto& [name, data] : in) named.push_back({name, data});
  const auto a = exported.run(named), b = hand.run(named);
  EXPECT_LE(max_rel_error(a[0], b[0]), 2e-5);
}

TEST_P(PassExportedEncoder, FusedMatchesUnfused) {
  FusionRuns runs = run_fused_and_plain(exported_encoder(), GetParam(), inputs(), 77);
  EXPECT_GT(runs.plain.kernels.size(), 4 * runs.fused.kernels.size()) << kernel_ops(runs.fused);
  expect_same_outputs(runs, 2e-5);
}

// The pass contract on the exported graph: each pass leaves a verified graph, and a second run of
// the same pass changes nothing.
TEST(PassExportedEncoderContract, VerifiedAndIdempotent) {
  ir::GraphImpl impl = ir::impl_of(exported_encoder());
  passes::eliminate_dead_code(impl);
  std::vector<compile::NamedPass> pipeline = {{"constant_fold", compile::fold_constants}};
  for (const compile::NamedPass& p : compile::fusion_passes()) pipeline.push_back(p);
  for (const auto& [name, pass] : pipeline) {
    SCOPED_TRACE(name);
    const bool changed = pass(impl);
    EXPECT_NO_THROW(passes::verify(impl));
    const std::string text = ir::to_text(impl);
    EXPECT_FALSE(pass(impl)) << "a second run changed the graph";
    EXPECT_EQ(ir::to_text(impl), text);
    // every pass but constant folding finds its pattern in this graph
    if (std::string(name) != "constant_fold" && std::string(name) != "fuse_add_norm") EXPECT_TRUE(changed);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PassExportedEncoder, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
