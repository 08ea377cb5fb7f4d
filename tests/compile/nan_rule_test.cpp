// SPDX-License-Identifier: Apache-2.0
// The NaN rule (docs/numerics.md): max, min, relu, clamp (a max then a min), reduce-max, softmax,
// the norms and attention give NaN exactly where an input they read is NaN; where keeps the NaN it
// picks; comparisons and logical_not answer 0 for NaN; pow follows std::pow (pow(NaN, 0) is 1), on Device::Reference
// and on Device::Cpu at every ISA this machine has (forced in turn), fusion on and off.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/isa.hpp"
#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

using backend::cpu::Isa;
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct ForcedIsa {
  explicit ForcedIsa(Isa isa) { backend::cpu::force_isa(isa); }
  ~ForcedIsa() { backend::cpu::reset_forced_isa(); }
};

using Inputs = std::map<std::string, std::vector<float>>;
// Checks one output element: want is the exact value (NaN: must be NaN), or, when `exact` is
// false, only whether it is NaN.
struct Want {
  std::vector<float> values;
  bool exact = true;
};

// Runs g on the reference and on every ISA, fusion on and off, and checks output 0 against want.
void expect_everywhere(const Graph& g, const Inputs& inputs, const Want& want) {
  auto check = [&](Device device, bool fusion, const std::string& where) {
    CompileOptions o;
    o.fusion = fusion;
    CompiledGraph c = Session(device).compile(g, o);
    std::vector<NamedInput> named;
    for (const auto& [name, data] : inputs) named.push_back({name, data});
    const std::vector<float> got = c.run(named)[0];
    ASSERT_EQ(got.size(), want.values.size()) << where;
    for (size_t i = 0; i < got.size(); ++i) {
      const float w = want.values[i];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(got[i])) << where << ": element " << i << " is " << got[i] << ", want NaN";
      } else if (want.exact) {
        EXPECT_EQ(got[i], w) << where << ": element " << i;
      } else {
        EXPECT_FALSE(std::isnan(got[i])) << where << ": element " << i << " is NaN";
      }
    }
  };
  for (bool fusion : {true, false}) {
    const std::string f = fusion ? ", fusion on" : ", fusion off";
    check(Device::Reference, fusion, "reference" + f);
    for (Isa isa : backend::cpu::available_isas()) {
      ForcedIsa forced(isa);
      check(Device::Cpu, fusion, "cpu " + std::string(backend::cpu::isa_name(isa)) + f);
    }
  }
}

// n values with NaN where nan_at(i), finite (or infinite) values elsewhere.
std::vector<float> with_nans(size_t n, uint32_t seed, const std::function<bool(size_t)>& nan_at) {
  std::vector<float> v = testing::random_vector(n, seed, -3.f, 3.f);
  for (size_t i = 0; i < n; ++i)
    if (nan_at(i)) v[i] = kNan;
  return v;
}

float max_or_nan(float a, float b) { return std::isnan(a) || std::isnan(b) ? kNan : std::max(a, b); }
float min_or_nan(float a, float b) { return std::isnan(a) || std::isnan(b) ? kNan : std::min(a, b); }

TEST(NanRule, MaximumAndMinimumOfTheIssueExample) {
  for (bool is_max : {true, false}) {
    Graph g;
    Value a = g.input("a", {4}), b = g.input("b", {4});
    g.output("y", is_max ? g.maximum(a, b) : g.minimum(a, b));
    const Inputs in{{"a", {kNan, 1.f, kNan, 2.f}}, {"b", {0.f, kNan, kNan, 1.f}}};
    expect_everywhere(g, in, {{kNan, kNan, kNan, is_max ? 2.f : 1.f}});
  }
}

TEST(NanRule, MaximumAndMinimumInEveryLaneAndTail) {
  const size_t n = 37;  // two AVX-512 batches and a tail; NaN in a, in b, in both, in neither
  const auto a = with_nans(n, 1, [](size_t i) { return i % 3 == 0; });
  const auto b = with_nans(n, 2, [](size_t i) { return i % 5 == 0; });
  for (bool is_max : {true, false}) {
    Graph g;
    Value va = g.input("a", {int64_t(n)}), vb = g.input("b", {int64_t(n)});
    g.output("y", is_max ? g.maximum(va, vb) : g.minimum(va, vb));
    Want want;
    for (size_t i = 0; i < n; ++i) want.values.push_back(is_max ? max_or_nan(a[i], b[i]) : min_or_nan(a[i], b[i]));
    expect_everywhere(g, {{"a", a}, {"b", b}}, want);
  }
}

TEST(NanRule, ReluAndClampPropagateNan) {
  const size_t n = 37;
  auto x = with_nans(n, 3, [](size_t i) { return i % 4 == 1; });
  x[2] = -kInf;  // relu(-Inf) is 0, clamp(-Inf) is the low bound
  x[6] = kInf;
  {
    Graph g;
    g.output("y", g.relu(g.input("x", {int64_t(n)})));
    Want want;
    for (float v : x) want.values.push_back(std::isnan(v) ? kNan : std::max(v, 0.f));
    expect_everywhere(g, {{"x", x}}, want);
  }
  {
    Graph g;  // clamp to [-1, 1]: a max with a scalar constant, then a min (one fused program)
    Value v = g.input("x", {int64_t(n)});
    g.output("y", g.minimum(g.maximum(v, g.constant({-1.f}, {1})), g.constant({1.f}, {1})));
    Want want;
    for (float e : x) want.values.push_back(std::isnan(e) ? kNan : std::min(std::max(e, -1.f), 1.f));
    expect_everywhere(g, {{"x", x}}, want);
  }
}

TEST(NanRule, ReduceMaxAlongContiguousAndStridedAxes) {
  const int64_t rows = 5, cols = 37;
  // Row 1 has a NaN in its tail lane, row 3 one at its start; column 4 and 36 have NaNs.
  const auto x = with_nans(rows * cols, 4, [&](size_t i) { return i == 1 * cols + 36 || i == 3 * cols + 4; });
  {
    Graph g;  // over the last (contiguous) axis
    g.output("y", g.max(g.input("x", {rows, cols}), {1}));
    Want want;
    for (int64_t r = 0; r < rows; ++r) {
      float m = -kInf;
      for (int64_t c = 0; c < cols; ++c) m = max_or_nan(m, x[r * cols + c]);
      want.values.push_back(m);
    }
    expect_everywhere(g, {{"x", x}}, want);
  }
  {
    Graph g;  // over the first (strided) axis
    g.output("y", g.max(g.input("x", {rows, cols}), {0}));
    Want want;
    for (int64_t c = 0; c < cols; ++c) {
      float m = -kInf;
      for (int64_t r = 0; r < rows; ++r) m = max_or_nan(m, x[r * cols + c]);
      want.values.push_back(m);
    }
    expect_everywhere(g, {{"x", x}}, want);
  }
}

TEST(NanRule, SoftmaxAndNormsPoisonOnlyTheirRow) {
  const int64_t rows = 3, cols = 37;
  const auto x = with_nans(rows * cols, 5, [&](size_t i) { return i == 1 * cols + 36; });
  Want row1;  // every element of row 1 NaN, the others finite
  row1.exact = false;
  for (int64_t i = 0; i < rows * cols; ++i) row1.values.push_back(i / cols == 1 ? kNan : 0.f);
  {
    Graph g;
    g.output("y", g.softmax(g.input("x", {rows, cols}), -1));
    expect_everywhere(g, {{"x", x}}, row1);
  }
  {
    Graph g;
    Value v = g.input("x", {rows, cols});
    g.output("y", g.layer_norm(v, g.constant(std::vector<float>(cols, 1.f), {cols}),
                               g.constant(std::vector<float>(cols, 0.f), {cols})));
    expect_everywhere(g, {{"x", x}}, row1);
  }
  {
    Graph g;  // softmax along axis 0: the NaN poisons its column only
    g.output("y", g.softmax(g.input("x", {rows, cols}), 0));
    Want col36;
    col36.exact = false;
    for (int64_t i = 0; i < rows * cols; ++i) col36.values.push_back(i % cols == 36 ? kNan : 0.f);
    expect_everywhere(g, {{"x", x}}, col36);
  }
}

TEST(NanRule, AttentionQueryWithNanGivesNanOnlyForThatQuery) {
  const int64_t sq = 3, sk = 5, w = 8;
  auto q = testing::random_vector(sq * w, 6);
  q[1 * w + 3] = kNan;  // query 1
  Graph g;
  g.output("y", g.attention(g.input("q", {1, sq, w}), g.input("k", {1, sk, w}), g.input("v", {1, sk, w}),
                            AttentionOptions{}));
  Want want;
  want.exact = false;
  for (int64_t i = 0; i < sq * w; ++i) want.values.push_back(i / w == 1 ? kNan : 0.f);
  expect_everywhere(g, {{"q", q}, {"k", testing::random_vector(sk * w, 7)}, {"v", testing::random_vector(sk * w, 8)}},
                    want);
}

TEST(NanRule, WhereKeepsThePickedNanAndReadsANanConditionAsTrue) {
  // where picks among its operands: a NaN it picks is kept, one it does not pick is dropped; a
  // NaN condition is != 0, so it picks a (numpy and ONNX's bool cast agree).
  const std::vector<float> c{1.f, 0.f, kNan, 0.f, -0.f, 1.f};
  const std::vector<float> a{kNan, kNan, 3.f, 4.f, 5.f, kInf};
  const std::vector<float> b{7.f, 8.f, kNan, kNan, 9.f, 1.f};
  Graph g;
  Value vc = g.input("c", {6}), va = g.input("a", {6}), vb = g.input("b", {6});
  g.output("y", g.where(vc, va, vb));
  expect_everywhere(g, {{"c", c}, {"a", a}, {"b", b}}, {{kNan, 8.f, 3.f, kNan, 9.f, kInf}});
  Graph fused;  // where(x > 0, x, 0) (relu-like; fuses into one program) keeps a NaN of x
  Value x = fused.input("x", {6});
  Value zero = fused.constant({0.f}, {1});
  fused.output("y", fused.where(fused.greater(x, zero), x, fused.add(x, zero)));
  expect_everywhere(fused, {{"x", {kNan, 1.f, -1.f, kInf, -kInf, 0.f}}}, {{kNan, 1.f, -1.f, kInf, -kInf, 0.f}});
}

TEST(NanRule, ComparisonsAndLogicalNotOfNanAreFalse) {
  // Comparisons are not picks: they answer 0 for a NaN operand (IEEE), and logical_not(NaN) is 0
  // (NaN is not 0).
  const std::vector<float> a{kNan, 1.f, kNan, kInf, -kInf, 2.f, -0.f};
  const std::vector<float> b{1.f, kNan, kNan, kInf, kInf, 2.f, 0.f};
  struct C {
    Value (Graph::*op)(Value, Value);
    std::vector<float> want;
  };
  for (const C& k : {C{&Graph::equal, {0, 0, 0, 1, 0, 1, 1}}, C{&Graph::less, {0, 0, 0, 0, 1, 0, 0}},
                     C{&Graph::greater, {0, 0, 0, 0, 0, 0, 0}}, C{&Graph::less_equal, {0, 0, 0, 1, 1, 1, 1}},
                     C{&Graph::greater_equal, {0, 0, 0, 1, 0, 1, 1}}}) {
    Graph g;
    Value va = g.input("a", {7}), vb = g.input("b", {7});
    g.output("y", (g.*k.op)(va, vb));
    expect_everywhere(g, {{"a", a}, {"b", b}}, {k.want});
  }
  Graph g;
  g.output("y", g.logical_not(g.input("x", {5})));
  expect_everywhere(g, {{"x", {kNan, 0.f, -0.f, kInf, 1e-40f}}}, {{0.f, 1.f, 1.f, 0.f, 0.f}});
}

TEST(NanRule, PowErfSinCosPropagateNanExceptWherePowDefinesOne) {
  const std::vector<float> x{kNan, kNan, 1.f, 2.f, kInf, -kInf, 0.5f};
  const std::vector<float> y{0.f, 2.f, kNan, kNan, 0.f, 3.f, kInf};
  {
    Graph g;
    g.output("y", g.pow(g.input("x", {7}), g.input("y", {7})));
    expect_everywhere(g, {{"x", x}, {"y", y}}, {{1.f, kNan, 1.f, kNan, 1.f, -kInf, 0.f}});
  }
  for (int op = 0; op < 3; ++op) {
    Graph g;
    Value v = g.input("x", {4});
    g.output("y", op == 0 ? g.erf(v) : op == 1 ? g.sin(v) : g.cos(v));
    const std::vector<float> want = op == 0 ? std::vector<float>{kNan, 1.f, -1.f, 0.f}
                                  : op == 1 ? std::vector<float>{kNan, kNan, kNan, 0.f}
                                            : std::vector<float>{kNan, kNan, kNan, 1.f};
    expect_everywhere(g, {{"x", {kNan, kInf, -kInf, 0.f}}}, {want});
  }
}

// The GEMM epilogue's relu (a matmul followed by relu fuses into it). Disabled until
// backends/cpu/gemm/gemm_impl.hpp's activate<Relu> calls vmath::relu instead of
// xsimd::max(x, 0), which drops a NaN on x86.
TEST(NanRule, MatmulReluEpiloguePropagatesNan) {
  const int64_t m = 4, k = 8, n = 19;
  auto x = testing::random_vector(m * k, 9);
  x[2 * k + 5] = kNan;  // row 2 of the product is NaN
  Graph g;
  g.output("y", g.relu(g.matmul(g.input("x", {m, k}), g.constant(testing::random_vector(k * n, 10), {k, n}))));
  Want want;
  want.exact = false;
  for (int64_t i = 0; i < m * n; ++i) want.values.push_back(i / n == 2 ? kNan : 0.f);
  expect_everywhere(g, {{"x", x}}, want);
}

}  // namespace
}  // namespace rungs
