// SPDX-License-Identifier: Apache-2.0
// rungs::text::WordPieceTokenizer against tokenizers.js (@huggingface/tokenizers): the ids and
// segment ids of tests/text/wordpiece_reference.jsonl (tests/text/reference/
// wordpiece_reference.mjs; ctest's text_wordpiece_reference checks it is current), for the small
// hand-written tests/text/wordpiece/vocab.txt under three normaliser settings, loaded both from
// vocab.txt with options and from the settings' tokenizer.json. Also the errors.
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rungs/error.hpp"
#include "rungs/text.hpp"

namespace rungs::text {
namespace {

const std::string kDir = RUNGS_TEXT_DIR "/wordpiece/";

WordPieceOptions options_of(const std::string& config) {
  WordPieceOptions o;
  o.lowercase = config != "cased";
  if (config == "uncased_accents") o.strip_accents = false;
  return o;
}

TEST(TextWordPiece, IdsEqualTokenizersJs) {
  std::map<std::string, std::vector<WordPieceTokenizer>> tokenizers;
  for (std::string config : {"uncased", "cased", "uncased_accents"}) {
    tokenizers[config].push_back(WordPieceTokenizer::load_vocab_txt(kDir + "vocab.txt", options_of(config)));
    tokenizers[config].push_back(WordPieceTokenizer::load_tokenizer_json(kDir + config + ".tokenizer.json"));
  }
  std::ifstream in(RUNGS_TEXT_DIR "/wordpiece_reference.jsonl");
  ASSERT_TRUE(in);
  std::string line;
  size_t cases = 0, pairs = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    auto text = j.at("text").get<std::string>();
    auto want_ids = j.at("ids").get<std::vector<int32_t>>();
    auto want_types = j.at("type_ids").get<std::vector<int32_t>>();
    for (const WordPieceTokenizer& tok : tokenizers.at(j.at("config").get<std::string>())) {
      Encoding e = j.contains("pair") ? tok.encode_pair(text, j.at("pair").get<std::string>()) : tok.encode(text);
      EXPECT_EQ(e.ids, want_ids) << j.at("config") << " text: \"" << text << "\"" << (j.contains("pair") ? " + pair" : "");
      EXPECT_EQ(e.token_type_ids, want_types) << "text: \"" << text << "\"";
      EXPECT_EQ(e.attention_mask, std::vector<int32_t>(want_ids.size(), 1));
      ASSERT_EQ(e.tokens.size(), e.ids.size());
      for (size_t i = 0; i < e.ids.size(); ++i) EXPECT_EQ(tok.id_to_token(e.ids[i]), e.tokens[i]);
    }
    ++cases, pairs += j.contains("pair") ? 1 : 0;
  }
  EXPECT_GE(cases, 500u);
  EXPECT_GE(pairs, 100u);
}

WordPieceTokenizer small(WordPieceOptions o = {}) {
  return WordPieceTokenizer::parse_vocab_txt("[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\n,\nhello\n\xE4\xB8\xAD\n", o);
}

TEST(TextWordPiece, BasicTokenizationAndGreedyLongestMatch) {
  auto tok = small();
  EXPECT_EQ(tok.tokenize("UnAffable, hello"), (std::vector<std::string>{"un", "##aff", "##able", ",", "hello"}));
  EXPECT_EQ(tok.tokenize("unaffablex"), (std::vector<std::string>{"[UNK]"}));    // not coverable: one [UNK]
  EXPECT_EQ(tok.tokenize("h\xC3\xA9llo"), (std::vector<std::string>{"hello"}));  // accent stripped
  EXPECT_EQ(tok.tokenize("hello\xE4\xB8\xADhello"), (std::vector<std::string>{"hello", "\xE4\xB8\xAD", "hello"}));
  // CJK outside the BMP is split too (tokenizers.js does not: it walks UTF-16 units).
  EXPECT_EQ(tok.tokenize("hello\xF0\xA0\x80\x80hello"), (std::vector<std::string>{"hello", "[UNK]", "hello"}));
  // Unassigned code points are dropped (tokenizers.js keeps them).
  EXPECT_EQ(tok.tokenize("hel\xCD\xB8lo"), (std::vector<std::string>{"hello"}));
  // Invalid UTF-8 becomes U+FFFD, which text cleaning removes.
  EXPECT_EQ(tok.tokenize("hel\xFFlo"), (std::vector<std::string>{"hello"}));
  WordPieceOptions o;
  o.max_input_chars_per_word = 4;
  EXPECT_EQ(small(o).tokenize("hello un"), (std::vector<std::string>{"[UNK]", "un"}));
}

TEST(TextWordPiece, SpecialTokensAndPairs) {
  auto tok = small();
  Encoding e = tok.encode_pair("hello", "un, hello");
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"[CLS]", "hello", "[SEP]", "un", ",", "hello", "[SEP]"}));
  EXPECT_EQ(e.ids, (std::vector<int32_t>{2, 8, 3, 4, 7, 8, 3}));
  EXPECT_EQ(e.token_type_ids, (std::vector<int32_t>{0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(e.attention_mask, std::vector<int32_t>(7, 1));
  Encoding bare = tok.encode("hello", false);
  EXPECT_EQ(bare.ids, (std::vector<int32_t>{8}));
  Encoding bare_pair = tok.encode_pair("hello", "un", false);
  EXPECT_EQ(bare_pair.ids, (std::vector<int32_t>{8, 4}));
  EXPECT_EQ(bare_pair.token_type_ids, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(tok.token_to_id("##aff"), 5);
  EXPECT_EQ(tok.token_to_id("nope"), std::nullopt);
  EXPECT_THROW(tok.id_to_token(10), Error);
}

std::string error_of(const std::function<void()>& f, ErrorCode want = ErrorCode::ParseError) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(TextWordPiece, MalformedVocabularies) {
  EXPECT_EQ(error_of([] { WordPieceTokenizer::parse_vocab_txt("[UNK]\n\n[CLS]\n", {}, "v.txt"); }),
            "v.txt:2: empty line (a vocab.txt has one token a line)");
  EXPECT_EQ(error_of([] { WordPieceTokenizer::parse_vocab_txt("[UNK]\n[CLS]\n[SEP]\na\nb\na\n", {}, "v.txt"); }),
            "v.txt:6: 'a' is already on line 4");
  EXPECT_EQ(error_of([] { WordPieceTokenizer::parse_vocab_txt("[UNK]\n[CLS]\n\xFF\n", {}, "v.txt"); }),
            "v.txt:3: the token is not valid UTF-8");
  EXPECT_EQ(error_of([] { WordPieceTokenizer::parse_vocab_txt("[CLS]\n[SEP]\n", {}, "v.txt"); }),
            "v.txt: the unknown token '[UNK]' is not in the vocabulary");
  EXPECT_EQ(error_of([] { WordPieceTokenizer::parse_vocab_txt("[UNK]\n[SEP]\n", {}, "v.txt"); }),
            "v.txt: the classifier token '[CLS]' is not in the vocabulary");
  EXPECT_EQ(error_of([] { WordPieceTokenizer::parse_vocab_txt("", {}, "v.txt"); }), "v.txt: the vocabulary is empty");
  EXPECT_EQ(error_of([] { WordPieceTokenizer::load_vocab_txt("/nonexistent/vocab.txt"); }, ErrorCode::InvalidArgument),
            "vocab.txt: cannot open '/nonexistent/vocab.txt'");
  // Windows line ends and a missing final newline are fine.
  EXPECT_EQ(WordPieceTokenizer::parse_vocab_txt("[UNK]\r\n[CLS]\r\n[SEP]").vocab_size(), 3u);
}

TEST(TextWordPiece, MalformedOrUnsupportedTokenizerJson) {
  auto parse = [](const std::string& json) { WordPieceTokenizer::parse_tokenizer_json(json, "t.json"); };
  const std::string model = R"("model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1}})";
  const std::string pre = R"("pre_tokenizer": {"type": "BertPreTokenizer"})";
  EXPECT_NE(error_of([&] { parse("{"); }).find("t.json: invalid JSON"), std::string::npos);
  EXPECT_EQ(error_of([&] { parse("{}"); }), "t.json: missing \"model\"");
  EXPECT_EQ(error_of([&] { parse(R"({"model": {"type": "BPE"}})"); }, ErrorCode::Unsupported),
            "t.json: model.type is 'BPE'; only WordPiece is supported");
  EXPECT_EQ(error_of([&] { parse(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 0}}, )" + pre + "}"); }),
            "t.json: model.vocab[\"a\"]: id 0 is also given to '[UNK]'");
  EXPECT_EQ(error_of([&] { parse(R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 7}}, )" + pre + "}"); }),
            "t.json: model.vocab[\"a\"]: expected an id in [0, 2), got 7");
  EXPECT_EQ(error_of([&] { parse("{" + model + R"(, "pre_tokenizer": {"type": "Whitespace"}})"); }, ErrorCode::Unsupported),
            "t.json: pre_tokenizer.type is 'Whitespace'; only BertPreTokenizer is supported");
  EXPECT_EQ(error_of([&] { parse("{" + model + "," + pre + R"(, "normalizer": {"type": "NFC"}})"); }, ErrorCode::Unsupported),
            "t.json: normalizer.type is 'NFC'; only BertNormalizer is supported");
  EXPECT_EQ(error_of([&] { parse("{" + model + "," + pre + R"(, "post_processor": {"type": "RobertaProcessing"}})"); },
                     ErrorCode::Unsupported),
            "t.json: post_processor.type is 'RobertaProcessing'; only BertProcessing and BERT's TemplateProcessing are supported");
  // No post-processor: no special tokens are needed, and none are added.
  auto tok = WordPieceTokenizer::parse_tokenizer_json("{" + model + "," + pre + "}", "t.json");
  EXPECT_EQ(tok.encode("A a").ids, (std::vector<int32_t>{0, 1}));  // no normalizer: 'A' is unknown
}

}  // namespace
}  // namespace rungs::text
