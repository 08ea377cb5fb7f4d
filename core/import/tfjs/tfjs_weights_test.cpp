// SPDX-License-Identifier: Apache-2.0
// read_weights (tfjs_weights.hpp): a group's shards read in manifest order and laid end to end,
// each dtype decoded into its kind, large float32 weights kept as param data only, and the
// errors that name the weight (the same cases through a whole model: tests/import/tfjs).
#include "core/import/tfjs/tfjs_weights.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "rungs/rungs.hpp"

namespace rungs::tfjs_import {
namespace {

using json = nlohmann::json;

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Two groups: the first's three weights across two shards (the split falls inside `w`), the
// second's in one shard. Shard i answers to (i, path); anything else is a test failure.
struct Files {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> shards;
  std::vector<size_t> asked;
  model::ShardReader reader() {
    return [this](size_t i, const std::string& path) {
      asked.push_back(i);
      EXPECT_LT(i, shards.size());
      EXPECT_EQ(path, shards.at(i).first);
      return shards.at(i).second;
    };
  }
};

const json kManifest = json::parse(R"([
  {"paths": ["g1-shard1of2", "g1-shard2of2"], "weights": [
    {"name": "w", "shape": [2, 3], "dtype": "float32"},
    {"name": "ids", "shape": [3], "dtype": "int32"},
    {"name": "flag", "shape": [2], "dtype": "bool"}]},
  {"paths": ["g2-shard1of1"], "weights": [
    {"name": "scale", "shape": [], "dtype": "float32"}]}
])");

Files files() {
  std::vector<uint8_t> g1 = bytes_of(std::vector<float>{1, -2, 3, -4, 5, -6});
  const std::vector<uint8_t> ids = bytes_of(std::vector<int32_t>{7, -1, 40000});
  g1.insert(g1.end(), ids.begin(), ids.end());
  g1.push_back(1);
  g1.push_back(0);
  Files f;
  f.shards.push_back({"g1-shard1of2", {g1.begin(), g1.begin() + 10}});  // ends inside w's third value
  f.shards.push_back({"g1-shard2of2", {g1.begin() + 10, g1.end()}});
  f.shards.push_back({"g2-shard1of1", bytes_of(std::vector<float>{0.5F})});
  return f;
}

TEST(TfjsWeights, ShardsJoinedAndEveryDtypeDecoded) {
  Files f = files();
  std::map<std::string, std::vector<float>> floats;
  const auto w = read_weights(kManifest, f.reader(), "m.json", &floats);
  EXPECT_EQ(f.asked, (std::vector<size_t>{0, 1, 2}));
  ASSERT_EQ(w.size(), 4U);
  // A float32 of many values: param data, not a constant's values.
  EXPECT_EQ(w.at("w").kind, onnx_import::Kind::Float);
  EXPECT_EQ(w.at("w").shape, (Shape{2, 3}));
  EXPECT_TRUE(w.at("w").v.empty());
  EXPECT_EQ(floats.at("w"), (std::vector<float>{1, -2, 3, -4, 5, -6}));
  EXPECT_EQ(w.at("ids").kind, onnx_import::Kind::Int);
  EXPECT_EQ(w.at("ids").v, (std::vector<double>{7, -1, 40000}));
  EXPECT_EQ(w.at("flag").kind, onnx_import::Kind::Bool);
  EXPECT_EQ(w.at("flag").v, (std::vector<double>{1, 0}));
  // A float32 scalar is a constant (shapes and scales fold), and not a param.
  EXPECT_EQ(w.at("scale").v, (std::vector<double>{0.5}));
  EXPECT_EQ(floats.count("scale"), 0U);
  EXPECT_EQ(floats.size(), 1U);
}

void expect_error(const json& manifest, Files f, ErrorCode code, const std::string& part) {
  std::map<std::string, std::vector<float>> floats;
  try {
    (void)read_weights(manifest, f.reader(), "m.json", &floats);
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find("m.json: " + part), std::string::npos) << e.what();
  }
}

TEST(TfjsWeights, ErrorsNameTheFileAndTheWeight) {
  Files shortf = files();
  shortf.shards[1].second.pop_back();  // flag's second byte missing
  expect_error(kManifest, shortf, ErrorCode::ParseError, "the shards end before weight 'flag' (37 bytes)");
  Files longf = files();
  longf.shards[2].second.push_back(0);
  expect_error(kManifest, longf, ErrorCode::ParseError, "the shards hold 5 bytes, the manifest's weights 4");
  json m = kManifest;
  m[0]["weights"][1]["dtype"] = "string";
  expect_error(m, files(), ErrorCode::Unsupported, "weight 'ids' has dtype string (float32, int32 and bool are supported)");
  m = kManifest;
  m[1]["weights"][0]["quantization"] = {{"dtype", "uint8"}, {"scale", 0.1}, {"min", 0}};
  expect_error(m, files(), ErrorCode::Unsupported, "weight 'scale' is quantized");
  expect_error(json::object(), files(), ErrorCode::ParseError, "weightsManifest must be an array");
  m = kManifest;
  m[1]["paths"][0] = 3;
  expect_error(m, files(), ErrorCode::ParseError, "weightsManifest: a path must be a string");
}

}  // namespace
}  // namespace rungs::tfjs_import
