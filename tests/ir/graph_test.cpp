// SPDX-License-Identifier: Apache-2.0
// Graph builder: shape inference, broadcasting, and error messages that name the op and shapes.
#include <gtest/gtest.h>

#include "test_util.hpp"

#include "rungs/rungs.hpp"

namespace {

using rungs::ErrorCode;
using rungs::Graph;
using rungs::Shape;

using rungs::testing::expect_error;

// The public builder hands out no IR (docs/architecture.md): the library's layers reach it through
// core/ir/graph_access.hpp, which clients cannot include.
template <class G>
concept ExposesImpl = requires(G g) { g.impl(); };
static_assert(!ExposesImpl<Graph> && !ExposesImpl<const Graph>);

TEST(Graph, BroadcastingShapes) {
  Graph g;
  auto a = g.input("a", {4, 1, 3});
  auto b = g.input("b", {5, 1});
  EXPECT_EQ(g.shape(g.add(a, b)), (Shape{4, 5, 3}));
  EXPECT_EQ(g.shape(g.mul(b, g.constant({2.f}, {1}))), (Shape{5, 1}));
}

TEST(Graph, MatmulShapesAndBatchBroadcast) {
  Graph g;
  auto a = g.input("a", {2, 1, 8, 16});
  auto b = g.input("b", {3, 16, 4});
  EXPECT_EQ(g.shape(g.matmul(a, b)), (Shape{2, 3, 8, 4}));
  auto w = g.param("w", {16, 32});
  EXPECT_EQ(g.shape(g.matmul(g.input("x", {7, 16}), w)), (Shape{7, 32}));
}

TEST(Graph, MatmulMismatchNamesOpAndShapes) {
  Graph g;
  auto a = g.input("a", {2, 3});
  auto b = g.input("b", {4, 5});
  size_t before = g.node_count();
  expect_error([&] { g.matmul(a, b); }, ErrorCode::ShapeMismatch, "matmul: inner dimensions differ: a [2, 3] x b [4, 5]");
  EXPECT_EQ(g.node_count(), before);  // unchanged after the error
}

TEST(Graph, BinaryMismatch) {
  Graph g;
  auto a = g.input("a", {2, 3});
  auto b = g.input("b", {4});
  expect_error([&] { g.add(a, b); }, ErrorCode::ShapeMismatch, "add: shapes [2, 3] and [4]");
}

TEST(Graph, NewElementwiseOpsShapesAndMismatches) {
  Graph g;
  auto a = g.input("a", {2, 1, 4});
  auto b = g.input("b", {3, 1});
  auto c = g.input("c", {1, 3, 1});
  EXPECT_EQ(g.shape(g.pow(a, b)), (Shape{2, 3, 4}));
  EXPECT_EQ(g.shape(g.equal(a, b)), (Shape{2, 3, 4}));
  EXPECT_EQ(g.shape(g.less(b, a)), (Shape{2, 3, 4}));
  EXPECT_EQ(g.shape(g.greater_equal(a, a)), (Shape{2, 1, 4}));
  EXPECT_EQ(g.shape(g.where(c, a, b)), (Shape{2, 3, 4}));
  EXPECT_EQ(g.shape(g.where(g.input("s", {4}), c, b)), (Shape{1, 3, 4}));
  EXPECT_EQ(g.shape(g.erf(a)), (Shape{2, 1, 4}));
  EXPECT_EQ(g.shape(g.logical_not(b)), (Shape{3, 1}));
  const size_t nodes = g.node_count();
  auto d = g.input("d", {5});
  expect_error([&] { g.pow(a, d); }, ErrorCode::ShapeMismatch, "pow: shapes [2, 1, 4] and [5]");
  expect_error([&] { g.less_equal(d, a); }, ErrorCode::ShapeMismatch, "less_equal: shapes [5] and [2, 1, 4] do not broadcast");
  expect_error([&] { g.where(d, a, b); }, ErrorCode::ShapeMismatch,
               "where: shapes [5] (cond), [2, 1, 4] (a) and [3, 1] (b) do not broadcast");
  expect_error([&] { g.where(c, a, d); }, ErrorCode::ShapeMismatch, "where: shapes [1, 3, 1] (cond), [2, 1, 4] (a) and [5] (b)");
  expect_error([&] { g.sin(rungs::Value{99}); }, ErrorCode::InvalidArgument, "sin: value %99 does not belong");
  EXPECT_EQ(g.node_count(), nodes + 1);  // only the input d was added
  EXPECT_NE(g.to_text().find("where(%"), std::string::npos);
}

TEST(Graph, ReductionsAndKeepDims) {
  Graph g;
  auto x = g.input("x", {2, 3, 4});
  EXPECT_EQ(g.shape(g.sum(x, {1})), (Shape{2, 4}));
  EXPECT_EQ(g.shape(g.mean(x, {-1, 0}, true)), (Shape{1, 3, 1}));
  EXPECT_EQ(g.shape(g.max(x, {0, 1, 2})), (Shape{}));
  expect_error([&] { g.sum(x, {3}); }, ErrorCode::InvalidArgument, "axis 3 is out of range");
  expect_error([&] { g.sum(x, {1, -2}); }, ErrorCode::InvalidArgument, "listed twice");
}

TEST(Graph, ReshapeTransposeSliceConcat) {
  Graph g;
  auto x = g.input("x", {2, 3, 4});
  EXPECT_EQ(g.shape(g.reshape(x, {6, -1})), (Shape{6, 4}));
  EXPECT_EQ(g.shape(g.transpose(x, {2, 0, 1})), (Shape{4, 2, 3}));
  EXPECT_EQ(g.shape(g.slice(x, 1, 1, 2)), (Shape{2, 2, 4}));
  EXPECT_EQ(g.shape(g.concat({x, x}, -1)), (Shape{2, 3, 8}));
  expect_error([&] { g.reshape(x, {5, -1}); }, ErrorCode::ShapeMismatch, "cannot reshape [2, 3, 4]");
  expect_error([&] { g.transpose(x, {0, 0, 1}); }, ErrorCode::InvalidArgument, "not a permutation");
  expect_error([&] { g.slice(x, 2, 3, 2); }, ErrorCode::OutOfRange, "does not fit axis 2");
  expect_error([&] { g.concat({x, g.input("y", {2, 4, 4})}, 2); }, ErrorCode::ShapeMismatch, "concat: input 1");
}

TEST(Graph, AttentionValidation) {
  Graph g;
  auto q = g.input("q", {2, 5, 8});
  auto k = g.input("k", {2, 7, 8});
  rungs::AttentionOptions opt;
  opt.heads = 2;
  EXPECT_EQ(g.shape(g.attention(q, k, k, opt)), (Shape{2, 5, 8}));
  opt.heads = 3;
  expect_error([&] { g.attention(q, k, k, opt); }, ErrorCode::ShapeMismatch, "divisible by heads=3");
  opt.heads = 2;
  opt.key_mask = g.input("m", {2, 5});
  expect_error([&] { g.attention(q, k, k, opt); }, ErrorCode::ShapeMismatch, "key_mask must be [B, Sk] = [2, 7]");
}

TEST(Graph, NamesAreUniqueAndHandlesChecked) {
  Graph g;
  auto x = g.input("x", {2});
  expect_error([&] { g.param("x", {2}); }, ErrorCode::InvalidArgument, "'x' is already used by an input");
  expect_error([&] { g.relu(rungs::Value{99}); }, ErrorCode::InvalidArgument, "does not belong to this graph");
  g.output("y", g.relu(x));
  expect_error([&] { g.output("y", x); }, ErrorCode::InvalidArgument, "'y' is already used");
  expect_error([&] { g.input("z", {2, 0}); }, ErrorCode::InvalidArgument, "dimension < 1");
  expect_error([&] { g.constant({1.f, 2.f}, {3}); }, ErrorCode::ShapeMismatch, "2 values given for shape [3]");
}

TEST(Graph, ToTextOneNodeALine) {
  Graph g;
  auto x = g.input("x", {2, 3});
  g.output("y", g.relu(x));
  std::string t = g.to_text();
  EXPECT_NE(t.find("%0 = input(\"x\") : [2, 3]"), std::string::npos) << t;
  EXPECT_NE(t.find("%1 = relu(%0) : [2, 3]"), std::string::npos) << t;
  EXPECT_NE(t.find("output \"y\" = %1"), std::string::npos) << t;
}

TEST(Graph, CopiesAreIndependent) {
  Graph g;
  auto x = g.input("x", {2});
  Graph h = g;
  h.relu(x);
  EXPECT_EQ(g.node_count(), 1u);
  EXPECT_EQ(h.node_count(), 2u);
}

}  // namespace
