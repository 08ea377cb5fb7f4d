// SPDX-License-Identifier: Apache-2.0
// Elementwise kernel vs its scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include "backends/cpu/elementwise/elementwise.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;
using ir::Op;

ir::Node op_node(Op op, Shape out) {
  ir::Node n;
  n.op = op;
  n.shape = std::move(out);
  return n;
}

// Runs the node on `isa` and the reference; returns the worst error ratio.
double check_node(const OneNode& g, Isa isa, const std::vector<Tensor>& ins, double rtol, double atol,
                  int threads = 1, const Shape* run_shape = nullptr) {
  auto k = make_elementwise_kernel(g.spec(threads), isa);
  EXPECT_NE(k, nullptr);
  if (!k) return INFINITY;
  std::vector<TensorArg> args;
  for (const auto& t : ins) args.push_back(t.arg());
  const Dims out = Dims::of(run_shape ? *run_shape : g.out_shape());
  std::vector<float> want(out.numel() + kSlackFloats);
  elementwise_reference(g.graph.at(g.node), args, want.data(), out);
  want.resize(out.numel());
  return worst_ratio(run(*k, args, out, threads), want, rtol, atol);
}

TEST(ElementwiseKernel, ReluEveryIsaAroundTheBatchWidth) {
  ASSERT_FALSE(vector_isas().empty()) << "no vector ISA available: nothing would be tested";
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    for (int64_t n : tile_sizes(lanes(isa))) {
      OneNode g({{n}}, op_node(Op::Relu, {n}));
      auto x = make_tensor({n}, 1 + n);
      auto k = make_elementwise_kernel(g.spec(), isa);
      ASSERT_NE(k, nullptr);
      auto got = run(*k, {x.arg()}, Dims::of({n}));
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], x.data[i] > 0 ? x.data[i] : 0.f) << "n=" << n << " i=" << i;
    }
  }
}

TEST(ElementwiseKernel, ScalarIsaIsLeftToTheReference) {
  OneNode g({{4}}, op_node(Op::Relu, {4}));
  EXPECT_EQ(make_elementwise_kernel(g.spec(), Isa::Scalar), nullptr);
  OneNode sm({{4}}, op_node(Op::Softmax, {4}));
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
        OneNode g({{3, n}}, op_node(op, {3, n}));
        auto x = make_tensor({3, n}, 7 + n, positive ? 0.01f : -9.f, positive ? 50.f : 9.f);
        EXPECT_LE(check_node(g, isa, {x}, 2e-6, 1e-6), 1.0);
      }
    }
  }
}

TEST(ElementwiseKernel, GeluIsErfExactAcrossItsRange) {
  // Dense sweep of [-10, 10], where erf changes shape, against erf in double.
  const int64_t n = 20001;
  OneNode g({{n}}, op_node(Op::Gelu, {n}));
  Tensor x = make_tensor({n}, 1);
  for (int64_t i = 0; i < n; ++i) x.data[i] = -10.f + 20.f * float(i) / float(n - 1);
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    EXPECT_LE(check_node(g, isa, {x}, 1e-6, 1e-6), 1.0);
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
        OneNode g({c.a, c.b}, op_node(op, c.out));
        auto a = make_tensor(c.a, 3), b = make_tensor(c.b, 4, 0.5f, 4.f);
        EXPECT_LE(check_node(g, isa, {a, b}, 1e-6, 0), 1.0);
      }
    }
  }
}

// A FusedElementwise program: out = gelu(x * 0.5 + bias) - (2 / x) with a temporary reused.
ir::Node fused_program(Shape out) {
  ir::Node n = op_node(Op::FusedElementwise, std::move(out));
  n.prog = {
      {Op::Mul, 2, 0, -1, 0.5f},  // r2 = x * 0.5
      {Op::Add, 2, 2, 1},         // r2 = r2 + bias
      {Op::Gelu, 3, 2, 0},        // r3 = gelu(r2)
      {Op::Div, 4, -1, 0, 2.f},   // r4 = 2 / x
      {Op::Sub, 5, 3, 4},         // r5 = r3 - r4
  };
  n.regs = 6;
  return n;
}

TEST(ElementwiseKernel, FusedProgramsMatchTheReference) {
  for (Isa isa : vector_isas()) {
    for (int64_t n : tile_sizes(lanes(isa))) {
      for (int64_t rows : ladder_extents()) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " rows " + std::to_string(rows) + " n " + std::to_string(n));
        OneNode g({{rows, n}, {n}}, fused_program({rows, n}));
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
      OneNode g({{3, n}, {n}}, fused_program({3, n}));
      auto x = make_tensor({3, n}, 11, 0.5f, 3.f), bias = make_tensor({n}, 12);
      EXPECT_LE(check_node(g, isa, {x, bias}, 2e-6, 1e-6), 1.0);
    }
  }
}

TEST(ElementwiseKernel, RuntimeDimsSmallerThanCompiled) {
  // Compiled for 256 rows, run at the active extents 1, 9, 100.
  OneNode g({{256, 48}, {48}}, fused_program({256, 48}));
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
      OneNode g({s, {s.back()}}, fused_program(s));
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
