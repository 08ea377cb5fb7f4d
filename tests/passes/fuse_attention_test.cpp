// SPDX-License-Identifier: Apache-2.0
// fuse_attention: matmul(q, k^T) [* scale] -> softmax -> matmul(., v), built from primitives,
// becomes one attention node and no [Sq, Sk] tensor is left.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <utility>

#include "fusion_harness.hpp"

namespace {

using namespace rungs;
using namespace rungs::testing;

class PassAttention : public ::testing::TestWithParam<Device> {};

// No kernel output has [.., Sq, Sk] as its last two dims.
void expect_no_score_tensor(const CompileReport& rep, int64_t sq, int64_t sk) {
  for (const KernelReport& k : rep.kernels) {
    size_t r = k.shape.size();
    EXPECT_FALSE(r >= 2 && k.shape[r - 2] == sq && k.shape[r - 1] == sk)
        << k.op << " " << shape_to_string(k.shape) << " in " << kernel_ops(rep);
  }
}

enum class Scale { None, MulRight, MulLeft, Div };

Graph rank3(Scale scale, int64_t B, int64_t Sq, int64_t Sk, int64_t D, int64_t Dv) {
  Graph g;
  auto q = g.input("q", {B, Sq, D});
  auto k = g.input("k", {B, Sk, D});
  auto v = g.input("v", {B, Sk, Dv});
  auto s = g.matmul(q, g.transpose(k, {0, 2, 1}));
  auto c = g.constant({0.37f}, {1});
  switch (scale) {
    case Scale::None: break;
    case Scale::MulRight: s = g.mul(s, c); break;
    case Scale::MulLeft: s = g.mul(c, s); break;
    case Scale::Div: s = g.div(s, g.constant({2.5f}, {1})); break;
  }
  g.output("o", g.matmul(g.softmax(s, -1), v));
  return g;
}

TEST_P(PassAttention, Rank3WithEveryScaleForm) {
  const char* names[] = {"none", "mul right", "mul left", "div"};
  int i = 0;
  for (Scale sc : {Scale::None, Scale::MulRight, Scale::MulLeft, Scale::Div}) {
    SCOPED_TRACE(names[i++]);
    Graph g = rank3(sc, 2, 5, 7, 8, 3);  // Sk != Sq, Dv != D
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 40 + i, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u);
    EXPECT_EQ(count_kernels(runs.plain, "softmax"), 1u);
    expect_no_score_tensor(runs.fused, 5, 7);
    // transpose, matmul, [scale], softmax, matmul -> attention; the scale constant dies too
    const long absorbed = sc == Scale::None ? 3 : 5;
    EXPECT_EQ(nodes_removed(runs.fused, "fuse_attention"), absorbed);
    const std::string ir = pass_report(runs.fused, "fuse_attention").ir_after;
    const char* scale_text[] = {"scale=1)", "scale=0.37)", "scale=0.37)", "scale=0.4)"};
    EXPECT_NE(ir.find(scale_text[i - 1]), std::string::npos) << ir;
    expect_same_outputs(runs);
  }
}

TEST_P(PassAttention, Rank3SingleTokenAndBatchOne) {
  Graph g = rank3(Scale::MulRight, 1, 1, 1, 1, 1);
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

// torch's nn.MultiheadAttention as exported: k is [Sk, B*H, Dh] (sequence first) and k^T comes
// from it with perm {1, 2, 0}; q and v are already [B*H, S, Dh].
TEST_P(PassAttention, Rank3KeysSequenceFirstAsMultiheadAttentionExportsThem) {
  Graph g;
  auto q = g.input("q", {4, 5, 8});
  auto k = g.input("k", {7, 4, 8});
  auto v = g.input("v", {4, 7, 3});
  auto s = g.matmul(g.div(q, g.constant({2.f}, {})), g.transpose(k, {1, 2, 0}));
  g.output("o", g.matmul(g.softmax(s, -1), v));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "softmax"), 0u) << kernel_ops(runs.fused);
  expect_no_score_tensor(runs.fused, 5, 7);
  expect_same_outputs(runs);
  // Any other perm of k is not k^T: left alone.
  Graph h;
  auto q2 = h.input("q", {4, 5, 8});
  auto k2 = h.input("k", {8, 4, 5});
  auto v2 = h.input("v", {4, 5, 3});
  h.output("o", h.matmul(h.softmax(h.matmul(q2, h.transpose(k2, {1, 0, 2})), -1), v2));
  FusionRuns other = run_fused_and_plain(h, GetParam());
  EXPECT_EQ(count_kernels(other.fused, "attention"), 0u) << kernel_ops(other.fused);
  expect_same_outputs(other);
}

// x [B, S, H*Dh] -> [B, H, S, Dh] the usual way (reshape, transpose); k goes straight to
// [B, H, Dh, S] with perm {0, 2, 3, 1} or via k^T of [B, H, S, Dh].
Graph rank4(bool k_direct, int64_t B, int64_t H, int64_t Sq, int64_t Sk, int64_t Dh) {
  Graph g;
  auto q3 = g.input("q", {B, Sq, H * Dh});
  auto k3 = g.input("k", {B, Sk, H * Dh});
  auto v3 = g.input("v", {B, Sk, H * Dh});
  auto split = [&](Value x, int64_t S) { return g.reshape(x, {B, S, H, Dh}); };
  auto q = g.transpose(split(q3, Sq), {0, 2, 1, 3});
  auto kt = k_direct ? g.transpose(split(k3, Sk), {0, 2, 3, 1})
                     : g.transpose(g.transpose(split(k3, Sk), {0, 2, 1, 3}), {0, 1, 3, 2});
  auto v = g.transpose(split(v3, Sk), {0, 2, 1, 3});
  auto p = g.softmax(g.mul(g.matmul(q, kt), g.constant({0.5f}, {1})), 3);
  auto o = g.matmul(p, v);  // [B, H, Sq, Dh]
  g.output("o", g.reshape(g.transpose(o, {0, 2, 1, 3}), {B, Sq, H * Dh}));
  return g;
}

TEST_P(PassAttention, Rank4HeadsBecomeAttentionHeads) {
  for (bool k_direct : {true, false}) {
    SCOPED_TRACE(k_direct ? "k^T by one transpose" : "k^T of [B, H, S, Dh]");
    Graph g = rank4(k_direct, 2, 3, 5, 6, 4);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 9, true);
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "softmax"), 0u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "matmul"), 0u) << kernel_ops(runs.fused);
    expect_no_score_tensor(runs.fused, 5, 6);
    // the head split of q, k, v is undone, and the graph's transpose back cancels the pass's own
    EXPECT_EQ(count_kernels(runs.fused, "transpose"), 0u) << kernel_ops(runs.fused);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_NE(pass_report(runs.fused, "fuse_attention").ir_after.find("heads=3"), std::string::npos);
    expect_same_outputs(runs);
  }
}

TEST_P(PassAttention, Rank4FromPlainInputs) {
  // q, k, v arrive as [B, H, S, Dh]: transposes to [B, S, H, Dh] are inserted around the op.
  Graph g;
  auto q = g.input("q", {1, 2, 3, 5});
  auto k = g.input("k", {1, 2, 4, 5});
  auto v = g.input("v", {1, 2, 4, 1});
  g.output("o", g.matmul(g.softmax(g.matmul(q, g.transpose(k, {0, 1, 3, 2}))), v));
  FusionRuns runs = run_fused_and_plain(g, GetParam());
  EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
  expect_no_score_tensor(runs.fused, 3, 4);
  EXPECT_EQ(runs.fused.kernels.back().shape, (Shape{1, 2, 3, 1}));
  expect_same_outputs(runs);
}

TEST_P(PassAttention, PatternsThatMustNotFuse) {
  struct Case {
    const char* name;
    std::function<void(Graph&)> build;
  };
  // Inputs come first in each graph; `kb` is the batch of k.
  struct Io {
    Value q, k, v, extra;
  };
  auto inputs = [](Graph& g, int64_t kb, Shape extra) {
    Io io{g.input("q", {2, 3, 4}), g.input("k", {kb, 3, 4}), g.input("v", {2, 3, 4}), {}};
    io.extra = g.input("extra", extra);
    return io;
  };
  auto scores = [](Graph& g, const Io& io) { return g.matmul(io.q, g.transpose(io.k, {0, 2, 1})); };
  const Case cases[] = {
      {"probabilities are also an output",
       [&](Graph& g) {
         Io io = inputs(g, 2, {1});
         auto p = g.softmax(scores(g, io));
         g.output("o", g.matmul(p, io.v));
         g.output("p", p);
       }},
      {"scores read twice",
       [&](Graph& g) {
         Io io = inputs(g, 2, {1});
         auto s = scores(g, io);
         g.output("o", g.matmul(g.softmax(s), io.v));
         g.output("s", g.relu(s));
       }},
      {"softmax over the query axis",
       [&](Graph& g) {
         Io io = inputs(g, 2, {1});
         g.output("o", g.matmul(g.softmax(scores(g, io), 1), io.v));
       }},
      {"no transpose of k",
       [&](Graph& g) {
         Io io = inputs(g, 2, {2, 4, 3});
         g.output("o", g.matmul(g.softmax(g.matmul(io.q, io.extra)), io.v));
       }},
      {"batch broadcast of k",
       [&](Graph& g) {
         Io io = inputs(g, 1, {1});
         g.output("o", g.matmul(g.softmax(scores(g, io)), io.v));
       }},
      {"scale by a vector",
       [&](Graph& g) {
         Io io = inputs(g, 2, {3});
         g.output("o", g.matmul(g.softmax(g.mul(scores(g, io), io.extra)), io.v));
       }},
      {"additive mask",
       [&](Graph& g) {
         Io io = inputs(g, 2, {2, 1, 3});
         g.output("o", g.matmul(g.softmax(g.add(scores(g, io), io.extra)), io.v));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph g;
    c.build(g);
    FusionRuns runs = run_fused_and_plain(g, GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    EXPECT_FALSE(pass_report(runs.fused, "fuse_attention").changed);
    expect_same_outputs(runs);
  }
}

// -inf where key j is after query i (bottom-right aligned), 0 elsewhere: [sq, sk].
std::vector<float> causal_mask(int64_t sq, int64_t sk) {
  std::vector<float> m;
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < sk; ++j) m.push_back(j > i + (sk - sq) ? -INFINITY : 0.f);
  return m;
}

// softmax(q k^T * 0.3 + mask) v with a constant mask of shape `ms`.
Graph masked_rank3(int64_t B, int64_t Sq, int64_t Sk, const std::vector<float>& mask, Shape ms, bool mask_left) {
  Graph g;
  auto q = g.input("q", {B, Sq, 6});
  auto k = g.input("k", {B, Sk, 6});
  auto v = g.input("v", {B, Sk, 5});
  auto s = g.mul(g.matmul(q, g.transpose(k, {0, 2, 1})), g.constant({0.3f}, {1}));
  auto m = g.constant(mask, ms);
  s = mask_left ? g.add(m, s) : g.add(s, m);
  g.output("o", g.matmul(g.softmax(s), v));
  return g;
}

TEST_P(PassAttention, ConstantCausalMaskBecomesCausal) {
  for (auto [sq, sk] : {std::pair<int64_t, int64_t>{4, 4}, {3, 7}, {1, 1}}) {
    SCOPED_TRACE(std::to_string(sq) + " queries, " + std::to_string(sk) + " keys");
    Graph g = masked_rank3(2, sq, sk, causal_mask(sq, sk), {sq, sk}, false);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 77, true);
    EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u);
    const std::string ir = pass_report(runs.fused, "fuse_attention").ir_after;
    EXPECT_NE(ir.find("heads=1, causal, scale=0.3)"), std::string::npos) << ir;
    expect_same_outputs(runs);
  }
}

TEST_P(PassAttention, ConstantKeyMaskBecomesAKeepMask) {
  // [B, 1, Sk]: batch 0 keeps every key, batch 1 drops keys 1 and 4
  const int64_t sk = 5;
  std::vector<float> mask(2 * sk, 0.f);
  mask[sk + 1] = mask[sk + 4] = -INFINITY;
  Graph g = masked_rank3(2, 3, sk, mask, {2, 1, sk}, true);
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 78, true);
  EXPECT_EQ(runs.fused.kernels.size(), 1u) << kernel_ops(runs.fused);
  const std::string ir = pass_report(runs.fused, "fuse_attention").ir_after;
  EXPECT_NE(ir.find("masked"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("causal"), std::string::npos) << ir;
  expect_same_outputs(runs);
}

TEST_P(PassAttention, Rank4WithACausalMask) {
  const int64_t B = 2, H = 2, S = 4, Dh = 3;
  Graph g;
  auto x = g.input("x", {B, S, H * Dh});
  auto heads = g.transpose(g.reshape(x, {B, S, H, Dh}), {0, 2, 1, 3});
  auto s = g.matmul(heads, g.transpose(heads, {0, 1, 3, 2}));
  s = g.add(s, g.constant(causal_mask(S, S), {1, 1, S, S}));
  g.output("o", g.matmul(g.softmax(s), heads));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {}, 79, true);
  EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "softmax"), 0u) << kernel_ops(runs.fused);
  expect_no_score_tensor(runs.fused, S, S);
  EXPECT_NE(pass_report(runs.fused, "fuse_attention").ir_after.find("heads=2, causal"), std::string::npos);
  expect_same_outputs(runs);
}

TEST_P(PassAttention, MasksThatDoNotMapExactlyAreLeftAlone) {
  {  // finite "-1e9" instead of -inf
    std::vector<float> mask = causal_mask(3, 3);
    for (float& m : mask) m = std::isinf(m) ? -1e9f : 0.f;
    FusionRuns runs = run_fused_and_plain(masked_rank3(1, 3, 3, mask, {3, 3}, false), GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {  // neither causal nor the same for every query row
    std::vector<float> mask(9, 0.f);
    mask[1] = -INFINITY;
    FusionRuns runs = run_fused_and_plain(masked_rank3(2, 3, 3, mask, {3, 3}, false), GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {  // a key mask that drops every key of batch 1 (NaN with primitives, zeros with attention)
    std::vector<float> mask{0.f, 0.f, -INFINITY, -INFINITY};
    CompiledGraph c = Session(GetParam()).compile(masked_rank3(2, 3, 2, mask, {2, 1, 2}, false));
    EXPECT_EQ(count_kernels(c.report(), "attention"), 0u) << kernel_ops(c.report());
  }
  {  // causal with fewer keys than queries: the first query rows see no key at all
    CompiledGraph c = Session(GetParam()).compile(masked_rank3(1, 4, 2, causal_mask(4, 2), {4, 2}, false));
    EXPECT_EQ(count_kernels(c.report(), "attention"), 0u) << kernel_ops(c.report());
  }
  {  // a mask that differs per head
    const int64_t S = 3;
    Graph g;
    auto q = g.input("q", {1, 2, S, 4});
    std::vector<float> mask = causal_mask(S, S);
    std::vector<float> two_heads = mask;
    two_heads.insert(two_heads.end(), S * S, 0.f);
    auto s = g.add(g.matmul(q, g.transpose(q, {0, 1, 3, 2})), g.constant(two_heads, {2, S, S}));
    g.output("o", g.matmul(g.softmax(s), q));
    FusionRuns runs = run_fused_and_plain(g, GetParam());
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
}

// Self-attention as PyTorch's ONNX exporter writes a BERT layer (opset 14): q/k/v linear (Add(bias,
// MatMul)), Reshape [B, S, H, Dh], Transpose (k straight to [B, H, Dh, S]), MatMul, Div by
// sqrt(Dh), Add of the extended mask built from the [B, S] input, Softmax, MatMul, Transpose back,
// Reshape [B, S, D], then the output linear and the residual.
enum class MaskForm {
  OneMinusTimesMinus10000,
  OneMinusTimesFinfoMin,
  PadMaskTimesMinus10000,
  MinusHundred,
  WhereNotEqualFinfo,        // where(not(mask == 0), scores, finfo.min), opset 17 sentence encoder
  WhereEqualExpandedNegInf,  // where(expand(mask == 0), -inf, scores), DistilBERT's masked_fill
  AddWhere,                  // scores + where(mask, 0, -inf)
  WhereMinusHundred,         // where(not(mask == 0), scores, -100): masked keys keep a weight
  WhereAlwaysScores,         // where(mask >= 0, scores, -inf): nothing is masked for 0/1 masks
  None
};

Graph exported_bert_attention(MaskForm form, int64_t B = 2, int64_t S = 5, int64_t H = 2, int64_t Dh = 4) {
  const int64_t D = H * Dh;
  Graph g;
  auto x = g.input("x", {B, S, D});
  auto mask = g.input("mask", {B, S});
  auto linear = [&](Value in, const std::string& name) {
    return g.add(g.param(name + ".bias", {D}), g.matmul(in, g.param(name + ".weight", {D, D})));
  };
  auto split = [&](Value t) { return g.reshape(t, {B, S, H, Dh}); };
  auto q = g.transpose(split(linear(x, "q")), {0, 2, 1, 3});
  auto kt = g.transpose(split(linear(x, "k")), {0, 2, 3, 1});
  auto v = g.transpose(split(linear(x, "v")), {0, 2, 1, 3});
  auto s = g.div(g.matmul(q, kt), g.constant({std::sqrt(static_cast<float>(Dh))}, {}));
  auto m4 = g.reshape(mask, {B, 1, 1, S});  // Unsqueeze(1), Unsqueeze(2), Cast
  auto one_minus = g.sub(g.constant({1.f}, {}), m4);
  switch (form) {
    case MaskForm::OneMinusTimesMinus10000: s = g.add(s, g.mul(one_minus, g.constant({-10000.f}, {}))); break;
    case MaskForm::OneMinusTimesFinfoMin:
      s = g.add(s, g.mul(one_minus, g.constant({-3.4028234663852886e+38f}, {})));
      break;
    case MaskForm::PadMaskTimesMinus10000: s = g.add(g.mul(g.constant({-10000.f}, {}), m4), s); break;
    case MaskForm::MinusHundred: s = g.add(s, g.mul(one_minus, g.constant({-100.f}, {}))); break;
    case MaskForm::WhereNotEqualFinfo:
    case MaskForm::WhereMinusHundred: {
      auto keep = g.reshape(g.logical_not(g.equal(mask, g.constant({0.f}, {}))), {B, 1, 1, S});
      const float c = form == MaskForm::WhereMinusHundred ? -100.f : -3.4028234663852886e+38f;
      s = g.where(keep, s, g.constant({c}, {}));
      break;
    }
    case MaskForm::WhereEqualExpandedNegInf: {
      auto pad = g.reshape(g.equal(mask, g.constant({0.f}, {})), {B, 1, 1, S});
      auto expanded = g.add(pad, g.constant(std::vector<float>(B * H * S * S, 0.f), {B, H, S, S}));
      s = g.where(expanded, g.constant({-INFINITY}, {}), s);
      break;
    }
    case MaskForm::AddWhere:
      s = g.add(s, g.where(m4, g.constant({0.f}, {}), g.constant({-INFINITY}, {})));
      break;
    case MaskForm::WhereAlwaysScores:
      s = g.where(g.greater_equal(m4, g.constant({0.f}, {})), s, g.constant({-INFINITY}, {}));
      break;
    case MaskForm::None: break;
  }
  auto o = g.matmul(g.softmax(s, -1), v);
  auto merged = g.reshape(g.transpose(o, {0, 2, 1, 3}), {B, S, -1});
  g.output("y", g.add(linear(merged, "o"), x));
  return g;
}

// batch 0 keeps every key, batch 1 keeps the first three (padding after)
std::vector<float> keep_mask_b2s5() { return {1, 1, 1, 1, 1, 1, 1, 1, 0, 0}; }

TEST_P(PassAttention, ExportedBertAttentionWithRunTimeMask) {
  const std::pair<const char*, MaskForm> forms[] = {
      {"(1 - m) * -10000", MaskForm::OneMinusTimesMinus10000},
      {"(1 - m) * finfo.min", MaskForm::OneMinusTimesFinfoMin},
      {"where(not(m == 0), s, finfo.min)", MaskForm::WhereNotEqualFinfo},
      {"where(expand(m == 0), -inf, s)", MaskForm::WhereEqualExpandedNegInf},
      {"s + where(m, 0, -inf)", MaskForm::AddWhere},
  };
  for (const auto& [name, form] : forms) {
    SCOPED_TRACE(name);
    FusionRuns runs =
        run_fused_and_plain(exported_bert_attention(form), GetParam(), {{"mask", keep_mask_b2s5()}}, 31, true);
    // the q, k and v linears as one product (fuse_qkv), the o linear (bias and residual) and one
    // masked attention, nothing else
    EXPECT_EQ(runs.fused.kernels.size(), 3u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "fused_matmul"), 2u) << kernel_ops(runs.fused);
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
    expect_no_score_tensor(runs.fused, 5, 5);
    const std::string ir = pass_report(runs.fused, "fuse_attention").ir_after;
    EXPECT_NE(ir.find("heads=2, masked, scale=0.5)"), std::string::npos) << ir;
    expect_same_outputs(runs);
  }
}

TEST_P(PassAttention, RunTimePadMaskIsInverted) {
  // m * -10000 with m = 1 on padding: the keep mask is 1 - m
  std::vector<float> pad = keep_mask_b2s5();
  for (float& p : pad) p = 1.f - p;
  FusionRuns runs =
      run_fused_and_plain(exported_bert_attention(MaskForm::PadMaskTimesMinus10000), GetParam(), {{"mask", pad}}, 32, true);
  EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
  EXPECT_EQ(count_kernels(runs.fused, "softmax"), 0u) << kernel_ops(runs.fused);
  expect_same_outputs(runs);
}

TEST_P(PassAttention, ExportedAttentionNodeCount) {
  // x, mask, 8 params; q/k/v: matmul, add, reshape, transpose; scores: matmul, constant, div;
  // mask: reshape, constant, sub, constant, mul; add, softmax, matmul, transpose, reshape
  Graph g = exported_bert_attention(MaskForm::OneMinusTimesMinus10000);
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"mask", keep_mask_b2s5()}}, 33);
  const PassReport& p = pass_report(runs.fused, "fuse_attention");
  // absorbed: the q, k, v head splits (3 reshapes, 3 transposes: the attention reads the linears'
  // [B, S, D] outputs), matmul, constant, div, the mask's 5 nodes, add, softmax, matmul (17);
  // added: attention and its [B, S, H, Dh] view; the graph's transpose back becomes a view
  EXPECT_EQ(p.nodes_before - p.nodes_after, 15u) << p.ir_after;
  expect_same_outputs(runs);
}

// DistilBERT's export: q / sqrt(Dh) before the product, and the mask expanded to the scores'
// shape (ONNX Expand, which the frontend writes as an add of a constant of zeros).
TEST_P(PassAttention, ScaledQueriesAndExpandedMask) {
  const int64_t B = 2, S = 5, H = 2, Dh = 4, D = H * Dh;
  Graph g;
  auto x = g.input("x", {B, S, D});
  auto mask = g.input("mask", {B, S});
  auto heads = [&](const char* name, std::vector<int> perm) {
    auto t = g.add(g.param(std::string(name) + ".bias", {D}), g.matmul(x, g.param(std::string(name) + ".w", {D, D})));
    return g.transpose(g.reshape(t, {B, S, H, Dh}), perm);
  };
  auto q = g.div(heads("q", {0, 2, 1, 3}), g.constant({2.f}, {}));
  auto s = g.matmul(q, heads("k", {0, 2, 3, 1}));
  auto ext = g.mul(g.sub(g.constant({1.f}, {}), g.reshape(mask, {B, 1, 1, S})), g.constant({-10000.f}, {}));
  auto expanded = g.add(ext, g.constant(std::vector<float>(B * H * S * S, 0.f), {B, H, S, S}));
  auto o = g.matmul(g.softmax(g.add(s, expanded), -1), heads("v", {0, 2, 1, 3}));
  g.output("y", g.reshape(g.transpose(o, {0, 2, 1, 3}), {B, S, D}));
  FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"mask", keep_mask_b2s5()}}, 34, true);
  EXPECT_EQ(runs.fused.kernels.size(), 2u) << kernel_ops(runs.fused);  // q, k, v linears (one) and attention
  EXPECT_EQ(count_kernels(runs.fused, "attention"), 1u) << kernel_ops(runs.fused);
  const std::string ir = pass_report(runs.fused, "fuse_attention").ir_after;
  EXPECT_NE(ir.find("heads=2, masked, scale=0.5)"), std::string::npos) << ir;
  // the [B, H, S, S] zeros are no longer read: the compiled graph does not keep them
  EXPECT_EQ(ir.find(std::to_string(B * H * S * S) + " values"), std::string::npos) << ir;
  expect_same_outputs(runs);
}

TEST_P(PassAttention, RunTimeMasksThatDoNotMapAreLeftAlone) {
  for (auto [name, form] : {std::pair{"where(not(m == 0), s, -100)", MaskForm::WhereMinusHundred},
                            {"where(m >= 0, s, -inf)", MaskForm::WhereAlwaysScores}}) {
    SCOPED_TRACE(name);
    FusionRuns runs = run_fused_and_plain(exported_bert_attention(form), GetParam(), {{"mask", keep_mask_b2s5()}});
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("(1 - m) * -100 leaves masked keys a weight");
    FusionRuns runs =
        run_fused_and_plain(exported_bert_attention(MaskForm::MinusHundred), GetParam(), {{"mask", keep_mask_b2s5()}});
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("a mask that varies over queries");
    Graph g;
    auto q = g.input("q", {1, 2, 3, 4});
    auto m = g.input("m", {1, 1, 3, 3});
    auto s = g.add(g.matmul(q, g.transpose(q, {0, 1, 3, 2})), g.mul(g.sub(g.constant({1.f}, {}), m),
                                                                    g.constant({-10000.f}, {})));
    g.output("o", g.matmul(g.softmax(s), q));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"m", {1, 1, 0, 1, 0, 1, 1, 1, 1}}});
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("a mask built from two inputs");
    Graph g;
    auto q = g.input("q", {2, 3, 4});
    auto a = g.input("a", {2, 1, 3});
    auto b = g.input("b", {2, 1, 3});
    auto s = g.add(g.matmul(q, g.transpose(q, {0, 2, 1})),
                   g.mul(g.sub(g.constant({1.f}, {}), g.mul(a, b)), g.constant({-10000.f}, {})));
    g.output("o", g.matmul(g.softmax(s), q));
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"a", {1, 1, 0, 1, 1, 1}}, {"b", {1, 1, 1, 1, 0, 1}}});
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
  {
    SCOPED_TRACE("the masked scores are also an output");
    Graph g;
    auto q = g.input("q", {2, 3, 4});
    auto m = g.input("m", {2, 3});
    auto s = g.matmul(q, g.transpose(q, {0, 2, 1}));
    auto am = g.mul(g.sub(g.constant({1.f}, {}), g.reshape(m, {2, 1, 3})), g.constant({-10000.f}, {}));
    g.output("o", g.matmul(g.softmax(g.add(s, am)), q));
    g.output("s", s);
    FusionRuns runs = run_fused_and_plain(g, GetParam(), {{"m", {1, 1, 0, 1, 1, 1}}});
    EXPECT_EQ(count_kernels(runs.fused, "attention"), 0u) << kernel_ops(runs.fused);
    expect_same_outputs(runs);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PassAttention, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
