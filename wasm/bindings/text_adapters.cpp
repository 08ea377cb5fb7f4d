// SPDX-License-Identifier: Apache-2.0
// wasm/bindings/text_adapters.cpp: the tokenizers (rungs/text.hpp) for JavaScript. Text crosses as
// a JS string (Embind encodes it as UTF-8); ids come back as Int32Array.
#include <string>
#include <vector>

#include "adapters.hpp"

namespace rungs::wasm {
namespace {

val from_ids(const std::vector<int32_t>& ids) {
  val out = val::global("Int32Array").new_(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out.set(i, ids[i]);
  return out;
}

val from_encoding(const text::Encoding& e) {
  val out = val::object();
  out.set("ids", from_ids(e.ids));
  out.set("tokens", from_strings(e.tokens));
  out.set("tokenTypeIds", from_ids(e.token_type_ids));
  out.set("attentionMask", from_ids(e.attention_mask));
  return out;
}

text::WordPieceOptions to_wordpiece_options(const val& v, const std::string& what) {
  text::WordPieceOptions o;
  if (is_nullish(v)) return o;
  if (v.typeOf().as<std::string>() != "object") fail(ErrorCode::InvalidArgument, what + ": expected an object");
  auto flag = [&](const char* key, bool& field) {
    val x = v[key];
    if (x.isUndefined()) return;
    if (x.typeOf().as<std::string>() != "boolean") fail(ErrorCode::InvalidArgument, what + "." + key + ": expected a boolean");
    field = x.as<bool>();
  };
  auto string = [&](const char* key, std::string& field) {
    val x = v[key];
    if (x.isUndefined()) return;
    if (!x.isString()) fail(ErrorCode::InvalidArgument, what + "." + key + ": expected a string");
    field = x.as<std::string>();
  };
  flag("cleanText", o.clean_text);
  flag("handleChineseChars", o.handle_chinese_chars);
  flag("lowercase", o.lowercase);
  if (val s = v["stripAccents"]; !is_nullish(s)) {
    bool strip = false;
    flag("stripAccents", strip);
    o.strip_accents = strip;
  }
  string("unkToken", o.unk_token);
  string("clsToken", o.cls_token);
  string("sepToken", o.sep_token);
  string("continuingSubwordPrefix", o.continuing_subword_prefix);
  if (val m = v["maxInputCharsPerWord"]; !m.isUndefined()) {
    o.max_input_chars_per_word = static_cast<size_t>(to_u64(m, what + ".maxInputCharsPerWord"));
  }
  return o;
}

}  // namespace

text::UnigramTokenizer* unigram_parse(const std::string& json, const std::string& source) {
  return guarded([&] { return new text::UnigramTokenizer(text::UnigramTokenizer::parse_vocab_json(json, source)); });
}

val unigram_encode(const text::UnigramTokenizer& tok, const std::string& text) {
  return guarded([&] { return from_ids(tok.encode(text)); });
}

std::string unigram_piece(const text::UnigramTokenizer& tok, const val& id) {
  return guarded([&] { return tok.piece(static_cast<int32_t>(to_i64(id, "UnigramTokenizer.piece: id"))); });
}

double unigram_vocab_size(const text::UnigramTokenizer& tok) { return static_cast<double>(tok.vocab_size()); }

text::WordPieceTokenizer* wordpiece_parse_vocab_txt(const std::string& text, const val& options, const std::string& source) {
  return guarded([&] {
    auto o = to_wordpiece_options(options, "WordPieceTokenizer.parseVocabTxt: options");
    return new text::WordPieceTokenizer(text::WordPieceTokenizer::parse_vocab_txt(text, o, source));
  });
}

text::WordPieceTokenizer* wordpiece_parse_tokenizer_json(const std::string& json, const std::string& source) {
  return guarded([&] { return new text::WordPieceTokenizer(text::WordPieceTokenizer::parse_tokenizer_json(json, source)); });
}

val wordpiece_tokenize(const text::WordPieceTokenizer& tok, const std::string& text) {
  return guarded([&] { return from_strings(tok.tokenize(text)); });
}

val wordpiece_encode(const text::WordPieceTokenizer& tok, const std::string& text, bool add_special_tokens) {
  return guarded([&] { return from_encoding(tok.encode(text, add_special_tokens)); });
}

val wordpiece_encode_pair(const text::WordPieceTokenizer& tok, const std::string& text, const std::string& pair,
                          bool add_special_tokens) {
  return guarded([&] { return from_encoding(tok.encode_pair(text, pair, add_special_tokens)); });
}

val wordpiece_token_to_id(const text::WordPieceTokenizer& tok, const std::string& token) {
  return guarded([&] {
    auto id = tok.token_to_id(token);
    return id ? val(*id) : val::null();
  });
}

std::string wordpiece_id_to_token(const text::WordPieceTokenizer& tok, const val& id) {
  return guarded([&] { return tok.id_to_token(static_cast<int32_t>(to_i64(id, "WordPieceTokenizer.idToToken: id"))); });
}

double wordpiece_vocab_size(const text::WordPieceTokenizer& tok) { return static_cast<double>(tok.vocab_size()); }

}  // namespace rungs::wasm
