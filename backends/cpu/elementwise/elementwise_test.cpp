// SPDX-License-Identifier: Apache-2.0
// Elementwise kernel vs its scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;
using ops::Op;

// Runs the node on `isa` and the reference; returns the worst error ratio.
double check_node(const OneOp& g, Isa isa, const std::vector<Tensor>& ins, double rtol, double atol,
                  int threads = 1, const Shape* run_shape = nullptr) {
  auto k = make_elementwise_kernel(g.spec(threads), isa);
  EXPECT_NE(k, nullptr);
  if (!k) return INFINITY;
  std::vector<TensorArg> args;
  for (const auto& t : ins) args.push_back(t.arg());
  const Dims out = run_shape ? Dims::of(*run_shape) : g.params.out;
  std::vector<float> want(out.numel() + kSlackFloats);
  elementwise_reference(g.params, args, want.data(), out);
  want.resize(out.numel());
  return worst_ratio(run(*k, args, out, threads), want, rtol, atol);
}

TEST(ElementwiseKernel, ReluEveryIsaAroundTheBatchWidth) {
  ASSERT_FALSE(vector_isas().empty()) << "no vector ISA available: nothing would be tested";
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (int64_t n : tile_sizes(lanes(isa))) {
      OneOp g(Op::Relu, {n}, {{n}});
      auto x = make_tensor({n}, 1 + n);
      auto k = make_elementwise_kernel(g.spec(), isa);
      ASSERT_NE(k, nullptr);
      auto got = run(*k, {x.arg()}, Dims::of({n}));
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], x.data[i] > 0 ? x.data[i] : 0.f) << "n=" << n << " i=" << i;
    }
  }
}

TEST(ElementwiseKernel, ScalarIsaIsLeftToTheReference) {
  OneOp g(Op::Relu, {4}, {{4}});
  EXPECT_EQ(make_elementwise_kernel(g.spec(), Isa::Scalar), nullptr);
  OneOp sm(Op::Softmax, {4}, {{4}});
  for (Isa isa : vector_isas()) EXPECT_EQ(make_elementwise_kernel(sm.spec(), isa), nullptr);
}

TEST(ElementwiseKernel, EveryUnaryOpMatchesTheReference) {
  const Op ops[] = {Op::Relu, Op::Gelu, Op::GeluTanh, Op::Silu, Op::Sigmoid, Op::Tanh,
                    Op::Exp,  Op::Log,  Op::Sqrt,     Op::Rsqrt, Op::Neg,    Op::Abs};
  for (Isa isa : vector_isas()) {
    for (Op op : ops) {
      for (int64_t n : tile_sizes(lanes(isa))) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " op " + std::to_string(int(op)) + " n " + std::to_string(n));
        const bool positive = op == Op::Log || op == Op::Sqrt || op == Op::Rsqrt;
        OneOp g(op, {3, n}, {{3, n}});
        auto x = make_tensor({3, n}, 7 + n, positive ? 0.01f : -9.f, positive ? 50.f : 9.f);
        EXPECT_LE(check_node(g, isa, {x}, 2e-6, 1e-6), 1.0);
      }
    }
  }
}

TEST(ElementwiseKernel, GeluIsErfExactAcrossItsRange) {
  // Dense sweep of [-10, 10], where erf changes shape, against erf in double.
  const int64_t n = 20001;
  OneOp g(Op::Gelu, {n}, {{n}});
  Tensor x = make_tensor({n}, 1);
  for (int64_t i = 0; i < n; ++i) x.data[i] = -10.f + 20.f * float(i) / float(n - 1);
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    EXPECT_LE(check_node(g, isa, {x}, 1e-6, 1e-6), 1.0);
  }
}

// The new ops (where, erf, pow, comparisons, logical_not, sin, cos) ----------------------------

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Floats between a and b (0 for equal values, +0 / -0 included).
int64_t ulps(float a, float b) {
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(key(a) - key(b));
}

// Values every new op is tried on: NaN, the infinities, signed zeros, a denormal, the extremes,
// integers and halves (pow's special cases), exact ties (comparisons).
std::vector<float> edge_values() {
  return {kNan, kInf, -kInf, 0.f, -0.f, 1e-40f, -1e-40f, std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(), 1.f, -1.f, 2.f, -2.f, 3.f, -3.f, 0.5f, -0.5f, 1e-30f,
          -7.5f, 100.f, 1e4f, -1e4f, 0.25f, 2.5f, -2.5f, 1.5f, 16777216.f};
}

// The worst ulp distance of the kernel on `isa` from the reference over x (NaN exactly where the
// reference has NaN, or the ulp count is huge).
int64_t worst_ulps(Op op, Isa isa, const std::vector<float>& xs) {
  const auto n = static_cast<int64_t>(xs.size());
  OneOp g(op, {n}, {{n}});
  Tensor x = make_tensor({n}, 1);
  std::copy(xs.begin(), xs.end(), x.data.begin());
  auto k = make_elementwise_kernel(g.spec(), isa);
  if (!k) return INT64_MAX;
  const auto got = run(*k, {x.arg()}, Dims::of({n}));
  std::vector<float> want(n + kSlackFloats);
  elementwise_reference(g.params, std::vector<TensorArg>{x.arg()}, want.data(), Dims::of({n}));
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i])) {
      if (std::isnan(got[i]) != std::isnan(want[i])) {
        ADD_FAILURE() << "x=" << xs[i] << " got " << got[i] << " want " << want[i];
        return INT64_MAX;
      }
      continue;
    }
    const int64_t u = ulps(got[i], want[i]);
    if (u > worst) {
      worst = u;
      if (u > 4) ADD_FAILURE() << ops::op_name(op) << "(" << xs[i] << ") got " << got[i] << " want " << want[i] << " (" << u << " ulp)";
    }
  }
  return worst;
}

TEST(ElementwiseKernel, ErfWithinAFewUlpOverTheWholeRange) {
  // A dense sweep of [-6, 6] (erf saturates to +-1 in float past 3.9), log-spaced magnitudes from
  // denormals to 1e38 of both signs, and the edge values.
  std::vector<float> xs = edge_values();
  for (int i = 0; i <= 60000; ++i) xs.push_back(-6.f + 12.f * float(i) / 60000.f);
  for (double m = 1e-44; m < 1e38; m *= 1.01) {
    xs.push_back(float(m));
    xs.push_back(-float(m));
  }
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    EXPECT_LE(worst_ulps(Op::Erf, isa, xs), 4);
  }
}

TEST(ElementwiseKernel, SinAndCosStayAccurateToLargeArguments) {
  // Sinusoidal positions reach thousands of radians: a dense sweep of [-1e4, 1e4], every integer
  // position up to 8192 (as positions times a frequency of 1), log-spaced magnitudes up to 1e30 and the
  // edge values (sin(+-inf) is NaN).
  std::vector<float> xs = edge_values();
  for (int i = 0; i <= 200000; ++i) xs.push_back(-1e4f + 2e4f * float(i) / 200000.f);
  for (int p = 0; p <= 8192; ++p) xs.push_back(float(p));
  for (double m = 1e-40; m < 1e30; m *= 1.05) {
    xs.push_back(float(m));
    xs.push_back(-float(m));
  }
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (Op op : {Op::Sin, Op::Cos}) {
      SCOPED_TRACE(std::string(ops::op_name(op)));
      EXPECT_LE(worst_ulps(op, isa, xs), 4);
    }
  }
}

TEST(ElementwiseKernel, LogicalNotIsExactWithNanAndSignedZero) {
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    EXPECT_EQ(worst_ulps(Op::LogicalNot, isa, edge_values()), 0);
  }
}

// Every pair (a, b) of `as` x `bs` through a binary op, a and b as two contiguous inputs.
void check_pairs(Op op, Isa isa, const std::vector<float>& as, const std::vector<float>& bs, double rtol) {
  const auto n = static_cast<int64_t>(as.size() * bs.size());
  OneOp g(op, {n}, {{n}, {n}});
  Tensor a = make_tensor({n}, 1), b = make_tensor({n}, 2);
  for (size_t i = 0; i < as.size(); ++i)
    for (size_t j = 0; j < bs.size(); ++j) {
      a.data[i * bs.size() + j] = as[i];
      b.data[i * bs.size() + j] = bs[j];
    }
  auto k = make_elementwise_kernel(g.spec(), isa);
  ASSERT_NE(k, nullptr);
  const auto got = run(*k, {a.arg(), b.arg()}, Dims::of({n}));
  for (int64_t e = 0; e < n; ++e) {
    const float want = eval_scalar(op, a.data[e], b.data[e]);
    const bool ok = std::isnan(want) ? std::isnan(got[e])
                    : rtol == 0 ? got[e] == want && std::signbit(got[e]) == std::signbit(want)
                                : got[e] == want || std::fabs(double(got[e]) - want) <= rtol * std::fabs(double(want));
    EXPECT_TRUE(ok) << ops::op_name(op) << "(" << a.data[e] << ", " << b.data[e] << ") got " << got[e] << " want " << want;
  }
}

TEST(ElementwiseKernel, ComparisonsAreExactWithNanInfAndTies) {
  const auto v = edge_values();
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (Op op : {Op::Equal, Op::Less, Op::Greater, Op::LessEqual, Op::GreaterEqual}) check_pairs(op, isa, v, v, 0);
  }
  // The reference's meaning, spelled out: NaN compares false, -0 == 0.
  EXPECT_EQ(eval_scalar(Op::Equal, kNan, kNan), 0.f);
  EXPECT_EQ(eval_scalar(Op::LessEqual, kNan, 1.f), 0.f);
  EXPECT_EQ(eval_scalar(Op::Equal, -0.f, 0.f), 1.f);
  EXPECT_EQ(eval_scalar(Op::GreaterEqual, kInf, kInf), 1.f);
}

TEST(ElementwiseKernel, PowFollowsStdPowSpecialCasesExactly) {
  // Every special case of C99 Annex F in edge x edge, exact (sign of zero included) where the
  // result is 0, 1, +-inf or NaN; elsewhere within 1e-5.
  const auto v = edge_values();
  std::vector<float> special_x, special_y;
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    check_pairs(Op::Pow, isa, v, v, 1e-5);
    const std::vector<float> exact_y = {kNan, kInf, -kInf, 0.f, -0.f, 1.f, -1.f, 2.f, -2.f, 3.f, -3.f};
    const std::vector<float> exact_x = {kNan, kInf, -kInf, 0.f, -0.f, 1.f, -1.f};
    check_pairs(Op::Pow, isa, exact_x, exact_y, 0);
  }
  EXPECT_EQ(eval_scalar(Op::Pow, kNan, 0.f), 1.f);
  EXPECT_EQ(eval_scalar(Op::Pow, 1.f, kNan), 1.f);
  EXPECT_EQ(eval_scalar(Op::Pow, -0.f, -1.f), -kInf);
  EXPECT_TRUE(std::isnan(eval_scalar(Op::Pow, -2.f, 0.5f)));
}

TEST(ElementwiseKernel, PowOverItsRangeAndWithScalarExponents) {
  // Random positive bases and exponents (|y log x| up to about 20), and the exponents exporters
  // write as one scalar (2, 0.5, 1: special-cased by the kernel, correctly rounded like pow).
  for (Isa isa : vector_isas()) {
    for (int64_t n : tile_sizes(lanes(isa))) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " n " + std::to_string(n));
      OneOp g(Op::Pow, {3, n}, {{3, n}, {3, n}});
      auto x = make_tensor({3, n}, 20 + n, 0.f, 30.f), y = make_tensor({3, n}, 21 + n, -6.f, 6.f);
      EXPECT_LE(check_node(g, isa, {x, y}, 4e-6, 0), 1.0);
      for (float e : {2.f, 0.5f, 1.f, 3.f, -1.f}) {
        SCOPED_TRACE("exponent " + std::to_string(e));
        OneOp gs(Op::Pow, {3, n}, {{3, n}, {1}});
        auto xs = make_tensor({3, n}, 22 + n, -30.f, 30.f);
        for (size_t i = 0; i < xs.data.size(); i += 7) xs.data[i] = edge_values()[i / 7 % edge_values().size()];
        Tensor ys = make_tensor({1}, 1);
        ys.data[0] = e;
        EXPECT_LE(check_node(gs, isa, {xs, ys}, e == 2.f || e == 0.5f || e == 1.f ? 0 : 4e-6, 0), 1.0);
      }
    }
  }
}

TEST(ElementwiseKernel, WhereBroadcastsThreeWaysAndReadsNanAsTrue) {
  struct Case {
    Shape c, a, b, out;
  };
  const Case cases[] = {
      {{5, 37}, {5, 37}, {5, 37}, {5, 37}},   {{5, 1}, {37}, {5, 37}, {5, 37}},
      {{37}, {5, 1}, {1}, {5, 37}},           {{2, 1, 33}, {3, 1}, {1, 4, 1}, {2, 4, 33}},
      {{1}, {7, 9}, {1}, {7, 9}},             {{4, 1, 1}, {1, 6, 1}, {1, 1, 19}, {4, 6, 19}},
  };
  for (Isa isa : vector_isas()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + shape_str(c.c) + " " + shape_str(c.a) + " " + shape_str(c.b));
      OneOp g(Op::Where, c.out, {c.c, c.a, c.b});
      auto cond = make_tensor(c.c, 3, -1.f, 1.f), a = make_tensor(c.a, 4), b = make_tensor(c.b, 5);
      for (size_t i = 0; i < cond.data.size(); i += 3) cond.data[i] = 0.f;  // zeros, NaNs, -0
      for (size_t i = 1; i < cond.data.size(); i += 5) cond.data[i] = kNan;
      for (size_t i = 2; i < cond.data.size(); i += 7) cond.data[i] = -0.f;
      for (size_t i = 0; i < a.data.size(); i += 4) a.data[i] = kNan;  // a NaN picked is kept
      EXPECT_EQ(check_node(g, isa, {cond, a, b}, 0, 0), 0.0);
    }
  }
  EXPECT_EQ(eval_scalar(Op::Where, kNan, 1.f, 2.f), 1.f);
  EXPECT_EQ(eval_scalar(Op::Where, -0.f, 1.f, 2.f), 2.f);
}

// A fused program with the new ops: cos(where(!y + sin(y), -1e4, where(x < 0.5, pow(x, 2), erf(x)))),
// with immediates on pow, less and where.
TEST(ElementwiseKernel, FusedProgramsWithTheNewOps) {
  for (Isa isa : vector_isas()) {
    for (int64_t n : tile_sizes(lanes(isa))) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " n " + std::to_string(n));
      OneOp g(Op::FusedElementwise, {4, n}, {{4, n}, {n}});
      g.params.elementwise.code = {
          {Op::Less, 2, 0, -1, 0.5f},       // r2 = x < 0.5
          {Op::Pow, 3, 0, -1, 2.f},         // r3 = x^2
          {Op::Erf, 4, 0, 0},               // r4 = erf(x)
          {Op::Where, 5, 2, 3, 0.f, 4},     // r5 = r2 ? r3 : r4
          {Op::LogicalNot, 6, 1, 0},        // r6 = !y
          {Op::Sin, 7, 1, 0},               // r7 = sin(y)
          {Op::Add, 8, 6, 7},               // r8 = r6 + r7 (1 where y is 0)
          {Op::Where, 9, 8, -1, -1e4f, 5},  // r9 = r8 ? -1e4 : r5
          {Op::Cos, 10, 9, 0},              // r10 = cos(r9)
      };
      g.params.elementwise.regs = 11;
      auto x = make_tensor({4, n}, 30 + n), y = make_tensor({n}, 31 + n, -1.f, 1.f);
      for (size_t i = 0; i < y.data.size(); i += 2) y.data[i] = 0.f;
      EXPECT_LE(check_node(g, isa, {x, y}, 1e-6, 1e-6), 1.0);
    }
  }
}

struct BroadcastCase {
  Shape a, b, out;
};

TEST(ElementwiseKernel, BinaryOpsBroadcastLikeNumpy) {
  const BroadcastCase cases[] = {
      {{5, 37}, {5, 37}, {5, 37}},        {{5, 37}, {37}, {5, 37}},
      {{5, 37}, {5, 1}, {5, 37}},         {{5, 1}, {1, 37}, {5, 37}},
      {{}, {4, 19}, {4, 19}},             {{2, 3, 17}, {3, 1}, {2, 3, 17}},
      {{2, 1, 4, 33}, {3, 1, 33}, {2, 3, 4, 33}}, {{1}, {1}, {1}},
      {{7, 1, 1}, {1, 1, 9}, {7, 1, 9}},  {{2, 1000}, {1, 1000}, {2, 1000}},
  };
  const Op ops[] = {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Maximum, Op::Minimum};
  for (Isa isa : vector_isas()) {
    for (const auto& c : cases) {
      for (Op op : ops) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " " + shape_str(c.a) + " op " + std::to_string(int(op)) + " " + shape_str(c.b));
        OneOp g(op, c.out, {c.a, c.b});
        auto a = make_tensor(c.a, 3), b = make_tensor(c.b, 4, 0.5f, 4.f);
        EXPECT_LE(check_node(g, isa, {a, b}, 1e-6, 0), 1.0);
      }
    }
  }
}

// A FusedElementwise program on x [out] and bias [out.back()]: out = gelu(x * 0.5 + bias) - (2 / x)
// with a temporary reused.
OneOp fused_program(const Shape& out) {
  OneOp o(Op::FusedElementwise, out, {out, {out.back()}});
  o.params.elementwise.code = {
      {Op::Mul, 2, 0, -1, 0.5f},  // r2 = x * 0.5
      {Op::Add, 2, 2, 1},         // r2 = r2 + bias
      {Op::Gelu, 3, 2, 0},        // r3 = gelu(r2)
      {Op::Div, 4, -1, 0, 2.f},   // r4 = 2 / x
      {Op::Sub, 5, 3, 4},         // r5 = r3 - r4
  };
  o.params.elementwise.regs = 6;
  return o;
}

TEST(ElementwiseKernel, FusedProgramsMatchTheReference) {
  for (Isa isa : vector_isas()) {
    for (int64_t n : tile_sizes(lanes(isa))) {
      for (int64_t rows : ladder_extents()) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " rows " + std::to_string(rows) + " n " + std::to_string(n));
        OneOp g = fused_program({rows, n});
        auto x = make_tensor({rows, n}, 11, 0.5f, 3.f), bias = make_tensor({n}, 12);
        EXPECT_LE(check_node(g, isa, {x, bias}, 2e-6, 1e-6), 1.0);
      }
    }
  }
}

TEST(ElementwiseKernel, LongRowsCrossBlockBoundaries) {
  for (Isa isa : vector_isas()) {
    for (int64_t n : {511, 512, 513, 1500, 3072}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " n " + std::to_string(n));
      OneOp g = fused_program({3, n});
      auto x = make_tensor({3, n}, 11, 0.5f, 3.f), bias = make_tensor({n}, 12);
      EXPECT_LE(check_node(g, isa, {x, bias}, 2e-6, 1e-6), 1.0);
    }
  }
}

TEST(ElementwiseKernel, RuntimeDimsSmallerThanCompiled) {
  // Compiled for 256 rows, run at the active extents 1, 9, 100.
  OneOp g = fused_program({256, 48});
  for (Isa isa : vector_isas()) {
    for (int64_t rows : {1, 9, 100}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " rows " + std::to_string(rows));
      Shape s{rows, 48};
      auto x = make_tensor(s, 5, 0.5f, 3.f), bias = make_tensor({48}, 6);
      EXPECT_LE(check_node(g, isa, {x, bias}, 2e-6, 1e-6, 1, &s), 1.0);
    }
  }
}

TEST(ElementwiseKernel, ThreadsGiveTheSameBitsAsOneThread) {
  for (Isa isa : vector_isas()) {
    for (Shape s : {Shape{256, 3072}, Shape{1, 1 << 18}, Shape{4096, 7}}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + shape_str(s));
      OneOp g = fused_program(s);
      auto x = make_tensor(s, 8, 0.5f, 3.f), bias = make_tensor({s.back()}, 9);
      auto k1 = make_elementwise_kernel(g.spec(1), isa);
      auto k3 = make_elementwise_kernel(g.spec(3), isa);
      const auto one = run(*k1, {x.arg(), bias.arg()}, Dims::of(s), 1);
      const auto three = run(*k3, {x.arg(), bias.arg()}, Dims::of(s), 3);
      EXPECT_EQ(one, three);
    }
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
