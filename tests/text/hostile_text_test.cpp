// SPDX-License-Identifier: Apache-2.0
// Random bytes as text, and mutated vocabulary files: the tokenizers return ids or throw
// rungs::Error, never crash (run under ASan/UBSan by the sanitizer preset).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rungs/error.hpp"
#include "rungs/text.hpp"

namespace rungs::text {
namespace {

std::string random_bytes(std::mt19937& rng, size_t max_length) {
  std::uniform_int_distribution<size_t> length(0, max_length);
  std::uniform_int_distribution<int> byte(0, 255);
  std::string s(length(rng), '\0');
  for (char& c : s) c = static_cast<char>(byte(rng));
  return s;
}

TEST(TextHostile, RandomBytesAsTextNeverCrash) {
  auto unigram = UnigramTokenizer::parse_vocab_json(
      R"([["\uFFFD", 0], ["\u2581a", -1], ["b", -2], ["\u2581", -3], ["\u00e9", -1], ["\u4e2d\u6587", -2]])", "v.json", 1);
  auto bert = WordPieceTokenizer::parse_vocab_txt("[UNK]\n[CLS]\n[SEP]\na\n##b\n\xC3\xA9\n\xE4\xB8\xAD\n");
  std::mt19937 rng(7);
  size_t ids = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = random_bytes(rng, 64);
    ids += unigram.encode(text).size();
    Encoding e = bert.encode_pair(text, text);
    EXPECT_EQ(e.ids.size(), e.tokens.size());
  }
  EXPECT_GT(ids, 3000u);
}

TEST(TextHostile, MutatedVocabulariesParseOrThrowRungsError) {
  const std::string json = R"([["<unk>", 0], ["\u2581the", -1.5], ["s", null], [":30", 30]])";
  const std::string txt = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n##s\n";
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  size_t parsed = 0, refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string j = json, t = txt;
    for (std::string* s : {&j, &t}) {
      for (int k = 0; k < 3; ++k) (*s)[std::uniform_int_distribution<size_t>(0, s->size() - 1)(rng)] = static_cast<char>(byte(rng));
    }
    try {
      UnigramTokenizer::parse_vocab_json(j, "m.json").encode("the cats");
      ++parsed;
    } catch (const Error&) {
      ++refused;
    }
    try {
      WordPieceTokenizer::parse_vocab_txt(t, {}, "m.txt").encode("the cats");
      ++parsed;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(parsed, 0u);
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace rungs::text
