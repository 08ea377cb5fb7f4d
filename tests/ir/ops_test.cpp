// SPDX-License-Identifier: Apache-2.0
// Every primitive op on both devices against an independent scalar implementation written here,
// at awkward shapes (size 1, odd sizes, broadcasting, batch > 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::compile_and_run;
using rungs::testing::max_rel_error;
using rungs::testing::random_vector;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Multi-index of flat position e in shape s.
std::vector<int64_t> unravel(int64_t e, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t i = s.size(); i-- > 0;) {
    idx[i] = e % s[i];
    e /= s[i];
  }
  return idx;
}

// Flat position in `in` of output multi-index `idx` under numpy broadcasting.
int64_t broadcast_offset(const std::vector<int64_t>& idx, const Shape& in) {
  int64_t off = 0;
  size_t shift = idx.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) off = off * in[i] + (in[i] == 1 ? 0 : idx[i + shift]);
  return off;
}

class Ops : public ::testing::TestWithParam<Device> {
 protected:
  std::vector<float> run1(const Graph& g, const std::vector<std::pair<std::string, std::vector<float>>>& in) {
    return compile_and_run(g, GetParam(), in)[0];
  }
};

TEST_P(Ops, UnaryOps) {
  struct U {
    std::function<Value(Graph&, Value)> build;
    std::function<double(double)> f;
    float lo, hi;
  };
  std::vector<U> ops = {
      {[](Graph& g, Value x) { return g.relu(x); }, [](double x) { return x > 0 ? x : 0; }, -3, 3},
      {[](Graph& g, Value x) { return g.gelu(x); }, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -4, 4},
      {[](Graph& g, Value x) { return g.gelu_tanh(x); },
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }, -4, 4},
      {[](Graph& g, Value x) { return g.silu(x); }, [](double x) { return x / (1 + std::exp(-x)); }, -6, 6},
      {[](Graph& g, Value x) { return g.sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); }, -6, 6},
      {[](Graph& g, Value x) { return g.tanh(x); }, [](double x) { return std::tanh(x); }, -3, 3},
      {[](Graph& g, Value x) { return g.exp(x); }, [](double x) { return std::exp(x); }, -5, 5},
      {[](Graph& g, Value x) { return g.log(x); }, [](double x) { return std::log(x); }, 0.01f, 10},
      {[](Graph& g, Value x) { return g.sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 10},
      {[](Graph& g, Value x) { return g.rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); }, 0.01f, 10},
      {[](Graph& g, Value x) { return g.neg(x); }, [](double x) { return -x; }, -3, 3},
      {[](Graph& g, Value x) { return g.abs(x); }, [](double x) { return std::fabs(x); }, -3, 3},
      {[](Graph& g, Value x) { return g.erf(x); }, [](double x) { return std::erf(x); }, -4, 4},
      {[](Graph& g, Value x) { return g.sin(x); }, [](double x) { return std::sin(x); }, -10, 10},
      {[](Graph& g, Value x) { return g.cos(x); }, [](double x) { return std::cos(x); }, -300, 300},
      {[](Graph& g, Value x) { return g.logical_not(g.relu(x)); }, [](double x) { return x > 0 ? 0 : 1; }, -3, 3},
  };
  for (Shape shape : {Shape{1}, Shape{7}, Shape{3, 17}, Shape{2, 1, 33}}) {
    for (size_t k = 0; k < ops.size(); ++k) {
      Graph g;
      auto x = g.input("x", shape);
      g.output("y", ops[k].build(g, x));
      auto in = random_vector(numel(shape), 100 + k, ops[k].lo, ops[k].hi);
      auto out = run1(g, {{"x", in}});
      std::vector<float> want(in.size());
      for (size_t i = 0; i < in.size(); ++i) want[i] = static_cast<float>(ops[k].f(in[i]));
      EXPECT_LT(max_rel_error(out, want), 2e-6) << "op " << k << " shape " << shape_to_string(shape);
    }
  }
}

TEST_P(Ops, BinaryOpsBroadcast) {
  struct B {
    std::function<Value(Graph&, Value, Value)> build;
    std::function<double(double, double)> f;
  };
  std::vector<B> ops = {
      {[](Graph& g, Value a, Value b) { return g.add(a, b); }, [](double a, double b) { return a + b; }},
      {[](Graph& g, Value a, Value b) { return g.sub(a, b); }, [](double a, double b) { return a - b; }},
      {[](Graph& g, Value a, Value b) { return g.mul(a, b); }, [](double a, double b) { return a * b; }},
      {[](Graph& g, Value a, Value b) { return g.div(a, b); }, [](double a, double b) { return a / b; }},
      {[](Graph& g, Value a, Value b) { return g.maximum(a, b); }, [](double a, double b) { return std::max(a, b); }},
      {[](Graph& g, Value a, Value b) { return g.minimum(a, b); }, [](double a, double b) { return std::min(a, b); }},
      {[](Graph& g, Value a, Value b) { return g.pow(a, b); }, [](double a, double b) { return std::pow(a, b); }},
      {[](Graph& g, Value a, Value b) { return g.equal(a, g.relu(b)); }, [](double a, double b) { return a == b; }},
      {[](Graph& g, Value a, Value b) { return g.less(a, b); }, [](double a, double b) { return a < b; }},
      {[](Graph& g, Value a, Value b) { return g.greater(a, b); }, [](double a, double b) { return a > b; }},
      {[](Graph& g, Value a, Value b) { return g.less_equal(a, b); }, [](double a, double b) { return a <= b; }},
      {[](Graph& g, Value a, Value b) { return g.greater_equal(a, b); }, [](double a, double b) { return a >= b; }},
  };
  std::vector<std::pair<Shape, Shape>> shapes = {
      {{5}, {5}}, {{3, 1}, {1, 4}}, {{2, 3, 5}, {5}}, {{2, 1, 5}, {3, 1}}, {{1}, {4, 3}}, {{2, 3, 17}, {2, 3, 17}}};
  for (const auto& [sa, sb] : shapes)
    for (size_t k = 0; k < ops.size(); ++k) {
      Graph g;
      auto a = g.input("a", sa);
      auto b = g.input("b", sb);
      auto y = ops[k].build(g, a, b);
      g.output("y", y);
      Shape so = g.shape(y);
      auto va = random_vector(numel(sa), 7, -2, 2);
      auto vb = random_vector(numel(sb), 8, 0.5f, 2);  // positive: safe divisor
      auto out = run1(g, {{"a", va}, {"b", vb}});
      std::vector<float> want(numel(so));
      for (int64_t e = 0; e < numel(so); ++e) {
        auto idx = unravel(e, so);
        want[e] = static_cast<float>(ops[k].f(va[broadcast_offset(idx, sa)], vb[broadcast_offset(idx, sb)]));
      }
      EXPECT_LT(max_rel_error(out, want), 1e-6) << "op " << k << " " << shape_to_string(sa) << " x " << shape_to_string(sb);
    }
}

TEST_P(Ops, WhereBroadcastsAllThree) {
  struct C {
    Shape c, a, b;
  };
  for (const C& sh : {C{{5}, {5}, {5}}, C{{3, 1}, {1, 4}, {4}}, C{{2, 1, 5}, {3, 1}, {1}}, C{{1}, {1}, {2, 3}},
                      C{{4, 1, 1}, {1, 7, 1}, {1, 1, 9}}}) {
    Graph g;
    auto c = g.input("c", sh.c), a = g.input("a", sh.a), b = g.input("b", sh.b);
    auto y = g.where(g.greater(c, g.constant({0.f}, {1})), a, b);
    g.output("y", y);
    Shape so = g.shape(y);
    auto vc = random_vector(numel(sh.c), 3, -1, 1), va = random_vector(numel(sh.a), 4), vb = random_vector(numel(sh.b), 5);
    auto out = run1(g, {{"c", vc}, {"a", va}, {"b", vb}});
    ASSERT_EQ(out.size(), static_cast<size_t>(numel(so)));
    for (int64_t e = 0; e < numel(so); ++e) {
      auto idx = unravel(e, so);
      const float want = vc[broadcast_offset(idx, sh.c)] > 0 ? va[broadcast_offset(idx, sh.a)] : vb[broadcast_offset(idx, sh.b)];
      EXPECT_EQ(out[e], want) << shape_to_string(sh.c) << " element " << e;
    }
  }
}

TEST_P(Ops, MatmulBatchBroadcast) {
  for (auto [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{1, 1}, {1, 1}},
                                                            {{3, 5}, {5, 7}},
                                                            {{2, 4, 9}, {9, 3}},
                                                            {{2, 1, 3, 4}, {3, 4, 6}},
                                                            {{17, 33}, {33, 65}}}) {
    Graph g;
    auto a = g.input("a", sa);
    auto b = g.input("b", sb);
    auto y = g.matmul(a, b);
    g.output("y", y);
    Shape so = g.shape(y);
    auto va = random_vector(numel(sa), 1), vb = random_vector(numel(sb), 2);
    auto out = run1(g, {{"a", va}, {"b", vb}});
    const int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
    Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2), bo(so.begin(), so.end() - 2);
    std::vector<float> want(numel(so));
    for (int64_t e = 0; e < numel(bo); ++e) {
      auto idx = unravel(e, bo);
      int64_t oa = broadcast_offset(idx, ba), ob = broadcast_offset(idx, bb);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += double(va[(oa * M + i) * K + k]) * vb[(ob * K + k) * N + j];
          want[(e * M + i) * N + j] = static_cast<float>(acc);
        }
    }
    EXPECT_LT(max_rel_error(out, want), 1e-5) << shape_to_string(sa) << " x " << shape_to_string(sb);
  }
}

TEST_P(Ops, SoftmaxAnyAxis) {
  Shape s{3, 4, 5};
  for (int axis : {0, 1, 2, -1}) {
    Graph g;
    g.output("y", g.softmax(g.input("x", s), axis));
    auto x = random_vector(60, 3, -4, 4);
    auto out = run1(g, {{"x", x}});
    int a = axis < 0 ? axis + 3 : axis;
    std::vector<float> want(60);
    for (int64_t e = 0; e < 60; ++e) {
      auto idx = unravel(e, s);
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < s[a]; ++j) {
        auto k = idx;
        k[a] = j;
        m = std::max<double>(m, x[(k[0] * 4 + k[1]) * 5 + k[2]]);
      }
      for (int64_t j = 0; j < s[a]; ++j) {
        auto k = idx;
        k[a] = j;
        sum += std::exp(x[(k[0] * 4 + k[1]) * 5 + k[2]] - m);
      }
      want[e] = static_cast<float>(std::exp(x[e] - m) / sum);
    }
    EXPECT_LT(max_rel_error(out, want), 1e-6) << "axis " << axis;
  }
}

TEST_P(Ops, LayerNormAndRmsNorm) {
  for (Shape s : {Shape{1, 1}, Shape{3, 7}, Shape{2, 5, 33}}) {
    const int64_t d = s.back(), rows = numel(s) / d;
    auto x = random_vector(numel(s), 4, -3, 3);
    auto gamma = random_vector(d, 5, 0.5, 1.5), beta = random_vector(d, 6);
    Graph g;
    auto xv = g.input("x", s);
    g.output("ln", g.layer_norm(xv, g.constant(gamma, {d}), g.constant(beta, {d}), 1e-5f));
    g.output("rms", g.rms_norm(xv, g.constant(gamma, {d}), 1e-6f));
    auto out = compile_and_run(g, GetParam(), {{"x", x}});
    std::vector<float> ln(x.size()), rms(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0, ms = 0;
      for (int64_t i = 0; i < d; ++i) mean += x[r * d + i];
      mean /= d;
      for (int64_t i = 0; i < d; ++i) {
        var += (x[r * d + i] - mean) * (x[r * d + i] - mean);
        ms += double(x[r * d + i]) * x[r * d + i];
      }
      var /= d;
      ms /= d;
      for (int64_t i = 0; i < d; ++i) {
        ln[r * d + i] = static_cast<float>((x[r * d + i] - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i]);
        rms[r * d + i] = static_cast<float>(x[r * d + i] / std::sqrt(ms + 1e-6) * gamma[i]);
      }
    }
    EXPECT_LT(max_rel_error(out[0], ln), 2e-5) << shape_to_string(s);
    EXPECT_LT(max_rel_error(out[1], rms), 2e-5) << shape_to_string(s);
  }
}

TEST_P(Ops, Reductions) {
  Shape s{2, 3, 5};
  auto x = random_vector(30, 9, -2, 2);
  for (std::vector<int> axes : {std::vector<int>{0}, {1}, {2}, {0, 2}, {0, 1, 2}})
    for (bool keep : {false, true}) {
      Graph g;
      auto xv = g.input("x", s);
      auto sv = g.sum(xv, axes, keep), mv = g.mean(xv, axes, keep), xm = g.max(xv, axes, keep);
      g.output("sum", sv);
      g.output("mean", mv);
      g.output("max", xm);
      Shape so = g.shape(sv);
      auto out = compile_and_run(g, GetParam(), {{"x", x}});
      // Output position of each input element: reduced axes dropped (or set to 0 with keep_dims).
      std::vector<double> sum(numel(so), 0), mx(numel(so), -INFINITY);
      int64_t count = 1;
      for (int a : axes) count *= s[a];
      for (int64_t e = 0; e < 30; ++e) {
        auto idx = unravel(e, s);
        int64_t o = 0;
        for (int a = 0; a < 3; ++a) {
          bool red = std::find(axes.begin(), axes.end(), a) != axes.end();
          if (red && !keep) continue;
          o = o * (red ? 1 : s[a]) + (red ? 0 : idx[a]);
        }
        sum[o] += x[e];
        mx[o] = std::max<double>(mx[o], x[e]);
      }
      std::vector<float> ws(sum.size()), wm(sum.size()), wx(sum.size());
      for (size_t i = 0; i < sum.size(); ++i) {
        ws[i] = static_cast<float>(sum[i]);
        wm[i] = static_cast<float>(sum[i] / count);
        wx[i] = static_cast<float>(mx[i]);
      }
      EXPECT_LT(max_rel_error(out[0], ws), 1e-5);
      EXPECT_LT(max_rel_error(out[1], wm), 1e-5);
      EXPECT_LT(max_rel_error(out[2], wx), 1e-7);
    }
}

TEST_P(Ops, DataMovement) {
  Shape s{2, 3, 4};
  auto x = random_vector(24, 10);
  Graph g;
  auto xv = g.input("x", s);
  g.output("reshape", g.reshape(xv, {4, -1}));
  g.output("transpose", g.transpose(xv, {2, 0, 1}));
  g.output("slice", g.slice(xv, 1, 1, 2));
  g.output("concat", g.concat({xv, g.slice(xv, 2, 0, 1)}, 2));
  auto out = compile_and_run(g, GetParam(), {{"x", x}});
  EXPECT_EQ(out[0], x);
  std::vector<float> tr, sl, cc;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) tr.push_back(x[(i * 3 + j) * 4 + k]);
  for (int i = 0; i < 2; ++i)
    for (int j = 1; j < 3; ++j)
      for (int k = 0; k < 4; ++k) sl.push_back(x[(i * 3 + j) * 4 + k]);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) cc.push_back(x[(i * 3 + j) * 4 + k]);
      cc.push_back(x[(i * 3 + j) * 4]);
    }
  EXPECT_EQ(out[1], tr);
  EXPECT_EQ(out[2], sl);
  EXPECT_EQ(out[3], cc);
}

TEST_P(Ops, GatherRowsAndBadIds) {
  auto table = random_vector(5 * 3, 11);
  Graph g;
  auto t = g.param("t", {5, 3});
  g.output("y", g.gather(t, g.input("ids", {2, 3})));
  std::vector<float> ids = {0, 4, 2.2f, -1, 5, std::numeric_limits<float>::quiet_NaN()};
  auto out = compile_and_run(g, GetParam(), {{"ids", ids}}, {{"t", table}})[0];
  ASSERT_EQ(out.size(), 18u);
  int rows[6] = {0, 4, 2, -1, -1, -1};
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < 3; ++d) EXPECT_EQ(out[i * 3 + d], rows[i] < 0 ? 0.f : table[rows[i] * 3 + d]) << i;
}

// Attention written the obvious way: full scores, mask, softmax, weighted sum.
std::vector<float> attention_ref(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                 const std::vector<float>* mask, int64_t B, int64_t Sq, int64_t Sk, int64_t W,
                                 int64_t Wv, int heads, bool causal, float scale) {
  const int64_t D = W / heads, Dv = Wv / heads;
  std::vector<float> out(B * Sq * Wv, 0.f);
  for (int64_t b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        std::vector<double> s(Sk);
        std::vector<bool> keep(Sk);
        double m = -INFINITY;
        for (int64_t j = 0; j < Sk; ++j) {
          keep[j] = (!causal || j <= i + (Sk - Sq)) && (!mask || (*mask)[b * Sk + j] >= 0.5f);
          double dot = 0;
          for (int64_t t = 0; t < D; ++t) dot += double(q[(b * Sq + i) * W + h * D + t]) * k[(b * Sk + j) * W + h * D + t];
          s[j] = dot * scale;
          if (keep[j]) m = std::max(m, s[j]);
        }
        double den = 0;
        for (int64_t j = 0; j < Sk; ++j) den += keep[j] ? std::exp(s[j] - m) : 0;
        if (den == 0) continue;
        for (int64_t j = 0; j < Sk; ++j) {
          if (!keep[j]) continue;
          double p = std::exp(s[j] - m) / den;
          for (int64_t t = 0; t < Dv; ++t)
            out[(b * Sq + i) * Wv + h * Dv + t] += static_cast<float>(p * v[(b * Sk + j) * Wv + h * Dv + t]);
        }
      }
  return out;
}

TEST_P(Ops, AttentionCausalMaskedFullyMaskedCross) {
  struct Case {
    int64_t B, Sq, Sk, W, Wv;
    int heads;
    bool causal, masked;
    std::optional<float> scale;
  };
  // Value widths different from the query width (Wv != W) included.
  for (Case c : {Case{1, 1, 1, 4, 4, 1, false, false, {}}, Case{2, 5, 5, 8, 8, 2, true, false, {}},
                 Case{2, 3, 7, 8, 6, 2, false, true, {}}, Case{1, 4, 6, 12, 21, 3, true, true, 0.3f},
                 Case{3, 17, 17, 16, 16, 4, false, true, {}}, Case{2, 33, 40, 8, 40, 1, false, false, {}}}) {
    Graph g;
    auto q = g.input("q", {c.B, c.Sq, c.W});
    auto k = g.input("k", {c.B, c.Sk, c.W});
    auto v = g.input("v", {c.B, c.Sk, c.Wv});
    AttentionOptions opt;
    opt.heads = c.heads;
    opt.causal = c.causal;
    opt.scale = c.scale;
    std::vector<std::pair<std::string, std::vector<float>>> in = {
        {"q", random_vector(c.B * c.Sq * c.W, 1)}, {"k", random_vector(c.B * c.Sk * c.W, 2)}, {"v", random_vector(c.B * c.Sk * c.Wv, 3)}};
    std::vector<float> mask(c.B * c.Sk, 1.f);
    if (c.masked) {
      for (int64_t j = 0; j < c.Sk; ++j) mask[j] = 0.f;  // batch 0: every key dropped -> zeros
      for (int64_t b = 1; b < c.B; ++b)
        for (int64_t j = 0; j < c.Sk; ++j) mask[b * c.Sk + j] = (j % 3 == 1) ? 0.2f : 0.9f;
      opt.key_mask = g.input("mask", {c.B, c.Sk});
      in.push_back({"mask", mask});
    }
    g.output("y", g.attention(q, k, v, opt));
    auto out = run1(g, in);
    float scale = c.scale ? *c.scale : 1.f / std::sqrt(float(c.W / c.heads));
    auto want = attention_ref(in[0].second, in[1].second, in[2].second, c.masked ? &mask : nullptr, c.B, c.Sq, c.Sk, c.W,
                              c.Wv, c.heads, c.causal, scale);
    EXPECT_LT(max_rel_error(out, want), 1e-5) << "B" << c.B << " Sq" << c.Sq << " Sk" << c.Sk;
    for (float x : out) ASSERT_TRUE(std::isfinite(x));
    if (c.masked)
      for (int64_t e = 0; e < c.Sq * c.Wv; ++e) EXPECT_EQ(out[e], 0.f) << "fully masked rows give zeros";
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Ops, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
