// SPDX-License-Identifier: Apache-2.0
// Active extent: a graph compiled at extent E runs at r < E rows without padding when every op is
// row-local; results equal the padded run's real rows (or, without a mask, the exact result the
// padded run misses) and the work counter shows the skipped rows.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_models.hpp"

namespace {

using namespace rungs;
using rungs::testing::expect_error;
using rungs::testing::max_rel_error;
using rungs::testing::random_vector;

Graph mlp(int64_t rows) {
  HirModule m;
  auto x = m.input("x", {rows, 16});
  m.output("y", m.mlp(m.layer_norm(x, "ln"), "mlp", 32));
  return m.lower();
}

class ActiveRows : public ::testing::TestWithParam<Device> {};

TEST_P(ActiveRows, MlpRowsMatchPaddedRun) {
  const int64_t E = 32;
  Graph g = mlp(E);
  CompiledGraph c = Session(GetParam()).compile(g);
  HirModule dummy;
  for (const auto& name : c.param_names()) {
    Shape s = c.param_shape(name);
    c.set_param(name, random_vector(static_cast<size_t>(shape_numel(s)), 3));
  }
  ASSERT_TRUE(c.prepare_active_rows(E)) << c.active_rows_reason();
  for (int64_t r : {1, 7, 19, 32}) {
    auto x = random_vector(static_cast<size_t>(r * 16), static_cast<uint32_t>(r));
    std::vector<float> padded(E * 16, 0.f);
    std::copy(x.begin(), x.end(), padded.begin());
    NamedInput pin{"x", padded}, rin{"x", x};
    uint64_t w0 = c.elements_computed();
    auto full = c.run({&pin, 1})[0];
    uint64_t w1 = c.elements_computed();
    auto rows = c.run_rows({&rin, 1}, r)[0];
    uint64_t w2 = c.elements_computed();
    ASSERT_EQ(rows.size(), static_cast<size_t>(r * 16));
    std::vector<float> real(full.begin(), full.begin() + r * 16);
    EXPECT_LT(max_rel_error(rows, real), 1e-5) << "rows " << r;
    // Every node of this graph carries rows, so the work scales exactly with r / E.
    EXPECT_EQ((w2 - w1) * E, (w1 - w0) * static_cast<uint64_t>(r)) << "rows " << r;
  }
}

TEST_P(ActiveRows, EncoderWithMaskRunsAtRealLength) {
  const int64_t E = 32;
  auto enc = rungs::testing::make_encoder(E);
  ParamMap params = rungs::testing::random_params(enc, 5);
  CompiledGraph c = Session(GetParam()).compile_hir(enc);
  for (const auto& [n, v] : params) c.set_param(n, v);
  ASSERT_TRUE(c.prepare_active_rows(E)) << c.active_rows_reason();
  for (int64_t r : {1, 5, 19, 32}) {
    auto [ids, mask] = rungs::testing::encoder_inputs(r, E, 50, 2);
    std::vector<NamedInput> padded = {{"ids", ids}, {"mask", mask}};
    auto full = c.run(padded);
    std::vector<float> rids(ids.begin(), ids.begin() + r), rmask(mask.begin(), mask.begin() + r);
    std::vector<NamedInput> real = {{"ids", rids}, {"mask", rmask}};
    uint64_t before = c.elements_computed();
    auto out = c.run_rows(real, r);
    uint64_t work = c.elements_computed() - before;
    EXPECT_LT(max_rel_error(out[1], full[1]), 1e-5) << "pooled embedding, rows " << r;
    std::vector<float> tokens(full[0].begin(), full[0].begin() + r * 32);
    EXPECT_LT(max_rel_error(out[0], tokens), 1e-5) << "token states, rows " << r;
    if (r < E) {
      uint64_t full_work = 0;
      before = c.elements_computed();
      c.run(padded);
      full_work = c.elements_computed() - before;
      EXPECT_LT(work * E, full_work * (r + 1)) << "work should shrink with the rows";
    }
  }
}

// What the analysis refuses, naming the node and why.
void expect_refused(CompiledGraph& c, int64_t extent, const std::string& why) {
  EXPECT_FALSE(c.prepare_active_rows(extent));
  EXPECT_NE(c.active_rows_reason().find(why), std::string::npos) << c.active_rows_reason();
}

TEST_P(ActiveRows, UnsupportedGraphsSayWhy) {
  {
    Graph g;  // a sum over rows of exp(x): exp(0) = 1 in padded rows, and a divisor could be E
    g.output("y", g.sum(g.exp(g.input("x", {8, 4})), {0}));
    CompiledGraph c = Session(GetParam()).compile(g);
    expect_refused(c, 8, "a sum over rows of a value that is not zero in padded rows");
    std::vector<float> x(12);
    NamedInput in{"x", x};
    expect_error([&] { c.run_rows({&in, 1}, 3); }, ErrorCode::Unsupported, "cannot run at fewer rows");
  }
  {
    Graph g;  // rows 0 and 1: row 1 is not there at r = 1
    g.output("y", g.slice(g.input("x", {8, 4}), 0, 0, 2));
    CompiledGraph c = Session(GetParam()).compile(g);
    expect_refused(c, 8, "slicing across rows past the first");
  }
  {
    Graph g;  // a slice of 8 that is not along the table's outer axis
    Value t = g.slice(g.param("t", {4, 16}), 1, 0, 8);
    g.output("y", g.add(g.input("x", {8, 4}), g.transpose(t, {1, 0})));
    CompiledGraph c = Session(GetParam()).compile(g);
    expect_refused(c, 8, "a slice of E rows that is not along its outermost axis");
  }
  {
    Graph g;  // rows 2..9 of a table: row i of the result is not row i of any shorter slice
    g.output("y", g.add(g.input("x", {8, 4}), g.slice(g.param("t", {16, 4}), 0, 2, 8)));
    CompiledGraph c = Session(GetParam()).compile(g);
    expect_refused(c, 8, "an input without rows spans the row axis");
  }
  {
    HirModule m;  // causal self-attention never looks past the query: equal to the padded run
    auto x = m.input("x", {1, 8, 4});
    m.output("y", m.self_attention(x, "a", 1, std::nullopt, true));
    CompiledGraph c = Session(GetParam()).compile_hir(m);
    EXPECT_TRUE(c.prepare_active_rows(8)) << c.active_rows_reason();
    EXPECT_EQ(c.active_rows_differs_from_padding(), "");
  }
}

// Without a mask, a run at r rows computes the graph as if it were compiled at r (kernels get the
// runtime rows: a mean divides by r, attention sees r keys), which a padded run does not.
TEST_P(ActiveRows, PlainMeanOverRowsIsTheExactMeanOfTheRealRows) {
  Graph g;
  Value x = g.input("x", {8, 4});
  g.output("y", g.sub(x, g.mean(x, {0}, true)));
  g.output("m", g.mean(x, {0}));
  CompiledGraph c = Session(GetParam()).compile(g);
  ASSERT_TRUE(c.prepare_active_rows(8)) << c.active_rows_reason();
  EXPECT_NE(c.active_rows_differs_from_padding().find("mean over rows"), std::string::npos)
      << c.active_rows_differs_from_padding();
  const std::vector<float> v = random_vector(12, 4);  // 3 rows
  NamedInput in{"x", v};
  const auto out = c.run_rows({&in, 1}, 3);
  std::vector<float> mean(4, 0.f), centred(12);
  for (size_t i = 0; i < 12; ++i) mean[i % 4] += v[i] / 3.f;
  for (size_t i = 0; i < 12; ++i) centred[i] = v[i] - mean[i % 4];
  EXPECT_LT(max_rel_error(out[0], centred), 1e-5);
  EXPECT_LT(max_rel_error(out[1], mean), 1e-5);
}

TEST_P(ActiveRows, UnmaskedSelfAttentionEqualsTheGraphCompiledAtTheRealRows) {
  auto build = [](int64_t rows) {
    HirModule m;
    auto x = m.input("x", {1, rows, 8});
    m.output("y", m.self_attention(x, "a", 2));
    return m;
  };
  HirModule at8 = build(8);
  const ParamMap params = rungs::testing::random_params(at8, 9);
  CompiledGraph c = Session(GetParam()).compile_hir(at8);
  for (const auto& [n, v] : params) c.set_param(n, v);
  ASSERT_TRUE(c.prepare_active_rows(8)) << c.active_rows_reason();
  EXPECT_NE(c.active_rows_differs_from_padding().find("without a key mask"), std::string::npos)
      << c.active_rows_differs_from_padding();
  for (int64_t r : {1, 3, 8}) {
    CompiledGraph exact = Session(GetParam()).compile_hir(build(r));
    for (const auto& [n, v] : params) exact.set_param(n, v);
    const std::vector<float> x = random_vector(static_cast<size_t>(r * 8), static_cast<uint32_t>(r));
    NamedInput in{"x", x};
    const auto want = exact.run({&in, 1});
    const auto got = c.run_rows({&in, 1}, r);
    EXPECT_LT(max_rel_error(got[0], want[0]), 1e-5) << "rows " << r;
    if (r < 8) {  // padding is what this model cannot take: the padded run differs
      std::vector<float> padded(64, 0.f);
      std::copy(x.begin(), x.end(), padded.begin());
      NamedInput pin{"x", padded};
      const auto full = c.run({&pin, 1})[0];
      EXPECT_GT(max_rel_error(std::vector<float>(full.begin(), full.begin() + r * 8), want[0]), 1e-3) << "rows " << r;
    }
  }
}

// A pooler or classifier on the first token: a slice of row 0 across the rows, which every run
// has. Here the width equals the extent, so the slice's own shape still holds E on another axis.
TEST_P(ActiveRows, FirstTokenSliceDropsTheRows) {
  Graph g;
  Value x = g.input("x", {1, 8, 8});
  g.output("h", g.relu(x));
  g.output("first", g.tanh(g.slice(x, 1, 0, 1)));
  CompiledGraph c = Session(GetParam()).compile(g);
  ASSERT_TRUE(c.prepare_active_rows(8)) << c.active_rows_reason();
  EXPECT_EQ(c.active_rows_differs_from_padding(), "");
  const std::vector<float> v = random_vector(24, 5);  // 3 rows
  NamedInput in{"x", v};
  const auto out = c.run_rows({&in, 1}, 3);
  ASSERT_EQ(out[0].size(), 24u);
  ASSERT_EQ(out[1].size(), 8u);
  std::vector<float> want(8);
  for (size_t i = 0; i < 8; ++i) want[i] = std::tanh(v[i]);
  EXPECT_LT(max_rel_error(out[1], want), 1e-6);
}

// Position embeddings as the ONNX frontend writes them: the first E rows of a longer table. The
// first r rows of that slice are the first r rows of the table.
TEST_P(ActiveRows, PrefixSliceOfATableCarriesRows) {
  Graph g;
  Value table = g.param("pos", {16, 4});
  g.output("y", g.add(g.input("x", {1, 8, 4}), g.slice(table, 0, 0, 8)));
  CompiledGraph c = Session(GetParam()).compile(g);
  const std::vector<float> t = random_vector(64, 1);
  c.set_param("pos", t);
  ASSERT_TRUE(c.prepare_active_rows(8)) << c.active_rows_reason();
  EXPECT_EQ(c.active_rows_differs_from_padding(), "");
  const std::vector<float> x = random_vector(12, 2);
  NamedInput in{"x", x};
  const auto out = c.run_rows({&in, 1}, 3);
  ASSERT_EQ(out[0].size(), 12u);
  std::vector<float> want(12);
  for (size_t i = 0; i < 12; ++i) want[i] = x[i] + t[i];
  EXPECT_LT(max_rel_error(out[0], want), 1e-6);
}

TEST_P(ActiveRows, RowsOutOfRangeAndWrongSizes) {
  Graph g = mlp(8);
  CompiledGraph c = Session(GetParam()).compile(g);
  for (const auto& name : c.param_names()) c.set_param(name, std::vector<float>(shape_numel(c.param_shape(name)), 0.5f));
  ASSERT_TRUE(c.prepare_active_rows(8));
  std::vector<float> x(3 * 16);
  NamedInput in{"x", x};
  expect_error([&] { c.run_rows({&in, 1}, 9); }, ErrorCode::OutOfRange, "rows must be in [1, 8], got 9");
  expect_error([&] { c.run_rows({&in, 1}, 4); }, ErrorCode::ShapeMismatch, "input 'x' has 48 values, expected 64 ([4, 16])");
  EXPECT_EQ(c.run_rows({&in, 1}, 3)[0].size(), 48u);
}

INSTANTIATE_TEST_SUITE_P(Devices, ActiveRows, ::testing::Values(Device::Reference, Device::Cpu),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
