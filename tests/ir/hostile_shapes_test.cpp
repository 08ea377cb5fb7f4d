// SPDX-License-Identifier: Apache-2.0
// Shapes past what a tensor may hold (2^40 elements) are refused by the builder with
// Error(OutOfRange) naming the op and the shape, before any product can overflow int64, whichever
// op would create them; the graph is unchanged afterwards.
#include <gtest/gtest.h>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;

constexpr int64_t k2_20 = int64_t{1} << 20, k2_30 = int64_t{1} << 30, k2_40 = int64_t{1} << 40;

// Runs `f` on g, expects the error, and checks the graph kept its nodes and outputs.
template <class F>
void refused(Graph& g, F&& f, ErrorCode code, const std::string& needle) {
  const size_t nodes = g.node_count();
  const std::string text = g.to_text();
  expect_error([&] { f(); }, code, needle);
  EXPECT_EQ(g.node_count(), nodes);
  EXPECT_EQ(g.to_text(), text);
}

TEST(HostileShapes, LeavesPastTwoTo40ElementsOrWithProductsOverflowing) {
  Graph g;
  refused(g, [&] { g.input("x", {k2_40, 2}); }, ErrorCode::OutOfRange, "input 'x': shape [1099511627776, 2] has more than 2^40");
  // 2^31 cubed wraps int64: refused on the way, not after wrapping.
  refused(g, [&] { g.param("w", {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31}); }, ErrorCode::OutOfRange,
          "param 'w'");
  refused(g, [&] { g.input("x", {INT64_MAX, INT64_MAX}); }, ErrorCode::OutOfRange, "more than 2^40 elements");
  refused(g, [&] { g.input("x", {4, 0}); }, ErrorCode::InvalidArgument, "every dimension must be >= 1");
  refused(g, [&] { g.input("x", {1, 1, 1, 1, 1, 1, 1, 1, 1}); }, ErrorCode::Unsupported, "exceeds the maximum rank 8");
}

TEST(HostileShapes, BroadcastingPastTwoTo40) {
  Graph g;
  Value a = g.input("a", {k2_30, 1});
  Value b = g.input("b", {1, k2_30});
  refused(g, [&] { g.add(a, b); }, ErrorCode::OutOfRange, "add: shape [1073741824, 1073741824] has more than 2^40");
  refused(g, [&] { g.maximum(b, a); }, ErrorCode::OutOfRange, "maximum: shape");
}

TEST(HostileShapes, MatmulAndAttentionOutputsPastTwoTo40) {
  Graph g;
  Value a = g.input("a", {k2_30, 1});
  Value b = g.input("b", {1, k2_30});
  refused(g, [&] { g.matmul(a, b); }, ErrorCode::OutOfRange, "matmul: shape [1073741824, 1073741824]");
  // Batch dims broadcast: [2^20, 1, 2, 2] x [1, 2^20, 2, 2] -> [2^20, 2^20, 2, 2].
  Value c = g.input("c", {k2_20, 1, 2, 2});
  Value d = g.input("d", {1, k2_20, 2, 2});
  refused(g, [&] { g.matmul(c, d); }, ErrorCode::OutOfRange, "matmul: shape [1048576, 1048576, 2, 2]");
  // q [1, 2^30, 1] with v [1, 1, 2^30]: the output [1, 2^30, 2^30] is past the limit.
  Value q = g.input("q", {1, k2_30, 1});
  Value k = g.input("k", {1, 1, 1});
  Value v = g.input("v", {1, 1, k2_30});
  refused(g, [&] { g.attention(q, k, v, {}); }, ErrorCode::OutOfRange, "attention: shape [1, 1073741824, 1073741824]");
}

TEST(HostileShapes, ReshapeConcatAndGatherPastTwoTo40) {
  Graph g;
  Value x = g.input("x", {4, 4});
  // Products of these overflow int64: refused as a mismatch, without overflowing on the way.
  refused(g, [&] { g.reshape(x, {INT64_MAX, INT64_MAX, -1}); }, ErrorCode::ShapeMismatch, "reshape: cannot reshape [4, 4]");
  refused(g, [&] { g.reshape(x, {int64_t{1} << 62, 4, 4}); }, ErrorCode::ShapeMismatch, "reshape: cannot reshape");
  Value big = g.input("big", {k2_40});
  refused(g, [&] { g.concat({big, big}, 0); }, ErrorCode::OutOfRange, "concat: axis 0 would hold more than 2^40");
  Value table = g.param("table", {2, k2_30});
  Value ids = g.input("ids", {k2_20});
  refused(g, [&] { g.gather(table, ids); }, ErrorCode::OutOfRange, "gather: shape [1048576, 1073741824]");
}

}  // namespace
