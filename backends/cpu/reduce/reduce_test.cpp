// SPDX-License-Identifier: Apache-2.0
// Reduce kernels vs their scalar reference, on every ISA this machine has.
#include <gtest/gtest.h>

#include "backends/cpu/reduce/reduce.hpp"
#include "backends/cpu/rows/testing.hpp"

namespace rungs::backend::cpu {
namespace {

using namespace testing;
using ops::Op;

Shape reduced_shape(const Shape& s, const std::vector<int64_t>& axes, bool keep) {
  Shape out;
  for (size_t k = 0; k < s.size(); ++k) {
    const bool r = std::find(axes.begin(), axes.end(), int64_t(k)) != axes.end();
    if (!r) out.push_back(s[k]);
    else if (keep) out.push_back(1);
  }
  return out;
}

ReduceKind kind_of(Op op) {
  return op == Op::ReduceSum ? ReduceKind::Sum : op == Op::ReduceMean ? ReduceKind::Mean : ReduceKind::Max;
}

OneOp reduce_op(Op op, const Shape& s, std::vector<int64_t> axes, bool keep) {
  OneOp o(op, reduced_shape(s, axes, keep), {s});
  o.params.reduce = {kind_of(op), std::move(axes)};
  return o;
}

// Compiled for `s`, run at `run_shape` (same rank).
double check(Isa isa, Op op, const Shape& s, const std::vector<int64_t>& axes, bool keep, const Shape& run_shape,
             int threads = 1) {
  OneOp g = reduce_op(op, s, axes, keep);
  auto k = make_reduce_kernel(g.spec(threads), isa);
  EXPECT_NE(k, nullptr);
  if (!k) return INFINITY;
  auto x = make_tensor(run_shape, 5, -1.f, 2.f);
  const Shape out_shape = reduced_shape(run_shape, axes, keep);
  std::vector<float> want(Dims::of(out_shape).numel());
  reduce_reference(kind_of(op), axes, x.arg(), want.data());
  return worst_ratio(run(*k, {x.arg()}, Dims::of(out_shape), threads), want, 2e-5, 2e-5);
}

struct AxesCase {
  Shape shape;
  std::vector<int64_t> axes;
};

TEST(ReduceKernel, AnyAxesAnyKind) {
  ASSERT_FALSE(vector_isas().empty());
  for (Isa isa : vector_isas()) {
    const int64_t w = lanes(isa);
    std::vector<AxesCase> cases;
    for (int64_t n : tile_sizes(w)) {
      cases.push_back({{6, n}, {1}});              // rows, innermost reduced
      cases.push_back({{n, 6 * w + 5}, {0}});      // columns, innermost kept (a partial tile)
      cases.push_back({{3, n, 5}, {1}});           // middle axis
      cases.push_back({{3, 4, n}, {0, 2}});        // alternating groups
      cases.push_back({{2, n, 3, 7}, {0, 1, 3}});  // merged reduced groups around a kept one
      cases.push_back({{n, 3}, {0, 1}});           // everything
    }
    cases.push_back({{4, 1, 9}, {1}});  // a size-1 reduced axis
    cases.push_back({{1}, {0}});
    for (const auto& c : cases)
      for (Op op : {Op::ReduceSum, Op::ReduceMean, Op::ReduceMax})
        for (bool keep : {false, true}) {
          SCOPED_TRACE(std::string(isa_name(isa)) + " " + shape_str(c.shape) + " axes " + shape_str(c.axes) +
                       " op " + std::to_string(int(op)) + (keep ? " keep" : ""));
          EXPECT_LE(check(isa, op, c.shape, c.axes, keep, c.shape), 1.0);
        }
  }
}

TEST(ReduceKernel, MeanPoolingAtLadderExtents) {
  // [B, S, D] -> [B, D] over S, and [B, S, D] -> [B, S] over D, compiled at 256, run at the ladder.
  for (Isa isa : vector_isas())
    for (int64_t s : ladder_extents())
      for (int64_t axis : {1, 2}) {
        SCOPED_TRACE(std::string(isa_name(isa)) + " s " + std::to_string(s) + " axis " + std::to_string(axis));
        EXPECT_LE(check(isa, Op::ReduceMean, {2, 256, 96}, {axis}, false, {2, s, 96}), 1.0);
      }
}

TEST(ReduceKernel, ThreadsGiveTheSameBitsAsOneThread) {
  for (Isa isa : vector_isas())
    for (auto c : {AxesCase{{256, 3072}, {1}}, AxesCase{{512, 768}, {0}}, AxesCase{{8, 300, 64}, {1}}}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + shape_str(c.shape));
      OneOp g = reduce_op(Op::ReduceSum, c.shape, c.axes, false);
      auto x = make_tensor(c.shape, 6);
      auto k1 = make_reduce_kernel(g.spec(1), isa), k3 = make_reduce_kernel(g.spec(3), isa);
      const Dims out = g.params.out;
      EXPECT_EQ(run(*k1, {x.arg()}, out, 1), run(*k3, {x.arg()}, out, 3));
    }
}

// A reduction over the rows that a row segment splits (Kernel::sum_row_blocks): the rows cut into
// ranges at every multiple of kRowBlock, each range's blocks summed alone, then added up, give
// run()'s bits; and the reference's values.
TEST(ReduceKernel, RowBlocksSplitAnywhereGiveRunsBits) {
  constexpr int64_t kBlock = Kernel::kRowBlock;
  for (Isa isa : vector_isas()) {
    const int64_t w = lanes(isa);
    for (int64_t inner : {int64_t{2}, w + 3, 4 * w, 9 * w + 1})
      for (int64_t rows : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{9}, int64_t{24}, int64_t{37}})
        for (Op op : {Op::ReduceSum, Op::ReduceMean, Op::ReduceMax}) {
          SCOPED_TRACE(std::string(isa_name(isa)) + " rows " + std::to_string(rows) + " inner " +
                       std::to_string(inner) + " op " + std::to_string(int(op)));
          const Shape shape{1, rows, inner};
          OneOp g = reduce_op(op, shape, {1}, false);
          auto k = make_reduce_kernel(g.spec(1), isa);
          ASSERT_TRUE(k && k->sums_row_blocks());
          auto x = make_tensor(shape, 7, -1.f, 2.f);
          const std::vector<float> whole = run(*k, {x.arg()}, g.params.out);
          std::vector<float> want(static_cast<size_t>(inner));
          const std::vector<int64_t> axes{1};
          reduce_reference(kind_of(op), axes, x.arg(), want.data());
          EXPECT_LE(worst_ratio(whole, want, 2e-5, 2e-5), 1.0);
          const int64_t blocks = (rows + kBlock - 1) / kBlock;
          for (int64_t cut = 0; cut <= rows; cut += kBlock) {  // ranges [0, cut) and [cut, rows)
            std::vector<float> sums(static_cast<size_t>(blocks * inner + kSlackFloats), NAN);
            std::vector<float> got(static_cast<size_t>(inner + kSlackFloats), -12345.f);
            if (cut > 0) k->sum_row_blocks(x.data.data(), cut, inner, 0, sums.data());
            if (cut < rows) k->sum_row_blocks(x.data.data() + cut * inner, rows - cut, inner, cut, sums.data());
            k->finish_row_blocks(sums.data(), rows, inner, got.data());
            for (int64_t c = 0; c < inner; ++c) ASSERT_EQ(got[c], whole[c]) << "cut " << cut << ", column " << c;
            EXPECT_EQ(got[inner], -12345.f) << "wrote past the output";
          }
        }
  }
}

}  // namespace
}  // namespace rungs::backend::cpu
