// SPDX-License-Identifier: Apache-2.0
// The ONNX frontend on committed files (tests/import/onnx/make_test_models.py): symbols, layouts,
// roles, and outputs through BucketedCompileCache against values computed here or by torch.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

std::string test_file(const std::string& name) { return std::string(RUNGS_ONNX_TEST_DIR) + "/" + name; }

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// matmul_add.onnx: y = x @ W + b with W[i][j] = (3i + j - 6) / 8, b = [0.5, -1, 2].
std::vector<float> matmul_add_expected(const std::vector<float>& x, size_t rows) {
  const float b[3] = {0.5f, -1.f, 2.f};
  std::vector<float> y(rows * 3);
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < 3; ++j) {
      float acc = 0;
      for (size_t i = 0; i < 4; ++i) acc += x[r * 4 + i] * (static_cast<float>(3 * i + j) - 6.f) / 8.f;
      y[r * 3 + j] = acc + b[j];
    }
  return y;
}

TEST(OnnxImport, MatMulAddSymbolsAndLayouts) {
  const Model m = load_model(test_file("matmul_add.onnx"));
  EXPECT_EQ(m.name(), "matmul_add");
  EXPECT_EQ(m.bucket_dim(), "seq");  // "batch" is fixed to 1 by default
  const auto ins = m.inputs(5);
  ASSERT_EQ(ins.size(), 1u);
  EXPECT_EQ(ins[0].name, "x");
  EXPECT_EQ(ins[0].shape, (Shape{1, 5, 4}));
  EXPECT_EQ(ins[0].dtype, ElementType::F32);
  const auto outs = m.output_layouts(5);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].shape, (Shape{1, 5, 3}));
  EXPECT_EQ(outs[0].row_values, std::optional<size_t>(3));
  ASSERT_EQ(m.params().size(), 2u);
  EXPECT_EQ(m.params()[0].name, "W");
  EXPECT_EQ(m.params()[0].shape, (Shape{4, 3}));
  EXPECT_EQ(m.input_role(0), InputRole::Values);
  testing::expect_error([&] { m.to_json(); }, ErrorCode::Unsupported, "onnx file");
}

TEST(OnnxImport, MatMulAddBuildsAStaticGraph) {
  const Model m = load_model(test_file("matmul_add.onnx"), LoadOptions{});
  auto [module, weights] = m.build(3);
  const Graph g = module.lower();
  EXPECT_EQ(g.inputs().at(0).second, (Shape{1, 3, 4}));
  EXPECT_EQ(g.outputs().at(0).second, (Shape{1, 3, 3}));
  const std::vector<float> x = testing::random_vector(12, 7);
  const auto out = testing::compile_and_run(g, Device::Reference, {{"x", x}}, weights);
  EXPECT_LT(testing::max_rel_error(out.at(0), matmul_add_expected(x, 3)), 1e-6);
}

TEST(OnnxImport, MatMulAddThroughTheBucketedCache) {
  const std::vector<uint8_t> bytes = file_bytes(test_file("matmul_add.onnx"));
  const Model m = load_model_from_onnx_bytes(bytes, {}, "mm");
  for (bool active : {false, true}) {
    auto cache = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 64);
    cache.set_active_extent(active);
    for (size_t len : {1, 3, 5, 17}) {
      const std::vector<std::vector<float>> data = {testing::random_vector(len * 4, static_cast<uint32_t>(len))};
      const auto in = m.cache_inputs(data);
      const auto inners = m.output_inners();
      auto run = cache.run_padded_mixed(len, len, [&](uint64_t upper) { return m.build(upper); }, in, inners);
      ASSERT_TRUE(run.has_value());
      EXPECT_LT(testing::max_rel_error(run->outputs.at(0), matmul_add_expected(data[0], len)), 1e-5)
          << "len " << len << " active " << active;
    }
  }
}

TEST(OnnxImport, FixAndBucketDimOptions) {
  LoadOptions o;
  o.fix = {{"batch", 2}};
  const Model m = load_model(test_file("matmul_add.onnx"), o);
  EXPECT_EQ(m.inputs(3).at(0).shape, (Shape{2, 3, 4}));
  LoadOptions b;
  b.bucket_dim = "batch";
  b.fix = {{"seq", 4}};
  const Model mb = load_model(test_file("matmul_add.onnx"), b);
  EXPECT_EQ(mb.bucket_dim(), "batch");
  EXPECT_EQ(mb.inputs(3).at(0).shape, (Shape{3, 4, 4}));
  LoadOptions bad;
  bad.bucket_dim = "tokens";
  testing::expect_error([&] { load_model(test_file("matmul_add.onnx"), bad); }, ErrorCode::InvalidArgument,
                        "'tokens' is not a symbolic dim of the model's inputs (they are: batch, seq)");
  LoadOptions badfix;
  badfix.fix = {{"seq", 0}};
  testing::expect_error([&] { load_model(test_file("matmul_add.onnx"), badfix); }, ErrorCode::InvalidArgument,
                        "seq=0 is outside");
  LoadOptions json_opts;
  json_opts.bucket_dim = "seq";
  testing::expect_error([&] { load_model("model.json", json_opts); }, ErrorCode::InvalidArgument,
                        "apply to .onnx files and TF.js graph models only");
}

// The torch-exported encoders (make_test_models.py) at every golden length, through the bucketed
// cache with the pow2 ladder, padded and with active extent: 1e-4 against torch on the real rows.
struct Golden {
  size_t length;
  std::vector<std::vector<float>> inputs;   // model input order
  std::vector<std::vector<float>> outputs;  // model output order
};

std::vector<Golden> read_golden(const Model& m, const std::string& name) {
  std::ifstream in(test_file(name + ".golden.json"));
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Golden> out;
  for (const auto& c : j.at("cases")) {
    Golden g;
    g.length = c.at("length").get<size_t>();
    for (const auto& i : m.inputs(g.length)) g.inputs.push_back(c.at("inputs").at(i.name).get<std::vector<float>>());
    for (const auto& o : m.output_names()) g.outputs.push_back(c.at("outputs").at(o).get<std::vector<float>>());
    out.push_back(std::move(g));
  }
  return out;
}

void expect_matches_torch(const std::string& name, size_t expected_outputs) {
  const Model m = load_model(test_file(name + ".onnx"));
  EXPECT_EQ(m.bucket_dim(), "seq");
  const std::vector<Golden> cases = read_golden(m, name);
  ASSERT_GE(cases.size(), 4u);
  ASSERT_EQ(m.output_names().size(), expected_outputs);
  for (bool active : {false, true}) {
    auto cache = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 4, 64);
    cache.set_active_extent(active);
    for (const Golden& g : cases) {
      const auto in = m.cache_inputs(g.inputs);
      const auto inners = m.output_inners();
      auto run = cache.run_padded_mixed(g.length, g.length, [&](uint64_t upper) { return m.build(upper); }, in, inners);
      ASSERT_TRUE(run.has_value());
      ASSERT_EQ(run->outputs.size(), g.outputs.size());
      for (size_t o = 0; o < g.outputs.size(); ++o) {
        EXPECT_LT(testing::max_rel_error(run->outputs[o], g.outputs[o]), 1e-4)
            << name << " output " << m.output_names()[o] << " length " << g.length << " bucket " << run->upper
            << (active ? " active" : " padded");
      }
    }
  }
  // Exactly at each length on the reference device too.
  for (const Golden& g : cases) {
    auto [module, weights] = m.build(g.length);
    std::vector<std::pair<std::string, std::vector<float>>> named;
    const auto ins = m.inputs(g.length);
    for (size_t i = 0; i < ins.size(); ++i) named.emplace_back(ins[i].name, g.inputs[i]);
    const auto out = testing::compile_and_run(module.lower(), Device::Reference, named, weights);
    for (size_t o = 0; o < g.outputs.size(); ++o)
      EXPECT_LT(testing::max_rel_error(out.at(o), g.outputs[o]), 1e-4) << name << " reference length " << g.length;
  }
}

TEST(OnnxImport, TinyBertMatchesTorch) {
  expect_matches_torch("tiny_bert", 2);
  const Model m = load_model(test_file("tiny_bert.onnx"));
  const auto ins = m.inputs(7);
  ASSERT_EQ(ins.size(), 3u);
  EXPECT_EQ(ins[0].dtype, ElementType::I64);
  EXPECT_EQ(m.input_role(0), InputRole::Ids);
  EXPECT_EQ(m.input_vocab(0), 50u);
  EXPECT_EQ(m.input_role(1), InputRole::Mask);
  EXPECT_EQ(m.input_role(2), InputRole::Ids);  // token types index a table of 2 rows
  EXPECT_EQ(m.input_vocab(2), 2u);
  const auto outs = m.output_layouts(7);
  EXPECT_EQ(outs[0].shape, (Shape{1, 7, 16}));
  EXPECT_EQ(outs[0].row_values, std::optional<size_t>(16));
  EXPECT_FALSE(outs[1].follows_bucket);
  // The position table has 64 rows: a longer extent fails at that extent, naming the node.
  testing::expect_error([&] { m.build(65); }, ErrorCode::ShapeMismatch, "(at seq=65): node '");
}

TEST(OnnxImport, TinySentenceEncoderMatchesTorch) {
  expect_matches_torch("tiny_sentence", 1);
  const Model m = load_model(test_file("tiny_sentence.onnx"));
  EXPECT_EQ(m.input_role(1), InputRole::Mask);
  EXPECT_EQ(m.output_layouts(9).at(0).shape, (Shape{1, 16}));
}

}  // namespace
}  // namespace rungs
