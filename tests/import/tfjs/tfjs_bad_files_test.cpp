// SPDX-License-Identifier: Apache-2.0
// The TF.js frontend (core/import/tfjs) on small hand-written graph models: one that runs (a
// MatMul and a Relu on a [tokens, 2] input, weights from a shard) and the bad files of
// docs/errors.md (T1..T6), and a sparse batch with USE Lite's mask idiom (docs/tfjs.md, "The
// mask"). Needs no npm package.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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

// A sparse batch (indices [N, 2], values [N]) with USE Lite's idiom under other names: the mask
// SparseToDense(indices, shape, values, -1) > CMP, the positions of Where(mask), a sequence mask of
// the mask's length pooling (table[id] + position) over the tokens: mean_i (table[v_i] + i).
struct SparseModel {
  std::string json;
  std::vector<std::vector<uint8_t>> shards;
};
SparseModel sparse_model(int compared = -1) {
  using nlohmann::json;
  json nodes = json::array(), weights = json::array();
  std::vector<uint8_t> bytes;
  auto placeholder = [&](const char* name, json dims) {
    json d = json::array();
    for (int x : dims) d.push_back({{"size", std::to_string(x)}});
    nodes.push_back({{"name", name}, {"op", "Placeholder"}, {"attr", {{"dtype", {{"type", "DT_INT32"}}}, {"shape", {{"shape", {{"dim", d}}}}}}}});
  };
  auto constant = [&](const std::string& name, std::vector<int64_t> shape, std::vector<float> v, bool is_float = false) {
    nodes.push_back({{"name", name}, {"op", "Const"}, {"attr", json::object()}});
    weights.push_back({{"name", name}, {"shape", shape}, {"dtype", is_float ? "float32" : "int32"}});
    for (float x : v) {
      uint8_t b[4];
      if (is_float) std::memcpy(b, &x, 4);
      else {
        const auto i = static_cast<int32_t>(x);
        std::memcpy(b, &i, 4);
      }
      bytes.insert(bytes.end(), b, b + 4);
    }
  };
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> in, json attr = json::object()) {
    nodes.push_back({{"name", name}, {"op", op}, {"input", in}, {"attr", attr}});
  };
  const json to_float = {{"DstT", {{"type", "DT_FLOAT"}}}};
  const json to_int = {{"DstT", {{"type", "DT_INT32"}}}};
  placeholder("indices", {-1, 2});
  placeholder("values", {-1});
  constant("table", {5, 2}, {0.5f, -1, 2, 0.25f, -3, 1, 4, 4, 0, -0.5f}, true);
  constant("dflt", {}, {-1});
  constant("cmp", {}, {static_cast<float>(compared)});
  constant("zero", {}, {0});
  constant("one", {}, {1});
  constant("minus_one", {}, {-1});
  constant("axis0", {1}, {0});
  constant("axis1", {1}, {1});
  constant("ones2", {2}, {1, 1});
  constant("col_b", {2}, {0, 1});
  constant("col_e", {2}, {0, 2});
  constant("steps2", {2}, {1, 1});
  constant("b1", {1}, {1});
  constant("e2", {1}, {2});
  constant("s1", {1}, {1});
  node("last", "Max", {"indices", "axis0"});
  node("dense_shape", "Add", {"last", "ones2"});
  node("dense", "SparseToDense", {"indices", "dense_shape", "values", "dflt"});
  node("filled", "Greater", {"dense", "cmp"});
  node("where", "Where", {"filled"});
  node("position", "StridedSlice", {"where", "col_b", "col_e", "steps2"},
       {{"begin_mask", {{"i", "1"}}}, {"end_mask", {{"i", "1"}}}, {"shrink_axis_mask", {{"i", "2"}}}});
  node("position_f", "Cast", {"position"}, to_float);
  node("position_c", "ExpandDims", {"position_f", "minus_one"});
  node("emb", "GatherV2", {"table", "values", "zero"});
  node("x", "AddV2", {"emb", "position_c"});
  node("x3", "ExpandDims", {"x", "zero"});
  node("filled_i", "Cast", {"filled"}, to_int);
  node("length", "Sum", {"filled_i", "axis1"});
  node("shape", "Shape", {"filled"});
  node("count", "StridedSlice", {"shape", "b1", "e2", "s1"}, {{"shrink_axis_mask", {{"i", "1"}}}});
  node("range", "Range", {"zero", "count", "one"});
  node("length_c", "ExpandDims", {"length", "one"});
  node("seq", "Less", {"range", "length_c"});
  node("seq_f", "Cast", {"seq"}, to_float);
  node("seq3", "ExpandDims", {"seq_f", "minus_one"});
  node("masked", "Mul", {"x3", "seq3"});
  node("total", "Sum", {"masked", "axis1"});
  node("divisor", "Maximum", {"length", "one"});
  node("divisor_f", "Cast", {"divisor"}, to_float);
  node("divisor_c", "ExpandDims", {"divisor_f", "one"});
  node("mean", "RealDiv", {"total", "divisor_c"});
  const json model = {{"modelTopology", {{"node", nodes}}}, {"weightsManifest", {{{"paths", {"shard1"}}, {"weights", weights}}}}};
  return {model.dump(), {bytes}};
}

std::vector<float> sparse_want(const std::vector<int>& ids) {
  const float table[5][2] = {{0.5f, -1}, {2, 0.25f}, {-3, 1}, {4, 4}, {0, -0.5f}};
  std::vector<float> sum(2, 0.f);
  for (size_t i = 0; i < ids.size(); ++i)
    for (int c = 0; c < 2; ++c) sum[c] += table[ids[i]][c] + static_cast<float>(i);
  for (float& x : sum) x /= static_cast<float>(ids.size());
  return sum;
}

TEST(TfjsFrontend, SparseBatchMaskIsAnInputAndPaddingIsExact) {
  const SparseModel sm = sparse_model();
  const Model m = load_model_from_tfjs(sm.json, sm.shards, "sparse");
  const auto ins = m.inputs(8);
  ASSERT_EQ(ins.size(), 2u);
  EXPECT_EQ(ins[0].name, "values");
  EXPECT_EQ(ins[1].name, "mask");
  EXPECT_EQ(ins[1].shape, (Shape{8}));
  EXPECT_EQ(m.input_role(0), InputRole::Ids);
  EXPECT_EQ(m.input_role(1), InputRole::Mask);
  const std::vector<int> ids = {3, 1, 4, 1, 0};
  // Padded by hand: any ids, a mask of zeros past the tokens.
  for (const int64_t extent : {5, 8, 16}) {
    auto [module, weights] = m.build(extent);
    std::vector<float> x(static_cast<size_t>(extent), 2.f), mask(static_cast<size_t>(extent), 0.f);
    for (size_t i = 0; i < ids.size(); ++i) x[i] = static_cast<float>(ids[i]), mask[i] = 1.f;
    const auto out = testing::compile_and_run(module.lower(), Device::Reference, {{"values", x}, {"mask", mask}}, weights);
    const std::vector<float> want = sparse_want(ids);
    ASSERT_EQ(out.at(0).size(), 2u);
    for (size_t c = 0; c < 2; ++c) EXPECT_NEAR(out[0][c], want[c], 1e-5) << "extent " << extent;
  }
  // Through a pow2 ladder, padded and with active extent: every length equals its exact result.
  for (const bool active : {false, true}) {
    auto cache = BucketedCompileCache::power_of_two_ladder(Device::Cpu, 1, 16);
    cache.set_active_extent(active);
    auto build = [&](uint64_t e) { return m.build(e); };
    for (size_t n = 1; n <= 11; ++n) {
      std::vector<int> t;
      for (size_t i = 0; i < n; ++i) t.push_back(static_cast<int>((i * 3 + 1) % 5));
      const std::vector<std::vector<float>> data = {std::vector<float>(t.begin(), t.end()), std::vector<float>(n, 1.f)};
      const auto in = m.cache_inputs(data);
      const auto run = cache.run_padded_mixed(n, n, build, in, m.output_inners());
      ASSERT_TRUE(run.has_value());
      const std::vector<float> want = sparse_want(t);
      for (size_t c = 0; c < 2; ++c) EXPECT_NEAR(run->outputs.at(0)[c], want[c], 1e-5) << n << " tokens, active " << active;
    }
    const CacheStats s = cache.stats();
    if (active) {
      EXPECT_GE(s.active_runs, 9u) << "every length but 1 and 2 (buckets without padding to skip)";
      for (const BucketStats& b : s.buckets) EXPECT_TRUE(b.upper <= 2 || b.active_runs == b.runs) << b.upper << ": " << b.active_reason;
    } else {
      EXPECT_EQ(s.active_runs, 0u);
    }
  }
}

// x [N, 2] as NHWC [1, N, 1, 2], two 1x1 Conv2Ds by one kernel [1, 1, 2, 3], added; `also_read`
// makes another node read the kernel too. `data_format`: the Conv2Ds' attribute (bytes, as
// protobuf's JSON writes them: base64 "NHWC").
std::string conv_model(bool also_read, const nlohmann::json& data_format = "TkhXQw==") {
  using nlohmann::json;
  json nodes = json::array();
  nodes.push_back({{"name", "x"}, {"op", "Placeholder"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}, {"shape", {{"shape", {{"dim", {{{"size", "-1"}}, {{"size", "2"}}}}}}}}}}});
  for (const char* c : {"k", "zero", "two"}) nodes.push_back({{"name", c}, {"op", "Const"}, {"attr", json::object()}});
  auto node = [&](const std::string& name, const std::string& op, std::vector<std::string> in, json attr = json::object()) {
    nodes.push_back({{"name", name}, {"op", op}, {"input", in}, {"attr", attr}});
  };
  const json conv = {{"strides", {{"list", {{"i", {"1", "1", "1", "1"}}}}}}, {"padding", {{"s", "VkFMSUQ="}}}, {"data_format", {{"s", data_format}}}};
  node("x3", "ExpandDims", {"x", "zero"});
  node("x4", "ExpandDims", {"x3", "two"});
  node("a", "Conv2D", {"x4", "k"}, conv);
  node("b", "Conv2D", {"x4", "k"}, conv);
  node("sum", "AddV2", {"a", "b"});
  node("y", "Squeeze", {"sum"}, {{"squeeze_dims", {{"list", {{"i", {"0", "2"}}}}}}});
  if (also_read) node("k_too", "Identity", {"k"});
  const json weights = {{{"name", "k"}, {"shape", {1, 1, 2, 3}}, {"dtype", "float32"}},
                        {{"name", "zero"}, {"shape", json::array()}, {"dtype", "int32"}},
                        {{"name", "two"}, {"shape", json::array()}, {"dtype", "int32"}}};
  json model = {{"modelTopology", {{"node", nodes}}}, {"weightsManifest", {{{"paths", {"shard1"}}, {"weights", weights}}}}};
  model["signature"] = {{"outputs", {{"y", {{"name", "y:0"}}}}}};
  return model.dump();
}

TEST(TfjsFrontend, PointwiseConv2DIsAProductOfRowsByTheKernel) {
  std::vector<uint8_t> shard(8 * 4, 0);
  std::memcpy(shard.data(), kW.data(), 24);
  const int32_t two = 2;
  std::memcpy(shard.data() + 28, &two, 4);
  const std::vector<std::vector<uint8_t>> shards = {shard};
  const std::vector<float> x = {1, 2, -1, 0, 0.5f, 0.5f};  // [3, 2]
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) want.push_back(2 * (x[r * 2] * kW[c] + x[r * 2 + 1] * kW[3 + c]));
  for (const bool also_read : {false, true}) {
    const Model m = load_model_from_tfjs(conv_model(also_read), shards, "conv");
    // Read only as a kernel, the weight is declared [C, F] (the same bytes), a param of the product.
    EXPECT_EQ(m.params().at(0).name, "k");
    EXPECT_EQ(m.params().at(0).shape, also_read ? (Shape{1, 1, 2, 3}) : (Shape{2, 3}));
    auto [module, weights] = m.build(3);
    const auto out = testing::compile_and_run(module.lower(), Device::Reference, {{"x", x}}, weights);
    ASSERT_EQ(out.at(0).size(), want.size()) << also_read;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0][i], want[i], 1e-5) << also_read << " [" << i << "]";
  }
}

// A bytes attribute in every form protobuf's JSON allows: base64 with or without padding, the
// URL-safe alphabet, a list of byte values. Anything else names the attribute instead of being
// read as other text.
TEST(TfjsFrontend, BytesAttributesInEveryFormAndBadOnesNamed) {
  std::vector<uint8_t> shard(8 * 4, 0);
  const int32_t two = 2;
  std::memcpy(shard.data() + 28, &two, 4);
  const std::vector<std::vector<uint8_t>> shards = {shard};
  for (const nlohmann::json& nhwc : {nlohmann::json("TkhXQw=="), nlohmann::json("TkhXQw"), nlohmann::json({78, 72, 87, 67})}) {
    EXPECT_NO_THROW(load_model_from_tfjs(conv_model(false, nhwc), shards, "conv")) << nhwc.dump();
  }
  // "a>?" is "YT4/" in the standard alphabet and "YT4_" in the URL-safe one: both decode whole.
  for (const char* text : {"YT4/", "YT4_"}) {
    testing::expect_error([&] { load_model_from_tfjs(conv_model(false, text), shards, "conv"); }, ErrorCode::Unsupported,
                          "(Conv2D): data_format a>? is not supported (NHWC only)");
  }
  for (const nlohmann::json& bad : {nlohmann::json("TkhX*w=="), nlohmann::json("TkhXQ"), nlohmann::json("Tk=hXQw="),
                                    nlohmann::json("TkhXQw="), nlohmann::json({78, 300}), nlohmann::json(7)}) {
    testing::expect_error([&] { load_model_from_tfjs(conv_model(false, bad), shards, "conv"); }, ErrorCode::ParseError,
                          "(Conv2D): data_format " + bad.dump() + " is neither base64 text nor a list of bytes");
  }
}

TEST(TfjsFrontend, SparseBatchPastThePositionTable) {
  // The positions are the first L of 8192 (docs/tfjs.md): past them the build fails naming the node.
  const SparseModel sm = sparse_model();
  const Model m = load_model_from_tfjs(sm.json, sm.shards, "sparse");
  EXPECT_NO_THROW(m.build_module(8192));
  testing::expect_error([&] { m.build_module(8193); }, ErrorCode::ShapeMismatch,
                        "sparse/model.json (at tokens=8193): node 'x' (Add): broadcast: shapes [8193, 2] and [8192, 1]");
}

TEST(TfjsFrontend, SparseBatchWithoutTheIdiomHasNoMaskInput) {
  // Greater compares with another value than the SparseToDense default: not the mask idiom (here
  // every position compares true, ids being never negative), so no mask input is made.
  const SparseModel sm = sparse_model(-2);
  const Model m = load_model_from_tfjs(sm.json, sm.shards, "sparse");
  ASSERT_EQ(m.inputs(8).size(), 1u);
  EXPECT_EQ(m.inputs(8)[0].name, "values");
}

}  // namespace
}  // namespace rungs
