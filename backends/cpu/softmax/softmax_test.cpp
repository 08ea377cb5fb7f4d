// SPDX-License-Identifier: Apache-2.0
// Softmax kernel vs its scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include "backends/cpu/rows/testing.hpp"
#include "backends/cpu/softmax/softmax.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;

OneOp softmax_op(const Shape& s, int axis) {
  OneOp o(ops::Op::Softmax, s, {s});
  o.params.softmax.axis = axis < 0 ? axis + static_cast<int>(s.size()) : axis;
  return o;
}

double check(Isa isa, const Shape& compiled, int axis, const Shape& run_shape, int threads = 1, float spread = 8.f) {
  OneOp g = softmax_op(compiled, axis);
  auto k = make_softmax_kernel(g.spec(threads), isa);
  EXPECT_NE(k, nullptr);
  if (!k) return INFINITY;
  auto x = make_tensor(run_shape, 17, -spread, spread);
  std::vector<float> want(x.numel());
  softmax_reference(g.params.softmax.axis, x.arg(), want.data());
  return worst_ratio(run(*k, {x.arg()}, Dims::of(run_shape), threads), want, 1e-5, 1e-7);
}

TEST(SoftmaxKernel, LastAxisAroundTheBatchWidthAndLadder) {
  ASSERT_FALSE(vector_isas().empty());
  for (Isa isa : vector_isas()) {
    std::vector<int64_t> ns = tile_sizes(lanes(isa));
    for (int64_t e : ladder_extents()) ns.push_back(e);
    for (int64_t n : ns) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " n " + std::to_string(n));
      EXPECT_LE(check(isa, {5, n}, -1, {5, n}), 1.0);
    }
  }
}

TEST(SoftmaxKernel, OtherAxes) {
  for (Isa isa : vector_isas()) {
    const int64_t w = lanes(isa);
    for (int64_t inner : tile_sizes(w)) {
      for (int axis : {0, 1}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " inner " + std::to_string(inner) + " axis " + std::to_string(axis));
        Shape s{3, 7, inner};
        EXPECT_LE(check(isa, s, axis, s), 1.0);
      }
    }
  }
}

TEST(SoftmaxKernel, LargeLogitsStayFinite) {
  for (Isa isa : vector_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    EXPECT_LE(check(isa, {4, 100}, -1, {4, 100}, 1, 1e4f), 1.0);
  }
}

TEST(SoftmaxKernel, RuntimeDimsSmallerThanCompiled) {
  for (Isa isa : vector_isas()) {
    for (int64_t rows : {1, 9, 100}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " rows " + std::to_string(rows));
      // [B, S, S] attention scores compiled at S = 128, run at S = rows along both S axes.
      EXPECT_LE(check(isa, {2, 128, 128}, -1, {2, rows, rows}), 1.0);
      EXPECT_LE(check(isa, {2, 128, 64}, 1, {2, rows, 64}), 1.0);
    }
  }
}

TEST(SoftmaxKernel, ThreadsGiveTheSameBitsAsOneThread) {
  for (Isa isa : vector_isas()) {
    for (auto [s, axis] : {std::pair<Shape, int>{{256, 3072}, -1}, {{64, 512, 40}, 1}}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + shape_str(s));
      OneOp g = softmax_op(s, axis);
      auto x = make_tensor(s, 3);
      auto k1 = make_softmax_kernel(g.spec(1), isa), k3 = make_softmax_kernel(g.spec(3), isa);
      EXPECT_EQ(run(*k1, {x.arg()}, Dims::of(s), 1), run(*k3, {x.arg()}, Dims::of(s), 3));
    }
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
