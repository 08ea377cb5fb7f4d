// SPDX-License-Identifier: Apache-2.0
// rungs/text.hpp: text to token ids, for the text models rungs runs (docs/text.md).
//
//   auto use = rungs::text::UnigramTokenizer::load("node_modules/.../vocab.json");
//   std::vector<int32_t> ids = use.encode("the fox jumped over the lazy dog");
//
//   auto bert = rungs::text::WordPieceTokenizer::load_vocab_txt("vocab.txt");
//   rungs::text::Encoding e = bert.encode_pair("A question?", "An answer.");  // [CLS] A [SEP] B [SEP]
//
// Input text is UTF-8. Invalid UTF-8 is not an error: each maximal invalid subsequence becomes one
// U+FFFD (as the WHATWG decoder, TextDecoder, does), which the unigram tokenizer maps to its
// unknown id and WordPiece's text cleaning removes. A malformed vocabulary file throws
// Error(ParseError) naming the file and the line or entry at fault.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rungs::text {

// The Unicode version of the tables rungs::text normalises, lower-cases and classifies with.
std::string_view unicode_version();

// SentencePiece-style unigram segmentation, exactly as the tokenizer of Universal Sentence
// Encoder Lite in @energetic-ai/embeddings (and tfjs-models' universal-sentence-encoder) does it:
// NFKC, a U+2581 word-start marker before the text and for every space, then the best-score
// (Viterbi) segmentation over the pieces, consecutive unknown characters merged into one id 0.
class UnigramTokenizer {
 public:
  // The reference skips the first `reserved` entries (<unk>, <s>, </s>, ...) when matching.
  static constexpr int kDefaultReserved = 6;

  // A vocab.json: a JSON array of [piece, score] pairs, the id being the position. A null score
  // counts as 0 (as JavaScript's null + number does; the USE Lite vocabulary has seven). Entry 0
  // is the unknown piece. Throws Error(ParseError) naming `source` and the entry at fault.
  static UnigramTokenizer parse_vocab_json(std::string_view json_text,
                                           std::string_view source = "vocab.json",
                                           int reserved = kDefaultReserved);
  // Reads the file (Error(InvalidArgument) if it cannot be read), then as parse_vocab_json.
  static UnigramTokenizer load(const std::string& path, int reserved = kDefaultReserved);

  std::vector<int32_t> encode(std::string_view text) const;

  size_t vocab_size() const;
  const std::string& piece(int32_t id) const;  // Error(OutOfRange) outside [0, vocab_size)

 private:
  struct Impl;
  explicit UnigramTokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;  // immutable: copies share it, encode is thread-safe
};

// BERT's basic tokenizer and WordPiece, as in HuggingFace's tokenizers (BertNormalizer,
// BertPreTokenizer, WordPiece, BERT post-processing).
struct WordPieceOptions {
  bool clean_text = true;            // drop NUL, U+FFFD and control / unassigned characters, whitespace to ' '
  bool handle_chinese_chars = true;  // every CJK ideograph is a word of its own
  bool lowercase = true;
  std::optional<bool> strip_accents;  // NFD, then drop nonspacing marks; unset: as `lowercase`
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;  // longer words become unk_token
};

// One encoded text or pair: ids, the pieces they stand for, segment ids (0 for the first text
// with its [CLS] and [SEP], 1 for the second with its [SEP]) and an attention mask of ones.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<int32_t> token_type_ids;
  std::vector<int32_t> attention_mask;
};

class WordPieceTokenizer {
 public:
  // A vocab.txt: one token a line, the id being the line's index (from 0); trailing whitespace
  // (and a '\r') of a line is dropped. The tokens named in `options` must be in it. Empty lines
  // and repeated tokens are errors naming `source` and the line.
  static WordPieceTokenizer parse_vocab_txt(std::string_view text, const WordPieceOptions& options = {},
                                            std::string_view source = "vocab.txt");
  static WordPieceTokenizer load_vocab_txt(const std::string& path, const WordPieceOptions& options = {});
  // A HuggingFace tokenizer.json with a BertNormalizer (or none), a BertPreTokenizer, a WordPiece
  // model and a BertProcessing or BERT-shaped TemplateProcessing post-processor (or none); the
  // options come from it. Anything else is Error(Unsupported) naming the field.
  static WordPieceTokenizer parse_tokenizer_json(std::string_view json_text,
                                                 std::string_view source = "tokenizer.json");
  static WordPieceTokenizer load_tokenizer_json(const std::string& path);

  // The word pieces of `text`, without special tokens.
  std::vector<std::string> tokenize(std::string_view text) const;
  // [CLS] text [SEP] (add_special_tokens) or the bare pieces.
  Encoding encode(std::string_view text, bool add_special_tokens = true) const;
  // [CLS] text [SEP] pair [SEP] (add_special_tokens) or the bare pieces of both; the pair's tokens
  // are segment 1 (unless a tokenizer.json has no post-processor). A name of its own: an overload
  // of encode would take encode("a", "b") as encode("a", true).
  Encoding encode_pair(std::string_view text, std::string_view pair, bool add_special_tokens = true) const;

  size_t vocab_size() const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  const std::string& id_to_token(int32_t id) const;  // Error(OutOfRange) outside [0, vocab_size)
  const WordPieceOptions& options() const;

 private:
  struct Impl;
  explicit WordPieceTokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace rungs::text
