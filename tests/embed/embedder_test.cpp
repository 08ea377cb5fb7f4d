// SPDX-License-Identifier: Apache-2.0
// TextEmbedder on tiny text models built here: ids -> embedding table -> mean_pool, with and
// without a padding mask. The mean of the table rows of a text's ids is the exact embedding;
// padding the unmasked model with id 0 changes it, so the tests see which path ran.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "rungs/rungs.hpp"
#include "test_util.hpp"

namespace rungs {
namespace {

constexpr int kVocab = 8;
constexpr int kDim = 4;

Model text_model(bool with_mask) {
  const std::string mask_input = with_mask ? R"(, {"name": "keep", "shape": [1, "seq"]})" : "";
  const std::string mask_field = with_mask ? R"(, "mask": "keep")" : "";
  Model m = Model::parse(R"({"format": "rungs-model", "version": 1, "name": "tiny_text", "bucket_dim": "seq",
    "inputs": [{"name": "ids", "shape": [1, "seq"]})" +
                             mask_input + R"(],
    "blocks": [{"op": "embedding", "name": "tok", "input": "ids", "vocab": 8, "dim": 4, "out": "h"},
               {"op": "mean_pool", "input": "h")" +
                             mask_field + R"(, "out": "pooled"}],
    "outputs": [{"name": "embedding", "value": "pooled"}]})",
                         "tiny_text.json");
  std::vector<float> table(kVocab * kDim);
  for (int id = 0; id < kVocab; ++id)
    for (int j = 0; j < kDim; ++j) table[id * kDim + j] = static_cast<float>(id) + 0.25f * static_cast<float>(j);
  m.set_weights({{"tok.table", table}});
  return m;
}

// 'a'..'g' are ids 1..7, anything else is skipped: "abc" has 3 tokens, " " none.
std::vector<int32_t> letters(std::string_view text) {
  std::vector<int32_t> ids;
  for (char c : text)
    if (c >= 'a' && c <= 'g') ids.push_back(c - 'a' + 1);
  return ids;
}

// The exact embedding: the mean of the table rows of the text's ids.
std::vector<float> expected(std::string_view text) {
  const std::vector<int32_t> ids = letters(text);
  std::vector<float> out(kDim, 0.0f);
  for (int32_t id : ids)
    for (int j = 0; j < kDim; ++j) out[j] += static_cast<float>(id) + 0.25f * static_cast<float>(j);
  for (float& v : out) v /= static_cast<float>(ids.size());
  return out;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << what << " [" << i << "]";
}

TEST(TextEmbedder, MaskedModelRunsPaddedTextsExactly) {
  TextEmbedderOptions o;
  o.active_extent = false;
  TextEmbedder e(text_model(true), letters, o);
  EXPECT_TRUE(e.has_mask());
  EXPECT_EQ(e.width(), size_t{kDim});
  const std::vector<std::string> texts = {"a", "abc", "gfedc", "ab"};
  const auto out = e.embed(texts);
  ASSERT_EQ(out.size(), texts.size());
  const std::vector<uint64_t> buckets = {1, 4, 8, 2};  // power_of_two(1, 128): 1, 2, 4, 8, ...
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(out[i].tokens, letters(texts[i]).size());
    EXPECT_EQ(out[i].bucket, buckets[i]) << texts[i];
    EXPECT_EQ(out[i].mode, EmbedMode::Padded) << texts[i];
    expect_near_all(out[i].vector, expected(texts[i]), texts[i]);
  }
  EXPECT_FALSE(e.used_exact_fallback());
  EXPECT_EQ(e.stats().padded_runs, 4u);
  EXPECT_EQ(e.exact_stats().runs, 0u);
}

TEST(TextEmbedder, UnmaskedModelRunsTextsTheCacheWouldPadAtTheirLength) {
  TextEmbedderOptions o;
  o.active_extent = false;
  TextEmbedder e(text_model(false), letters, o);
  EXPECT_FALSE(e.has_mask());
  std::vector<std::string> messages;
  e.on_exact_fallback([&](const std::string& m) { messages.push_back(m); });
  const std::vector<std::string> texts = {"ab", "abc", "gfedc", "a", "bcd"};
  const auto out = e.embed(texts);
  const std::vector<EmbedMode> modes = {EmbedMode::Padded, EmbedMode::Exact, EmbedMode::Exact, EmbedMode::Padded,
                                        EmbedMode::Exact};
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(out[i].mode, modes[i]) << texts[i];
    EXPECT_EQ(out[i].bucket, out[i].tokens) << texts[i];  // every run at the text's own length
    expect_near_all(out[i].vector, expected(texts[i]), texts[i]);
  }
  ASSERT_EQ(messages.size(), 1u);  // once, however many texts fall back
  EXPECT_NE(messages[0].find("no padding mask"), std::string::npos) << messages[0];
  EXPECT_TRUE(e.used_exact_fallback());
  EXPECT_EQ(e.exact_stats().runs, 3u);
  EXPECT_EQ(e.exact_stats().compiles, 2u);  // lengths 3 and 5

  // What the fallback avoids: the same text padded to its bucket gives another embedding.
  const Model m = text_model(false);
  BucketedCompileCache padded(Device::Cpu, ladder::power_of_two(1, 128));
  const std::vector<std::vector<float>> data = {{1, 2, 3}};
  const auto in = m.cache_inputs(data);
  const auto run = padded.run_padded_mixed(
      3, 3, [&](uint64_t u) { return m.build(u); }, in, m.output_inners());
  ASSERT_TRUE(run);
  EXPECT_GT(std::abs(run->outputs[0][0] - expected("abc")[0]), 0.1f);
}

TEST(TextEmbedder, ActiveExtentIsExactForBothModels) {
  for (bool mask : {true, false}) {
    TextEmbedder e(text_model(mask), letters);  // active extent on by default
    const std::vector<std::string> texts = {"abc", "gfedc", "ab"};
    const auto out = e.embed(texts);
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_NE(out[i].mode, EmbedMode::Padded) << texts[i] << " mask " << mask;
      expect_near_all(out[i].vector, expected(texts[i]), texts[i]);
    }
  }
}

TEST(TextEmbedder, TokenCountsAndDefaults) {
  TextEmbedder e(text_model(true), letters);
  const std::vector<std::string> texts = {"abc", "a b", "xyz"};
  EXPECT_EQ(e.token_counts(texts), (std::vector<size_t>{3, 2, 0}));
  EXPECT_EQ(std::vector<Range>(e.buckets().begin(), e.buckets().end()), ladder::power_of_two(1, 128));
  EXPECT_EQ(e.stats().runs, 0u);  // counting tokens runs nothing
  EXPECT_EQ(to_string(EmbedMode::Padded), "padded");
  EXPECT_EQ(to_string(EmbedMode::Active), "active");
  EXPECT_EQ(to_string(EmbedMode::Exact), "exact");
}

TEST(TextEmbedder, UnigramTokenizer) {
  // A three-piece vocabulary (ids 6.. are matched; 0..5 are reserved): "▁ab" then "c".
  const auto tok = text::UnigramTokenizer::parse_vocab_json(
      R"([["<unk>",0],["<s>",0],["</s>",0],["r3",0],["r4",0],["r5",0],["▁ab",-1],["c",-1],["▁",-5]])");
  TextEmbedder e(text_model(true), tok);
  const auto out = e.embed({"abc"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tokens, tok.encode("abc").size());
  EXPECT_EQ(out[0].tokens, 2u);
  // ids 6 and 7: the mean of those rows.
  for (int j = 0; j < kDim; ++j) EXPECT_NEAR(out[0].vector[j], 6.5f + 0.25f * j, 1e-5);
}

TEST(TextEmbedder, ErrorsNameTheTextAndLeaveTheEmbedderUsable) {
  TextEmbedderOptions o;
  o.ladder = ladder::power_of_two(1, 4);
  TextEmbedder e(text_model(true), letters, o);
  const std::vector<std::string> empty = {"abc", "  xyz "};
  testing::expect_error([&] { e.embed(empty); }, ErrorCode::InvalidArgument, "text 2 ('  xyz ') has no tokens");
  const std::vector<std::string> long_text = {"abcdefg"};
  testing::expect_error([&] { e.embed(long_text); }, ErrorCode::OutOfRange, "text 1 ('abcdefg') has 7 tokens, past the ladder's last bucket (4 tokens)");
  EXPECT_EQ(e.stats().runs, 0u);  // texts are checked before anything runs
  const auto out = e.embed({"abcd"});
  expect_near_all(out.at(0).vector, expected("abcd"), "after the errors");

  // A ladder that does not start at 1 leaves short texts in no bucket.
  TextEmbedderOptions gap;
  gap.ladder = {{3, 9}};
  TextEmbedder g(text_model(true), letters, gap);
  testing::expect_error([&] { g.embed({"ab"}); }, ErrorCode::OutOfRange, "has 2 tokens, in no bucket of the ladder");
  TextEmbedderOptions bad;
  bad.ladder = {{4, 2}};
  EXPECT_THROW(TextEmbedder(text_model(true), letters, bad), Error);
}

TEST(TextEmbedder, RefusesModelsThatAreNotTextModels) {
  // A plain values input.
  Model values = Model::parse(R"({"format": "rungs-model", "version": 1, "name": "values", "bucket_dim": "seq",
    "inputs": [{"name": "x", "shape": [1, "seq", 4]}],
    "blocks": [{"op": "mean_pool", "input": "x", "out": "pooled"}],
    "outputs": [{"name": "y", "value": "pooled"}]})");
  testing::expect_error([&] { (void)TextEmbedder(values, letters); }, ErrorCode::Unsupported, "its inputs: 'x' (values)");
  // Two inputs of ids.
  Model two = Model::parse(R"({"format": "rungs-model", "version": 1, "name": "two", "bucket_dim": "seq",
    "inputs": [{"name": "a", "shape": [1, "seq"]}, {"name": "b", "shape": [1, "seq"]}],
    "blocks": [{"op": "embedding", "name": "ta", "input": "a", "vocab": 8, "dim": 4, "out": "ha"},
               {"op": "embedding", "name": "tb", "input": "b", "vocab": 8, "dim": 4, "out": "hb"},
               {"op": "add", "inputs": ["ha", "hb"], "out": "h"},
               {"op": "mean_pool", "input": "h", "out": "pooled"}],
    "outputs": [{"name": "y", "value": "pooled"}]})");
  testing::expect_error([&] { (void)TextEmbedder(two, letters); }, ErrorCode::Unsupported, "'a' (ids), 'b' (ids)");
  testing::expect_error([&] { (void)TextEmbedder(text_model(true), TextEmbedder::Tokenize{}); }, ErrorCode::InvalidArgument,
                        "no tokenizer");
}

}  // namespace
}  // namespace rungs
