// SPDX-License-Identifier: Apache-2.0
// Active extent: a graph compiled at extent E runs at r < E rows without padding when every op is
// row-local; results equal the padded run's real rows and the work counter shows the skipped rows.
#include <gtest/gtest.h>

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

TEST_P(ActiveRows, UnsupportedGraphsSayWhy) {
  {
    Graph g;  // a plain mean over rows depends on the padding
    g.output("y", g.mean(g.input("x", {8, 4}), {0}));
    CompiledGraph c = Session(GetParam()).compile(g);
    EXPECT_FALSE(c.prepare_active_rows(8));
    EXPECT_NE(c.active_rows_reason().find("mean or max over rows"), std::string::npos) << c.active_rows_reason();
    std::vector<float> x(12);
    NamedInput in{"x", x};
    expect_error([&] { c.run_rows({&in, 1}, 3); }, ErrorCode::Unsupported, "cannot run at fewer rows");
  }
  {
    HirModule m;  // self-attention without a mask would attend to padded keys
    auto x = m.input("x", {1, 8, 4});
    m.output("y", m.self_attention(x, "a", 1));
    CompiledGraph c = Session(GetParam()).compile_hir(m);
    EXPECT_FALSE(c.prepare_active_rows(8));
    EXPECT_NE(c.active_rows_reason().find("padded keys"), std::string::npos) << c.active_rows_reason();
  }
  {
    HirModule m;  // causal self-attention never looks past the query: supported without a mask
    auto x = m.input("x", {1, 8, 4});
    m.output("y", m.self_attention(x, "a", 1, std::nullopt, true));
    CompiledGraph c = Session(GetParam()).compile_hir(m);
    EXPECT_TRUE(c.prepare_active_rows(8)) << c.active_rows_reason();
  }
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
