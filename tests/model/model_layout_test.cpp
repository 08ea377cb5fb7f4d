// SPDX-License-Identifier: Apache-2.0
// Model::input_layouts / output_layouts (how each input and output lies along the bucket dim),
// input roles, cache_inputs / output_inners (what BucketedCompileCache::run_padded_mixed takes), and
// synthetic_inputs: the same bytes on every platform, pinned by a digest (this suite also runs in
// the wasm build).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

// ids [1, seq] -> embedding, plus a static bias [4], mean-pooled with mask [1, seq]; "grid"
// [2, seq] follows the bucket dim after a non-1 axis (it cannot be padded by rows).
const char* kModel = R"({"format": "rungs-model", "version": 1, "name": "layout", "bucket_dim": "seq",
  "inputs": [{"name": "ids", "shape": [1, "seq"]}, {"name": "mask", "shape": [1, "seq"]},
             {"name": "bias", "shape": [4]}, {"name": "grid", "shape": [2, "seq"]}],
  "blocks": [{"op": "embedding", "name": "tok", "input": "ids", "vocab": 7, "dim": 4, "out": "h"},
             {"op": "add", "inputs": ["h", "bias"], "out": "hb"},
             {"op": "mean_pool", "input": "hb", "mask": "mask", "out": "pooled"}],
  "outputs": [{"name": "tokens", "value": "hb"}, {"name": "pooled", "value": "pooled"},
              {"name": "grid_out", "value": "grid"}]})";

TEST(ModelLayout, InputsAndOutputsAlongTheBucketDim) {
  const Model m = Model::parse(kModel, "layout.json");
  const std::vector<BucketLayout> in = m.input_layouts(5);
  ASSERT_EQ(in.size(), 4u);
  EXPECT_EQ(in[0].name, "ids");
  EXPECT_EQ(in[0].shape, (Shape{1, 5}));
  EXPECT_TRUE(in[0].follows_bucket);
  EXPECT_EQ(in[0].row_values, std::optional<size_t>(1));
  EXPECT_EQ(in[1].row_values, std::optional<size_t>(1));
  EXPECT_FALSE(in[2].follows_bucket);
  EXPECT_EQ(in[2].row_values, std::nullopt);
  EXPECT_EQ(in[2].shape, (Shape{4}));
  EXPECT_TRUE(in[3].follows_bucket);  // [2, seq]: grows, but not as rows
  EXPECT_EQ(in[3].row_values, std::nullopt);
  EXPECT_EQ(in[3].shape, (Shape{2, 5}));

  const std::vector<BucketLayout> out = m.output_layouts(9);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "tokens");
  EXPECT_EQ(out[0].shape, (Shape{1, 9, 4}));
  EXPECT_EQ(out[0].row_values, std::optional<size_t>(4));
  EXPECT_FALSE(out[1].follows_bucket);  // pooled [1, 4]
  EXPECT_EQ(out[1].shape, (Shape{1, 4}));
  EXPECT_EQ(out[2].shape, (Shape{2, 9}));
  EXPECT_EQ(out[2].row_values, std::nullopt);
  // The shapes are the built module's, at any extent.
  const Graph g = m.build_module(9).lower();
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].shape, g.outputs()[i].second) << out[i].name;
  EXPECT_EQ(m.output_inners(), (std::vector<size_t>{4, 0, 0}));
}

TEST(ModelLayout, RolesComeFromTheBlocksNotTheNames) {
  const Model m = Model::parse(kModel, "layout.json");
  EXPECT_EQ(m.input_role(0), InputRole::Ids);
  EXPECT_EQ(m.input_vocab(0), 7u);
  EXPECT_EQ(m.input_role(1), InputRole::Mask);
  EXPECT_EQ(m.input_role(2), InputRole::Values);
  EXPECT_EQ(m.input_role(3), InputRole::Values);
  // Renamed inputs keep their roles.
  std::string renamed = kModel;
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"ids\"", "\"tokens_in\""},
                          {"{\"name\": \"mask\"", "{\"name\": \"keep\""},
                          {"\"mask\": \"mask\"", "\"mask\": \"keep\""}}) {
    for (size_t at = renamed.find(from); at != std::string::npos; at = renamed.find(from, at + to.size()))
      renamed.replace(at, from.size(), to);
  }
  const Model r = Model::parse(renamed, "renamed.json");
  EXPECT_EQ(r.input_layouts(3)[0].name, "tokens_in");
  EXPECT_EQ(r.input_role(0), InputRole::Ids);
  EXPECT_EQ(r.input_role(1), InputRole::Mask);
}

TEST(ModelLayout, CacheInputsFollowTheLayout) {
  const Model m = Model::parse(kModel, "layout.json");
  const std::vector<std::vector<float>> data = {{1, 2, 3}, {1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}};
  // grid follows the bucket dim after a non-1 axis: refused by name.
  testing::expect_error([&] { m.cache_inputs(data); }, ErrorCode::Unsupported, "input 'grid' [2, 2] follows");
  testing::expect_error([&] { m.cache_inputs(std::span(data).first(2)); }, ErrorCode::InvalidArgument,
                        "2 input vectors given, the model has 4");

  const Model ok = Model::parse(R"({"format": "rungs-model", "version": 1, "name": "ok", "bucket_dim": "seq",
    "inputs": [{"name": "x", "shape": [1, "seq", 3]}, {"name": "b", "shape": [3]}],
    "blocks": [{"op": "add", "inputs": ["x", "b"], "out": "y"}], "outputs": [{"name": "y"}]})",
                                "ok.json");
  const std::vector<std::vector<float>> d = {std::vector<float>(6, 1.f), std::vector<float>(3, 2.f)};
  const std::vector<CacheRunInput> in = ok.cache_inputs(d);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].name, "x");
  EXPECT_EQ(in[0].row_inner, std::optional<size_t>(3));
  EXPECT_EQ(in[0].data.f32().data(), d[0].data());
  EXPECT_EQ(in[1].name, "b");
  EXPECT_EQ(in[1].row_inner, std::nullopt);

  // What the cache does with them: 2 real rows padded to the bucket of 4, the output sliced back.
  auto cache = BucketedCompileCache(Device::Reference, {Range{1, 5}});  // one bucket, upper 4
  const std::vector<size_t> inners = ok.output_inners();
  auto run = cache.run_padded_mixed(2, 2, [&](uint64_t upper) { return ok.build(upper); }, in, inners);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->upper, 4u);
  EXPECT_EQ(run->outputs[0], std::vector<float>(6, 3.f));
}

uint64_t fnv1a(const std::vector<std::vector<float>>& vs) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto& v : vs) {
    std::vector<unsigned char> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  }
  return h;
}

TEST(ModelLayout, SyntheticInputsAreTheSameBytesEverywhere) {
  const Model m = Model::parse(kModel, "layout.json");
  const auto a = m.synthetic_inputs(5, 1);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].size(), 5u);
  EXPECT_EQ(a[2].size(), 4u);
  EXPECT_EQ(a[3].size(), 10u);
  for (float id : a[0]) EXPECT_TRUE(id >= 0 && id < 7 && id == static_cast<float>(static_cast<int>(id))) << id;
  for (float k : a[1]) EXPECT_EQ(k, 1.f);
  for (float v : a[2]) EXPECT_TRUE(v >= -1.f && v <= 1.f) << v;
  EXPECT_NE(fnv1a(a), fnv1a(m.synthetic_inputs(5, 2)));  // the seed matters
  EXPECT_EQ(fnv1a(a), fnv1a(m.synthetic_inputs(5, 1)));
  // The pinned digest: the same on every platform and compiler (native g++, clang, wasm).
  EXPECT_EQ(fnv1a(a), 0x544ec3bea855fbf6ull) << std::hex << fnv1a(a);
}

}  // namespace
}  // namespace rungs
