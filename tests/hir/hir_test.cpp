// SPDX-License-Identifier: Apache-2.0
// HirModule blocks: the params they create, their lowering, and their values against primitive
// compositions and scalar loops.
#include <gtest/gtest.h>

#include <cmath>

#include "test_models.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;
using rungs::testing::max_rel_error;
using rungs::testing::random_vector;

TEST(Hir, LinearParamsAndValues) {
  HirModule m;
  auto x = m.input("x", {3, 5});
  m.output("y", m.linear(x, "fc", 4, Activation::Relu));
  auto params = m.params();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0], (std::pair<std::string, Shape>{"fc.weight", {5, 4}}));
  EXPECT_EQ(params[1], (std::pair<std::string, Shape>{"fc.bias", {4}}));
  auto xv = random_vector(15, 1), w = random_vector(20, 2), b = random_vector(4, 3);
  for (Device d : {Device::Reference, Device::Cpu}) {
    CompiledGraph c = Session(d).compile_hir(m);
    c.set_param("fc.weight", w);
    c.set_param("fc.bias", b);
    NamedInput in{"x", xv};
    auto y = c.run({&in, 1})[0];
    std::vector<float> want(12);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        double acc = b[j];
        for (int k = 0; k < 5; ++k) acc += double(xv[i * 5 + k]) * w[k * 4 + j];
        want[i * 4 + j] = static_cast<float>(std::max(acc, 0.0));
      }
    EXPECT_LT(max_rel_error(y, want), 1e-6) << to_string(d);
  }
}

TEST(Hir, LinearWithoutBiasOnRank3) {
  HirModule m;
  auto x = m.input("x", {2, 3, 5});
  auto y = m.linear(x, "p", 7, Activation::None, false);
  EXPECT_EQ(m.shape(y), (Shape{2, 3, 7}));
  ASSERT_EQ(m.params().size(), 1u);
  EXPECT_EQ(m.params()[0].first, "p.weight");
}

TEST(Hir, BlockParamNames) {
  HirModule m;
  auto ids = m.input("ids", {1, 6});
  auto mask = m.input("mask", {1, 6});
  auto h = m.embedding(ids, "emb", 10, 8);
  h = m.layer_norm(h, "ln");
  h = m.rms_norm(h, "rms");
  h = m.self_attention(h, "attn", 2, mask, true);
  h = m.mlp(h, "mlp", 16, Activation::Silu);
  m.output("pooled", m.mean_pool(h, mask));
  std::vector<std::string> names;
  for (const auto& p : m.params()) names.push_back(p.first);
  std::vector<std::string> want = {"emb.table",      "ln.gamma",     "ln.beta",          "rms.gamma",
                                   "attn.q.weight",  "attn.q.bias",  "attn.k.weight",    "attn.k.bias",
                                   "attn.v.weight",  "attn.v.bias",  "attn.o.weight",    "attn.o.bias",
                                   "mlp.up.weight",  "mlp.up.bias",  "mlp.down.weight",  "mlp.down.bias"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(m.lower().shape(Value{static_cast<uint32_t>(m.lower().node_count() - 1)}), (Shape{1, 8}));
}

TEST(Hir, SelfAttentionEqualsPrimitiveComposition) {
  const int64_t B = 2, S = 5, D = 8;
  HirModule m;
  auto x = m.input("x", {B, S, D});
  auto mask = m.input("mask", {B, S});
  m.output("y", m.self_attention(x, "a", 2, mask, false));
  ParamMap params = rungs::testing::random_params(m, 11);

  Graph g;
  auto gx = g.input("x", {B, S, D});
  auto gm = g.input("mask", {B, S});
  auto proj = [&](Value v, const std::string& n) {
    return g.add(g.matmul(v, g.constant(params[n + ".weight"], {D, D})), g.constant(params[n + ".bias"], {D}));
  };
  AttentionOptions opt;
  opt.heads = 2;
  opt.key_mask = gm;
  g.output("y", proj(g.attention(proj(gx, "a.q"), proj(gx, "a.k"), proj(gx, "a.v"), opt), "a.o"));

  auto xv = random_vector(B * S * D, 5);
  std::vector<float> mv = {1, 1, 1, 0, 0, 1, 0, 1, 1, 1};
  auto want = rungs::testing::compile_and_run(g, Device::Reference, {{"x", xv}, {"mask", mv}})[0];
  for (Device d : {Device::Reference, Device::Cpu}) {
    CompiledGraph c = Session(d).compile_hir(m);
    for (const auto& [n, v] : params) c.set_param(n, v);
    std::vector<NamedInput> in = {{"x", xv}, {"mask", mv}};
    EXPECT_LT(max_rel_error(c.run(in)[0], want), 1e-5) << to_string(d);
  }
}

TEST(Hir, MeanPoolExcludesMaskedRows) {
  HirModule m;
  auto x = m.input("x", {2, 4, 3});
  auto mask = m.input("mask", {2, 4});
  m.output("masked", m.mean_pool(x, mask));
  m.output("plain", m.mean_pool(x));
  auto xv = random_vector(24, 3);
  std::vector<float> mv = {1, 1, 0, 0, 0, 0, 0, 0};  // batch 1 fully masked: pools to zeros
  std::vector<NamedInput> in = {{"x", xv}, {"mask", mv}};
  for (Device d : {Device::Reference, Device::Cpu}) {
    auto out = Session(d).compile_hir(m).run(in);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(out[0][k], (xv[k] + xv[3 + k]) / 2, 1e-6);
      EXPECT_EQ(out[0][3 + k], 0.f);
      EXPECT_NEAR(out[1][k], (xv[k] + xv[3 + k] + xv[6 + k] + xv[9 + k]) / 4, 1e-6);
    }
  }
}

TEST(Hir, ErrorsLeaveModuleUnchanged) {
  HirModule m;
  auto x = m.input("x", {2, 4});
  m.linear(x, "fc", 3);
  size_t params = m.params().size(), nodes = m.lower().node_count();
  expect_error([&] { m.linear(x, "fc", 3); }, ErrorCode::InvalidArgument, "'fc' is already used by another block");
  expect_error([&] { m.self_attention(x, "att", 2); }, ErrorCode::ShapeMismatch, "x must be [B, S, D], got [2, 4]");
  auto x3 = m.input("x3", {1, 2, 6});
  nodes = m.lower().node_count();
  expect_error([&] { m.self_attention(x3, "att", 4); }, ErrorCode::InvalidArgument, "heads=4 must be >= 1 and divide the width 6");
  expect_error([&] { m.mean_pool(x3, x); }, ErrorCode::ShapeMismatch, "mask must be [B, S] = [1, 2]");
  expect_error([&] { m.mir([](Graph& g, std::span<const Value> a) { g.relu(a[0]); return g.matmul(a[0], a[0]); }, {x}); },
               ErrorCode::ShapeMismatch, "matmul");
  EXPECT_EQ(m.params().size(), params);
  EXPECT_EQ(m.lower().node_count(), nodes);
}

TEST(Hir, MirEscapeHatchAndParamsFromIt) {
  HirModule m;
  auto x = m.input("x", {2, 3});
  auto y = m.mir([](Graph& g, std::span<const Value> a) { return g.mul(a[0], g.param("scale", {3})); }, {x});
  m.output("y", y);
  ASSERT_EQ(m.params().size(), 1u);
  EXPECT_EQ(m.params()[0].first, "scale");
  CompiledGraph c = Session(Device::Cpu).compile_hir(m);
  c.set_param("scale", std::vector<float>{1, 2, 3});
  std::vector<float> xv = {1, 1, 1, 2, 2, 2};
  NamedInput in{"x", xv};
  EXPECT_EQ(c.run({&in, 1})[0], (std::vector<float>{1, 2, 3, 2, 4, 6}));
}

TEST(Hir, EncoderPaddingCorrectness) {
  // Compiled at extent 32 and run on 19 real tokens with the mask == compiled at exactly 19.
  auto enc32 = rungs::testing::make_encoder(32);
  auto enc19 = rungs::testing::make_encoder(19);
  ParamMap params = rungs::testing::random_params(enc32, 3);
  auto [ids32, mask32] = rungs::testing::encoder_inputs(19, 32, 50, 1);
  auto [ids19, mask19] = rungs::testing::encoder_inputs(19, 19, 50, 1);
  for (Device d : {Device::Reference, Device::Cpu}) {
    CompiledGraph a = Session(d).compile_hir(enc32), b = Session(d).compile_hir(enc19);
    for (const auto& [n, v] : params) {
      a.set_param(n, v);
      b.set_param(n, v);
    }
    std::vector<NamedInput> in32 = {{"ids", ids32}, {"mask", mask32}}, in19 = {{"ids", ids19}, {"mask", mask19}};
    auto pa = a.run(in32), pb = b.run(in19);
    EXPECT_LT(max_rel_error(pa[1], pb[1]), 1e-5) << to_string(d);
    std::vector<float> real_tokens(pa[0].begin(), pa[0].begin() + 19 * 32);
    EXPECT_LT(max_rel_error(real_tokens, pb[0]), 1e-5) << to_string(d);
  }
}

}  // namespace
