// SPDX-License-Identifier: Apache-2.0
// The TF.js frontend (core/import/tfjs) on small hand-written graph models: one that runs (a
// MatMul and a Relu on a [tokens, 2] input, weights from a shard) and the bad files of
// docs/errors.md (T1..T6). Needs no npm package.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

const char* kNodes = R"([
  {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"},
   "shape": {"shape": {"dim": [{"size": "-1"}, {"size": "2"}]}}}},
  {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {"dtype": "DT_FLOAT"}}}},
  {"name": "y", "op": "MatMul", "input": ["x", "w"], "attr": {"transpose_a": {"b": false}, "transpose_b": {"b": false}}},
  {"name": "z", "op": "RELU_OP", "input": ["y:0"]}
])";

std::string model_json(const std::string& relu_op = "Relu", const std::string& weights_extra = "") {
  std::string nodes = kNodes;
  nodes.replace(nodes.find("RELU_OP"), 7, relu_op);
  return std::string(R"({"modelTopology": {"node": )") + nodes + R"(}, "weightsManifest": [{"paths": ["shard1"],
    "weights": [{"name": "w", "shape": [2, 3], "dtype": "float32")" +
         weights_extra + "}]}]}";
}

const std::vector<float> kW = {1, -2, 3, -4, 5, -6};  // [2, 3]

std::vector<std::vector<uint8_t>> shards(size_t floats = 6) {
  std::vector<uint8_t> b(floats * 4);
  std::memcpy(b.data(), kW.data(), std::min(floats, kW.size()) * 4);
  return {b};
}

TEST(TfjsFrontend, MatMulReluFromBytesAndFromAFile) {
  const Model m = load_model_from_tfjs(model_json(), shards(), "tiny");
  EXPECT_EQ(m.bucket_dim(), "tokens");
  EXPECT_EQ(m.inputs(3).at(0).shape, (Shape{3, 2}));
  EXPECT_EQ(m.output_names(), (std::vector<std::string>{"z"}));
  auto [module, weights] = m.build(3);
  const std::vector<float> x = {1, 2, -1, 0, 0.5f, 0.5f};
  const auto out = testing::compile_and_run(module.lower(), Device::Reference, {{"x", x}}, weights);
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) want.push_back(std::max(0.f, x[r * 2] * kW[c] + x[r * 2 + 1] * kW[3 + c]));
  EXPECT_EQ(out.at(0), want);

  // The same from a folder: model.json and the shard beside it.
  const auto dir = std::filesystem::temp_directory_path() / ("rungs_tfjs_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  std::ofstream((dir / "model.json").string()) << model_json();
  const auto s = shards();
  std::ofstream((dir / "shard1").string(), std::ios::binary).write(reinterpret_cast<const char*>(s[0].data()), static_cast<std::streamsize>(s[0].size()));
  const Model f = load_model((dir / "model.json").string());
  auto [fm, fw] = f.build(3);
  EXPECT_EQ(testing::compile_and_run(fm.lower(), Device::Reference, {{"x", x}}, fw).at(0), want);
  // T6: load options other than bucket_dim "tokens" do not apply.
  LoadOptions o;
  o.fix = {{"batch", 1}};
  testing::expect_error([&] { load_model((dir / "model.json").string(), o); }, ErrorCode::InvalidArgument,
                        "a TF.js graph model takes no load options");
  std::filesystem::remove_all(dir);
}

TEST(TfjsFrontend, UnsupportedOpNamesNodeOpAndTheList) {  // T1
  testing::expect_error([&] { load_model_from_tfjs(model_json("Conv3D"), shards(), "tiny"); }, ErrorCode::Unsupported,
                        "tiny/model.json: node 'z' (Conv3D): op Conv3D is not supported; the supported TF ops are: Abs, Add");
}

TEST(TfjsFrontend, ShardsShortMissingOrLong) {  // T2, T3
  testing::expect_error([&] { load_model_from_tfjs(model_json(), shards(5), "tiny"); }, ErrorCode::ParseError,
                        "the shards end before weight 'w'");
  testing::expect_error([&] { load_model_from_tfjs(model_json(), shards(7), "tiny"); }, ErrorCode::ParseError,
                        "the shards hold 28 bytes, the manifest's weights 24");
  testing::expect_error([&] { load_model_from_tfjs(model_json(), {}, "tiny"); }, ErrorCode::InvalidArgument,
                        "names shard 1 ('shard1') but 0 were given");
}

TEST(TfjsFrontend, NotAGraphModel) {  // T4
  testing::expect_error([&] { load_model_from_tfjs(R"({"modelTopology": {"class_name": "Sequential"}, "weightsManifest": []})", {}, "k"); },
                        ErrorCode::ParseError, "modelTopology.node must be an array");
  testing::expect_error([&] { load_model_from_tfjs(R"({"weightsManifest": []})", {}, "k"); }, ErrorCode::ParseError,
                        "not a TF.js graph model");
}

TEST(TfjsFrontend, QuantizedOrUnlistedWeights) {  // T5
  testing::expect_error([&] { load_model_from_tfjs(model_json("Relu", R"(, "quantization": {"dtype": "uint8"})"), shards(), "tiny"); },
                        ErrorCode::Unsupported, "weight 'w' is quantized");
  std::string j = model_json();
  j.replace(j.find(R"("name": "w", "shape")"), 11, R"("name": "v")");
  testing::expect_error([&] { load_model_from_tfjs(j, shards(), "tiny"); }, ErrorCode::ParseError,
                        "node 'w' (Const): its value is not in the weightsManifest");
}

}  // namespace
}  // namespace rungs
