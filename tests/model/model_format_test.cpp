// SPDX-License-Identifier: Apache-2.0
// Model descriptions (docs/model-format.md): every block maps to the HirModule call it names,
// JSON and file round trips, and every malformed field or weights file gives Error(ParseError)
// naming the field path or tensor.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/safetensors.hpp"
#include "core/numeric/half.hpp"
#include "rungs/error.hpp"
#include "rungs/model.hpp"

namespace rungs {
namespace {

using nlohmann::json;

// Every block kind, with non-default options where a block has them.
const char* kEveryBlock = R"({
  "format": "rungs-model", "version": 1, "name": "every", "description": "one of each block",
  "bucket_dim": "seq",
  "inputs": [{"name": "ids", "shape": [2, "seq"]}, {"name": "mask", "shape": [2, "seq"]}],
  "blocks": [
    {"op": "embedding", "name": "emb", "input": "ids", "vocab": 11, "dim": 12, "out": "e"},
    {"op": "rms_norm", "name": "rn", "input": "e", "eps": 1e-5, "out": "r"},
    {"op": "self_attention", "name": "att", "input": "r", "heads": 3, "mask": "mask", "causal": true, "out": "a"},
    {"op": "add", "inputs": ["e", "a"], "out": "h"},
    {"op": "layer_norm", "name": "ln", "input": "h", "out": "n"},
    {"op": "mlp", "name": "ff", "input": "n", "hidden": 7, "activation": "silu", "out": "f"},
    {"op": "linear", "name": "proj", "input": "f", "out_features": 5, "activation": "tanh", "bias": false, "out": "p"},
    {"op": "mean_pool", "input": "p", "mask": "mask", "out": "pooled"},
    {"op": "mean_pool", "input": "p", "out": "pooled_all"}
  ],
  "outputs": [{"name": "emb_out", "value": "pooled"}, {"name": "pooled_all"}, {"name": "tokens", "value": "p"}]
})";

// The same module written with the builder directly.
HirModule every_block_by_hand(int64_t seq) {
  HirModule m;
  Value ids = m.input("ids", {2, seq});
  Value mask = m.input("mask", {2, seq});
  Value e = m.embedding(ids, "emb", 11, 12);
  Value r = m.rms_norm(e, "rn", 1e-5f);
  Value a = m.self_attention(r, "att", 3, mask, true);
  Value h = m.add(e, a);
  Value n = m.layer_norm(h, "ln");
  Value f = m.mlp(n, "ff", 7, Activation::Silu);
  Value p = m.linear(f, "proj", 5, Activation::Tanh, false);
  Value pooled = m.mean_pool(p, mask);
  Value pooled_all = m.mean_pool(p);
  m.output("emb_out", pooled);
  m.output("pooled_all", pooled_all);
  m.output("tokens", p);
  return m;
}

std::string error_of(const std::function<void()>& f, ErrorCode want) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want) << "got " << to_string(e.code()) << ": " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::string parse_error(const std::string& text) {
  return error_of([&] { Model::parse(text, "m.json"); }, ErrorCode::ParseError);
}

ParamMap seeded_weights(const Model& m, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  ParamMap w;
  for (const auto& p : m.params()) {
    auto& v = w[p.name];
    v.resize(static_cast<size_t>(shape_numel(p.shape)));
    for (float& x : v) x = dist(rng);
  }
  return w;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("rungs_model_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            std::to_string(++counter) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// ---------------------------------------------------------------- correctness

TEST(ModelFormat, EveryBlockBuildsTheModuleItNames) {
  const Model m = Model::parse(kEveryBlock, "every.json");
  EXPECT_EQ(m.name(), "every");
  EXPECT_EQ(m.bucket_dim(), "seq");
  EXPECT_EQ(m.description(), "one of each block");
  EXPECT_EQ(m.output_names(), (std::vector<std::string>{"emb_out", "pooled_all", "tokens"}));
  const auto ins = m.inputs(19);
  ASSERT_EQ(ins.size(), 2u);
  EXPECT_EQ(ins[0].name, "ids");
  EXPECT_EQ(ins[0].shape, (Shape{2, 19}));
  EXPECT_EQ(ins[1].shape, (Shape{2, 19}));
  for (int64_t seq : {1, 7, 32}) {
    const HirModule built = m.build_module(static_cast<uint64_t>(seq));
    const HirModule hand = every_block_by_hand(seq);
    EXPECT_EQ(built.params(), hand.params()) << "seq=" << seq;
    EXPECT_EQ(built.lower().to_text(), hand.lower().to_text()) << "seq=" << seq;
  }
  // params(): the module's params in creation order, F32 until weights say otherwise.
  const auto hand_params = every_block_by_hand(4).params();
  ASSERT_EQ(m.params().size(), hand_params.size());
  size_t count = 0;
  for (size_t i = 0; i < hand_params.size(); ++i) {
    EXPECT_EQ(m.params()[i].name, hand_params[i].first);
    EXPECT_EQ(m.params()[i].shape, hand_params[i].second);
    EXPECT_EQ(m.params()[i].dtype, TensorDType::F32);
    count += static_cast<size_t>(shape_numel(hand_params[i].second));
  }
  EXPECT_EQ(m.param_count(), count);
  EXPECT_FALSE(m.has_weights());
}

TEST(ModelFormat, JsonRoundTripIsCanonicalAndLossless) {
  const Model m = Model::parse(kEveryBlock, "every.json");
  const std::string text = m.to_json("every.safetensors");
  const Model again = Model::parse(text, "again.json");
  EXPECT_EQ(again.to_json("every.safetensors"), text);
  EXPECT_EQ(again.build_module(9).lower().to_text(), m.build_module(9).lower().to_text());
  EXPECT_EQ(again.params().size(), m.params().size());
  // Canonical: defaults are written out, so the text says exactly what runs.
  const json j = json::parse(text);
  EXPECT_EQ(j["weights"], "every.safetensors");
  EXPECT_EQ(j["blocks"][4]["eps"].get<double>(), 1e-5);      // layer_norm default
  EXPECT_EQ(j["blocks"][1]["eps"].get<double>(), 1e-5);      // rms_norm, as written
  EXPECT_EQ(j["blocks"][6]["bias"], false);
  EXPECT_EQ(j["blocks"][2]["causal"], true);
  EXPECT_EQ(j["blocks"][5]["activation"], "silu");
  EXPECT_EQ(j["outputs"][1]["value"], "pooled_all");
  EXPECT_EQ(j["inputs"][0]["shape"], json::parse(R"([2, "seq"])"));
  EXPECT_FALSE(json::parse(m.to_json()).contains("weights"));
}

TEST(ModelFormat, StaticModelIgnoresTheExtent) {
  const char* text = R"({"format": "rungs-model", "version": 1, "name": "s",
    "inputs": [{"name": "x", "shape": [3, 4]}],
    "blocks": [{"op": "linear", "name": "l", "input": "x", "out_features": 2, "out": "y"}],
    "outputs": [{"name": "y"}]})";
  const Model m = Model::parse(text);
  EXPECT_EQ(m.bucket_dim(), "");
  EXPECT_EQ(m.inputs(0)[0].shape, (Shape{3, 4}));
  EXPECT_EQ(m.inputs(1000)[0].shape, (Shape{3, 4}));
}

TEST(ModelFormat, SaveAndLoadInEveryDtype) {
  Model m = Model::parse(kEveryBlock, "every.json");
  m.set_weights(seeded_weights(m, 5));
  TempDir dir;
  for (TensorDType dt : {TensorDType::F32, TensorDType::BF16, TensorDType::F16}) {
    const std::string path = dir.file(std::string("every_") + std::string(to_string(dt)) + ".json");
    save_model(m, path, dt);
    const Model loaded = load_model(path);
    EXPECT_EQ(loaded.to_json(), m.to_json());
    ASSERT_TRUE(loaded.has_weights());
    for (const auto& p : loaded.params()) {
      EXPECT_EQ(p.dtype, dt) << p.name;
      const auto& want = m.weights().at(p.name);
      const auto& got = loaded.weights().at(p.name);
      ASSERT_EQ(got.size(), want.size()) << p.name;
      for (size_t i = 0; i < want.size(); ++i) {
        const float w = dt == TensorDType::F32    ? want[i]
                        : dt == TensorDType::BF16 ? numeric::bf16_to_f32(numeric::f32_to_bf16(want[i]))
                                                  : numeric::f16_to_f32(numeric::f32_to_f16(want[i]));
        ASSERT_EQ(got[i], w) << p.name << "[" << i << "]";
      }
    }
    // build() hands out exactly these weights with the module at the extent asked for.
    auto [module, params] = loaded.build(6);
    EXPECT_EQ(params, loaded.weights());
    EXPECT_EQ(module.params(), every_block_by_hand(6).params());
    // The same from bytes, as the wasm package loads it.
    const std::string text = m.to_json();
    const auto bytes = model_weights_bytes(m, dt);
    const Model from_bytes = load_model_from_bytes(text, bytes, "every");
    EXPECT_EQ(from_bytes.weights(), loaded.weights());
  }
}

TEST(ModelFormat, ModelWithoutParamsNeedsNoWeights) {
  const char* text = R"({"format": "rungs-model", "version": 1, "name": "pool", "bucket_dim": "rows",
    "inputs": [{"name": "x", "shape": [1, "rows", 4]}, {"name": "m", "shape": [1, "rows"]}],
    "blocks": [{"op": "mean_pool", "input": "x", "mask": "m", "out": "y"}], "outputs": [{"name": "y"}]})";
  TempDir dir;
  write_text(dir.file("pool.json"), text);
  const Model m = load_model(dir.file("pool.json"));
  EXPECT_TRUE(m.params().empty());
  EXPECT_TRUE(m.has_weights());
  EXPECT_TRUE(m.build(3).second.empty());
  EXPECT_TRUE(load_model_from_bytes(text, {}, "pool").has_weights());
}

// ---------------------------------------------------------------- errors in the description

// Applies `edit` to the valid description and returns the ParseError message.
std::string edited_error(const std::function<void(json&)>& edit) {
  json j = json::parse(kEveryBlock);
  edit(j);
  return parse_error(j.dump());
}

TEST(ModelFormatErrors, FieldPathsInMessages) {
  struct Case {
    std::function<void(json&)> edit;
    std::string want;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["blocks"][2]["heads"] = -2; }, "m.json: blocks[2].heads: expected a positive integer"},
      {[](json& j) { j["blocks"][2]["heads"] = 2.5; }, "blocks[2].heads: expected a positive integer"},
      {[](json& j) { j["blocks"][2]["heads"] = "4"; }, "blocks[2].heads: expected a positive integer"},
      {[](json& j) { j["blocks"][2].erase("heads"); }, "blocks[2].heads: missing (required)"},
      {[](json& j) { j["blocks"][1]["op"] = "conv"; }, "blocks[1].op: expected one of \"linear\""},
      {[](json& j) { j["blocks"][2]["head"] = 4; }, "blocks[2].head: unknown field"},
      {[](json& j) { j["blocks"][7]["name"] = "pool"; }, "blocks[7].name: unknown field"},
      {[](json& j) { j["blocks"][4]["input"] = "nope"; }, "blocks[4].input: unknown value 'nope'"},
      {[](json& j) { j["blocks"][0]["input"] = "h"; }, "blocks[0].input: unknown value 'h'"},  // defined later
      {[](json& j) { j["blocks"][3]["inputs"] = {"e"}; }, "blocks[3].inputs: expected two value names"},
      {[](json& j) { j["blocks"][3]["inputs"][1] = "zz"; }, "blocks[3].inputs[1]: unknown value 'zz'"},
      {[](json& j) { j["blocks"][2]["mask"] = "nomask"; }, "blocks[2].mask: unknown value 'nomask'"},
      {[](json& j) { j["blocks"][4]["out"] = "e"; }, "blocks[4].out: value 'e' is already defined"},
      {[](json& j) { j["blocks"][4]["out"] = "ids"; }, "blocks[4].out: value 'ids' is already defined"},
      {[](json& j) { j["blocks"][5]["activation"] = "swish"; }, "blocks[5].activation: expected one of"},
      {[](json& j) { j["blocks"][6]["bias"] = "yes"; }, "blocks[6].bias: expected true or false"},
      {[](json& j) { j["blocks"][4]["eps"] = -1; }, "blocks[4].eps: expected a number in (0, 1]"},
      {[](json& j) { j["blocks"][0]["vocab"] = 0; }, "blocks[0].vocab: expected a positive integer"},
      {[](json& j) { j["blocks"][0]["dim"] = 1e12; }, "blocks[0].dim: expected a positive integer"},
      {[](json& j) { j["blocks"][0]["dim"] = 4294967296; }, "blocks[0].dim: expected a positive integer <= 2147483647"},
      {[](json& j) { j["blocks"][0]["name"] = "has space"; }, "blocks[0].name: expected a name"},
      {[](json& j) { j["blocks"][0]["name"] = ""; }, "blocks[0].name: expected a name"},
      {[](json& j) { j["blocks"][0] = 3; }, "blocks[0]: expected an object"},
      {[](json& j) { j["blocks"] = json::object(); }, "blocks: expected an array"},
      {[](json& j) { j.erase("blocks"); }, "blocks: missing (required)"},
      {[](json& j) { j["version"] = 2; }, "version: expected 1"},
      {[](json& j) { j["format"] = "onnx"; }, "format: expected \"rungs-model\""},
      {[](json& j) { j["extra"] = 1; }, "extra: unknown field"},
      {[](json& j) { j["inputs"][0]["shape"][1] = "sq"; }, "inputs[0].shape[1]: expected a positive integer or the bucket dim \"seq\""},
      {[](json& j) { j["inputs"][0]["shape"][0] = 0; }, "inputs[0].shape[0]: expected a positive integer"},
      {[](json& j) { j["inputs"][0]["shape"][0] = -3; }, "inputs[0].shape[0]: expected a positive integer"},
      {[](json& j) { j["inputs"][0]["shape"] = json::array({1, 1, 1, 1, 1, 1, 1, 1, 1}); }, "inputs[0].shape: expected at most 8 dims"},
      {[](json& j) { j["inputs"][1]["name"] = "ids"; }, "inputs[1].name: value 'ids' is already defined"},
      {[](json& j) { j["inputs"] = json::array(); }, "inputs: expected a non-empty array"},
      {[](json& j) { j.erase("bucket_dim"); }, "inputs[0].shape[1]: expected a positive integer (the model declares no bucket_dim"},
      {[](json& j) {
         j["inputs"][0]["shape"][1] = 4;
         j["inputs"][1]["shape"][1] = 4;
       },
       "bucket_dim: \"seq\" is declared but no input shape uses it"},
      {[](json& j) { j["outputs"][1] = {{"name", "emb_out"}, {"value", "p"}}; },
       "outputs[1].name: output 'emb_out' is declared twice"},
      {[](json& j) { j["outputs"][0]["value"] = "nothing"; }, "outputs[0].value: unknown value 'nothing'"},
      {[](json& j) { j["outputs"] = json::array(); }, "outputs: expected a non-empty array"},
      {[](json& j) { j["weights"] = 7; }, "weights: expected a string"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string msg = edited_error(cases[i].edit);
    EXPECT_NE(msg.find(cases[i].want), std::string::npos) << "case " << i << "\n  want: " << cases[i].want
                                                          << "\n  got:  " << msg;
  }
}

TEST(ModelFormatErrors, NotAModelDescription) {
  EXPECT_NE(parse_error("{\"format\": ").find("m.json: model description: invalid JSON"), std::string::npos);
  EXPECT_NE(parse_error("[1]").find("m.json: expected a JSON object"), std::string::npos);
  EXPECT_NE(parse_error("").find("invalid JSON"), std::string::npos);
  const std::string deep = "{\"format\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_NE(parse_error(deep).find("format: expected \"rungs-model\""), std::string::npos);
  EXPECT_NE(parse_error(R"({"format": "rungs-model", "format": "x"})").find("duplicate key \"format\""),
            std::string::npos);
}

TEST(ModelFormatErrors, ShapeErrorsNameTheBlockAndExtent) {
  // 12 is not divisible into 5 heads.
  const std::string msg = edited_error([](json& j) { j["blocks"][2]["heads"] = 5; });
  // The place in the file and the extent from the model, the op and block once, from the builder.
  EXPECT_NE(msg.find("m.json: blocks[2] at seq=2: self_attention 'att': heads=5 must be >= 1 and divide the width 12"),
            std::string::npos)
      << msg;
  // A mean_pool over a [B, S] value: the builder refuses it, reported as the file's error.
  const std::string msg2 = edited_error([](json& j) { j["blocks"][7]["input"] = "ids"; });
  EXPECT_NE(msg2.find("blocks[7] at seq=2: mean_pool: x must be [B, S, D], got [2, 2]"), std::string::npos) << msg2;
}

TEST(ModelFormatErrors, ParamShapeMayNotFollowTheBucketDim) {
  // A linear over the seq axis would need a weight per extent.
  const std::string msg = parse_error(R"({"format": "rungs-model", "version": 1, "name": "bad", "bucket_dim": "seq",
    "inputs": [{"name": "x", "shape": [1, "seq"]}],
    "blocks": [{"op": "linear", "name": "l", "input": "x", "out_features": 2, "out": "y"}],
    "outputs": [{"name": "y"}]})");
  EXPECT_NE(msg.find("blocks[0] (linear 'l'): param 'l.weight' has shape [2, 2] at seq=2 but [3, 2] at seq=3"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("may not depend on the bucket dim"), std::string::npos) << msg;
}

TEST(ModelFormatErrors, TwoBlocksWithOneName) {
  // Two blocks named "rn" would both create rn.gamma: refused, naming the second block.
  const std::string msg = edited_error([](json& j) { j["blocks"][4]["name"] = "rn"; j["blocks"][4]["op"] = "rms_norm"; });
  EXPECT_NE(msg.find("m.json: blocks[4] at seq=2: rms_norm: the name 'rn' is already used"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rn.gamma"), std::string::npos) << msg;
}

TEST(ModelFormatErrors, ExtentOutOfRange) {
  Model m = Model::parse(kEveryBlock);
  EXPECT_NE(error_of([&] { m.build_module(0); }, ErrorCode::OutOfRange).find("extent 0 for bucket dim 'seq'"),
            std::string::npos);
  error_of([&] { m.inputs(Model::max_extent() + 1); }, ErrorCode::OutOfRange);
  EXPECT_NE(error_of([&] { m.build(4); }, ErrorCode::ParamNotSet).find("model 'every'"), std::string::npos);
}

TEST(ModelFormatErrors, SetWeightsChecksNamesAndSizesAndLeavesTheModelUnchanged) {
  Model m = Model::parse(kEveryBlock);
  ParamMap w = seeded_weights(m, 1);
  ParamMap extra = w;
  extra["stray"] = {1};
  EXPECT_NE(error_of([&] { m.set_weights(extra); }, ErrorCode::UnknownName).find("'stray'"), std::string::npos);
  ParamMap missing = w;
  missing.erase("ln.beta");
  EXPECT_NE(error_of([&] { m.set_weights(missing); }, ErrorCode::MissingInput).find("'ln.beta' [12]"),
            std::string::npos);
  ParamMap wrong = w;
  wrong["emb.table"].pop_back();
  EXPECT_NE(error_of([&] { m.set_weights(wrong); }, ErrorCode::ShapeMismatch)
                .find("param 'emb.table' has 131 values, expected 132 ([11, 12])"),
            std::string::npos);
  EXPECT_FALSE(m.has_weights());
  EXPECT_TRUE(m.weights().empty());
  m.set_weights(w, TensorDType::BF16);
  EXPECT_TRUE(m.has_weights());
  EXPECT_EQ(m.params()[0].dtype, TensorDType::BF16);
}

TEST(ModelFormatErrors, MutatedDescriptionsNeverCrash) {
  const std::string good = kEveryBlock;
  size_t refused = 0;
  for (uint32_t seed = 0; seed < 1500; ++seed) {
    std::mt19937 rng(seed);
    std::string text = good;
    for (int e = 0; e < 1 + static_cast<int>(rng() % 3); ++e) {
      const size_t at = rng() % text.size();
      const char pool[] = "{}[]\":,0123456789-.eE abcxyz";
      switch (rng() % 3) {
        case 0: text[at] = pool[rng() % (sizeof(pool) - 1)]; break;
        case 1: text.erase(at, 1 + rng() % 4); break;
        default: text.insert(at, 1, pool[rng() % (sizeof(pool) - 1)]); break;
      }
      if (text.empty()) text = "{";
    }
    try {
      Model::parse(text, "fuzz.json");
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::ParseError) << "seed " << seed << ": " << e.what();
      ASSERT_NE(std::string(e.what()).find("fuzz.json"), std::string::npos) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000u);
}

// ---------------------------------------------------------------- errors in the weights

class WeightsFileErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = std::make_unique<Model>(Model::parse(kEveryBlock, "every.json"));
    model_->set_weights(seeded_weights(*model_, 2));
    save_model(*model_, dir_.file("every.json"), TensorDType::F32);
  }
  // Rewrites the weights file from edited tensors.
  void write_weights(const std::function<void(std::vector<safetensors::Tensor>&)>& edit) {
    std::vector<safetensors::Tensor> ts;
    for (const auto& p : model_->params()) ts.push_back({p.name, TensorDType::F32, p.shape, model_->weights().at(p.name)});
    edit(ts);
    safetensors::write_file(dir_.file("every.safetensors"), ts);
  }
  std::string load_error() {
    return error_of([&] { load_model(dir_.file("every.json")); }, ErrorCode::ParseError);
  }
  TempDir dir_;
  std::unique_ptr<Model> model_;
};

TEST_F(WeightsFileErrors, MissingTensor) {
  write_weights([](auto& ts) { ts.erase(ts.begin() + 1); });  // rn.gamma
  const std::string msg = load_error();
  EXPECT_NE(msg.find("every.safetensors: missing tensor 'rn.gamma' [12] (created by blocks[1] (rms_norm 'rn'))"),
            std::string::npos)
      << msg;
}

TEST_F(WeightsFileErrors, ExtraTensor) {
  write_weights([](auto& ts) { ts.push_back({"head.weight", TensorDType::F32, {2, 2}, {1, 2, 3, 4}}); });
  const std::string msg = load_error();
  EXPECT_NE(msg.find("every.safetensors: unexpected tensor 'head.weight' [2, 2]"), std::string::npos) << msg;
}

TEST_F(WeightsFileErrors, WrongShapeNamesBothShapes) {
  write_weights([](auto& ts) {
    ts[0].shape = {12, 11};  // emb.table is [11, 12]: same size, wrong shape
  });
  const std::string msg = load_error();
  EXPECT_NE(msg.find("every.safetensors: tensor 'emb.table' has shape [12, 11], but "), std::string::npos) << msg;
  EXPECT_NE(msg.find("every.json expects [11, 12] (created by blocks[0] (embedding 'emb'))"), std::string::npos) << msg;
}

TEST_F(WeightsFileErrors, WrongDtypeAndTruncatedFile) {
  auto bytes = safetensors::read_bytes(dir_.file("every.safetensors"), 1 << 30);
  std::string s(bytes.begin(), bytes.end());
  const size_t at = s.find("\"F32\"");
  ASSERT_NE(at, std::string::npos);
  s.replace(at, 5, "\"F64\"");
  write_text(dir_.file("every.safetensors"), s);
  std::string msg = load_error();
  EXPECT_NE(msg.find("every.safetensors: tensor '"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unsupported dtype \"F64\""), std::string::npos) << msg;

  write_text(dir_.file("every.safetensors"), std::string(bytes.begin(), bytes.end() - 1));
  msg = load_error();
  EXPECT_NE(msg.find("every.safetensors"), std::string::npos) << msg;
}

TEST_F(WeightsFileErrors, MissingWeightsFileOrField) {
  std::filesystem::remove(dir_.file("every.safetensors"));
  std::string msg = load_error();
  EXPECT_NE(msg.find("every.safetensors: cannot open the file"), std::string::npos) << msg;

  write_text(dir_.file("every.json"), model_->to_json());  // no "weights" field
  msg = load_error();
  EXPECT_NE(msg.find("every.json: weights: missing; the model creates"), std::string::npos) << msg;

  msg = error_of([&] { load_model(dir_.file("nope.json")); }, ErrorCode::ParseError);
  EXPECT_NE(msg.find("nope.json: cannot open the file"), std::string::npos) << msg;
}

TEST_F(WeightsFileErrors, FromBytesNamesTheModel) {
  const std::vector<uint8_t> garbage = {1, 2, 3};
  const std::string msg =
      error_of([&] { load_model_from_bytes(model_->to_json(), garbage, "every"); }, ErrorCode::ParseError);
  EXPECT_NE(msg.find("every.safetensors: truncated"), std::string::npos) << msg;
}

}  // namespace
}  // namespace rungs
