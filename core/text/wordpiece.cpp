// SPDX-License-Identifier: Apache-2.0
// BERT's basic tokenizer and WordPiece, as HuggingFace's tokenizers (BertNormalizer,
// BertPreTokenizer, WordPiece, BertProcessing) and the original BERT tokenization.py do them:
//   normalise: clean the text (drop NUL, U+FFFD, control and unassigned characters; whitespace to
//     ' '), put spaces around CJK ideographs, lower-case, strip accents (NFD, drop Mn);
//   pre-tokenise: words are runs of neither whitespace nor punctuation, and each punctuation
//     character is a word of its own;
//   WordPiece: per word, greedy longest match first, later pieces with the "##" prefix; a word
//     that cannot be covered, or longer than max_input_chars_per_word, is one [UNK].
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text/read_file.hpp"
#include "core/text/unicode.hpp"
#include "rungs/error.hpp"
#include "rungs/text.hpp"

namespace rungs::text {

struct WordPieceTokenizer::Impl {
  WordPieceOptions options;
  bool post_process = true;  // a tokenizer.json without a post-processor adds no special tokens
  std::vector<std::string> vocab;
  std::unordered_map<std::string, int32_t> ids;
  int32_t unk = 0, cls = 0, sep = 0;

  int32_t require(const std::string& token, std::string_view source, std::string_view what) const {
    auto it = ids.find(token);
    if (it == ids.end()) {
      throw Error(ErrorCode::ParseError, std::string(source) + ": the " + std::string(what) + " '" + token +
                                             "' is not in the vocabulary");
    }
    return it->second;
  }

  void finish(std::string_view source) {
    unk = require(options.unk_token, source, "unknown token");
    if (post_process) {
      cls = require(options.cls_token, source, "classifier token");
      sep = require(options.sep_token, source, "separator token");
    }
  }

  std::u32string normalize(std::string_view text) const {
    std::u32string cps = unicode::decode_utf8(text);
    if (options.clean_text) {
      std::u32string cleaned;
      cleaned.reserve(cps.size());
      for (char32_t cp : cps) {
        bool keep_control = cp == U'\t' || cp == U'\n' || cp == U'\r';
        if (cp == 0 || cp == 0xFFFD || (!keep_control && unicode::is_control(cp)) || unicode::is_unassigned(cp)) continue;
        cleaned.push_back(unicode::is_whitespace(cp) ? U' ' : cp);
      }
      cps = std::move(cleaned);
    }
    if (options.handle_chinese_chars) {
      std::u32string spaced;
      spaced.reserve(cps.size());
      for (char32_t cp : cps) {
        if (unicode::is_chinese_char(cp)) {
          spaced.push_back(U' ');
          spaced.push_back(cp);
          spaced.push_back(U' ');
        } else {
          spaced.push_back(cp);
        }
      }
      cps = std::move(spaced);
    }
    if (options.lowercase) cps = unicode::to_lower(cps);
    if (options.strip_accents.value_or(options.lowercase)) {
      cps = unicode::nfd(cps);
      cps.erase(std::remove_if(cps.begin(), cps.end(), unicode::is_nonspacing_mark), cps.end());
    }
    return cps;
  }

  void wordpiece(std::u32string_view word, std::vector<std::string>& out) const {
    if (word.size() > options.max_input_chars_per_word) {
      out.push_back(options.unk_token);
      return;
    }
    size_t first = out.size();
    size_t start = 0;
    std::string candidate;
    while (start < word.size()) {
      size_t end = word.size();
      bool found = false;
      while (start < end) {
        candidate.clear();
        if (start > 0) candidate = options.continuing_subword_prefix;
        for (size_t i = start; i < end; ++i) unicode::append_utf8(candidate, word[i]);
        if (ids.count(candidate) != 0) {
          found = true;
          break;
        }
        --end;
      }
      if (!found) {
        out.resize(first);
        out.push_back(options.unk_token);
        return;
      }
      out.push_back(candidate);
      start = end;
    }
  }

  std::vector<std::string> tokenize(std::string_view text) const {
    std::u32string cps = normalize(text);
    std::vector<std::string> out;
    size_t i = 0;
    while (i < cps.size()) {
      if (unicode::is_whitespace(cps[i])) {
        ++i;
      } else if (unicode::is_punctuation(cps[i])) {
        wordpiece(std::u32string_view(cps).substr(i, 1), out);
        ++i;
      } else {
        size_t j = i;
        while (j < cps.size() && !unicode::is_whitespace(cps[j]) && !unicode::is_punctuation(cps[j])) ++j;
        wordpiece(std::u32string_view(cps).substr(i, j - i), out);
        i = j;
      }
    }
    return out;
  }

  void append(Encoding& e, const std::string& token, int32_t id, int32_t type) const {
    e.ids.push_back(id);
    e.tokens.push_back(token);
    e.token_type_ids.push_back(type);
    e.attention_mask.push_back(1);
  }

  void append_text(Encoding& e, std::string_view text, int32_t type) const {
    for (std::string& t : tokenize(text)) {
      int32_t id = ids.at(t);
      append(e, std::move(t), id, type);
    }
  }
};

WordPieceTokenizer::WordPieceTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

WordPieceTokenizer WordPieceTokenizer::parse_vocab_txt(std::string_view text, const WordPieceOptions& options,
                                                       std::string_view source) {
  const std::string src(source);
  auto impl = std::make_shared<Impl>();
  impl->options = options;
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    auto where = [&] { return src + ":" + std::to_string(line_no) + ": "; };
    if (line.empty()) throw Error(ErrorCode::ParseError, where() + "empty line (a vocab.txt has one token a line)");
    std::string token(line);
    if (unicode::encode_utf8(unicode::decode_utf8(token)) != token) {
      throw Error(ErrorCode::ParseError, where() + "the token is not valid UTF-8");
    }
    auto [it, inserted] = impl->ids.emplace(token, static_cast<int32_t>(impl->vocab.size()));
    if (!inserted) {
      throw Error(ErrorCode::ParseError, where() + "'" + token + "' is already on line " + std::to_string(it->second + 1));
    }
    impl->vocab.push_back(std::move(token));
  }
  if (impl->vocab.empty()) throw Error(ErrorCode::ParseError, src + ": the vocabulary is empty");
  impl->finish(src);
  return WordPieceTokenizer(std::move(impl));
}

WordPieceTokenizer WordPieceTokenizer::load_vocab_txt(const std::string& path, const WordPieceOptions& options) {
  return parse_vocab_txt(read_vocab_file(path, "vocab.txt"), options, path);
}

namespace {

using nlohmann::json;

const json& member(const json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) throw Error(ErrorCode::ParseError, where + ": missing \"" + key + "\"");
  return *it;
}

template <typename T>
T get(const json& object, const char* key, T fallback, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Error(ErrorCode::ParseError, where + "." + key + ": unexpected " + std::string(it->type_name()));
  }
}

std::string type_of(const json& object, const std::string& where) {
  if (!object.is_object()) throw Error(ErrorCode::ParseError, where + ": expected an object or null");
  const json& t = member(object, "type", where);
  if (!t.is_string()) throw Error(ErrorCode::ParseError, where + ".type: expected a string");
  return t.get<std::string>();
}

// A TemplateProcessing item: {"SpecialToken": {"id": "[CLS]", "type_id": 0}} or
// {"Sequence": {"id": "A", "type_id": 0}}; returns (kind, id, type_id).
std::tuple<std::string, std::string, int64_t> template_item(const json& item, const std::string& where) {
  if (!item.is_object() || item.size() != 1) throw Error(ErrorCode::ParseError, where + ": expected one key");
  auto first = item.begin();  // the item's one member (its key and value stay valid with `item`)
  const std::string kind = first.key();
  const json& body = first.value();
  if (!body.is_object()) throw Error(ErrorCode::ParseError, where + "." + kind + ": expected an object");
  return {kind, get<std::string>(body, "id", "", where + "." + kind), get<int64_t>(body, "type_id", 0, where + "." + kind)};
}

}  // namespace

WordPieceTokenizer WordPieceTokenizer::parse_tokenizer_json(std::string_view json_text, std::string_view source) {
  const std::string src(source);
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    throw Error(ErrorCode::ParseError, src + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(ErrorCode::ParseError, src + ": expected a JSON object");
  auto impl = std::make_shared<Impl>();
  WordPieceOptions& o = impl->options;

  const json& model = member(j, "model", src);
  if (std::string t = type_of(model, src + ": model"); t != "WordPiece") {
    throw Error(ErrorCode::Unsupported, src + ": model.type is '" + t + "'; only WordPiece is supported");
  }
  o.unk_token = get<std::string>(model, "unk_token", o.unk_token, src + ": model");
  o.continuing_subword_prefix =
      get<std::string>(model, "continuing_subword_prefix", o.continuing_subword_prefix, src + ": model");
  o.max_input_chars_per_word = get<size_t>(model, "max_input_chars_per_word", o.max_input_chars_per_word, src + ": model");
  const json& vocab = member(model, "vocab", src + ": model");
  if (!vocab.is_object()) throw Error(ErrorCode::ParseError, src + ": model.vocab: expected an object {token: id}");
  impl->vocab.assign(vocab.size(), std::string());
  std::vector<bool> seen(vocab.size(), false);
  for (const auto& [token, id] : vocab.items()) {
    const std::string where = src + ": model.vocab[\"" + token + "\"]";
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<uint64_t>() >= vocab.size()) {
      throw Error(ErrorCode::ParseError, where + ": expected an id in [0, " + std::to_string(vocab.size()) +
                                             "), got " + id.dump().substr(0, 40));
    }
    auto k = id.get<size_t>();
    if (seen[k]) {
      throw Error(ErrorCode::ParseError, where + ": id " + std::to_string(k) + " is also given to '" + impl->vocab[k] + "'");
    }
    seen[k] = true;
    impl->vocab[k] = token;
    impl->ids.emplace(token, static_cast<int32_t>(k));
  }
  if (impl->vocab.empty()) throw Error(ErrorCode::ParseError, src + ": model.vocab is empty");

  auto normalizer = j.find("normalizer");
  if (normalizer == j.end() || normalizer->is_null()) {
    o.clean_text = o.handle_chinese_chars = o.lowercase = false;
    o.strip_accents = false;
  } else {
    const std::string where = src + ": normalizer";
    if (std::string t = type_of(*normalizer, where); t != "BertNormalizer") {
      throw Error(ErrorCode::Unsupported, where + ".type is '" + t + "'; only BertNormalizer is supported");
    }
    o.clean_text = get<bool>(*normalizer, "clean_text", true, where);
    o.handle_chinese_chars = get<bool>(*normalizer, "handle_chinese_chars", true, where);
    o.lowercase = get<bool>(*normalizer, "lowercase", true, where);
    auto strip = normalizer->find("strip_accents");
    if (strip != normalizer->end() && !strip->is_null()) o.strip_accents = get<bool>(*normalizer, "strip_accents", true, where);
  }

  auto pre = j.find("pre_tokenizer");
  if (pre == j.end() || pre->is_null()) {
    throw Error(ErrorCode::Unsupported, src + ": pre_tokenizer is missing; only BertPreTokenizer is supported");
  }
  if (std::string t = type_of(*pre, src + ": pre_tokenizer"); t != "BertPreTokenizer") {
    throw Error(ErrorCode::Unsupported, src + ": pre_tokenizer.type is '" + t + "'; only BertPreTokenizer is supported");
  }

  auto post = j.find("post_processor");
  if (post == j.end() || post->is_null()) {
    impl->post_process = false;
  } else {
    const std::string where = src + ": post_processor";
    std::string t = type_of(*post, where);
    if (t == "BertProcessing") {
      for (auto [key, field] : {std::pair{"cls", &o.cls_token}, std::pair{"sep", &o.sep_token}}) {
        const json& pair = member(*post, key, where);
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) {
          throw Error(ErrorCode::ParseError, where + "." + key + ": expected [token, id]");
        }
        *field = pair[0].get<std::string>();
      }
    } else if (t == "TemplateProcessing") {
      // Only BERT's template: [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1.
      const json& single = member(*post, "single", where);
      const json& pair = member(*post, "pair", where);
      auto unsupported = [&] {
        return Error(ErrorCode::Unsupported, where + ": only BERT's template ([CLS] $A [SEP], [CLS] $A [SEP] $B:1 [SEP]:1) is supported");
      };
      if (!single.is_array() || single.size() != 3 || !pair.is_array() || pair.size() != 5) throw unsupported();
      using Item = std::tuple<std::string, std::string, int64_t>;
      std::vector<Item> s, p;
      for (size_t i = 0; i < 3; ++i) s.push_back(template_item(single[i], where + ".single[" + std::to_string(i) + "]"));
      for (size_t i = 0; i < 5; ++i) p.push_back(template_item(pair[i], where + ".pair[" + std::to_string(i) + "]"));
      const std::string cls = std::get<1>(s[0]), sep = std::get<1>(s[2]);
      std::vector<Item> want_s{{"SpecialToken", cls, 0}, {"Sequence", "A", 0}, {"SpecialToken", sep, 0}};
      std::vector<Item> want_p{{"SpecialToken", cls, 0}, {"Sequence", "A", 0}, {"SpecialToken", sep, 0}, {"Sequence", "B", 1}, {"SpecialToken", sep, 1}};
      if (s != want_s || p != want_p) throw unsupported();
      o.cls_token = cls, o.sep_token = sep;
    } else {
      throw Error(ErrorCode::Unsupported,
                  where + ".type is '" + t + "'; only BertProcessing and BERT's TemplateProcessing are supported");
    }
  }
  impl->finish(src);
  return WordPieceTokenizer(std::move(impl));
}

WordPieceTokenizer WordPieceTokenizer::load_tokenizer_json(const std::string& path) {
  return parse_tokenizer_json(read_vocab_file(path, "tokenizer.json"), path);
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const { return impl_->tokenize(text); }

Encoding WordPieceTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const Impl& v = *impl_;
  Encoding e;
  bool special = add_special_tokens && v.post_process;
  if (special) v.append(e, v.options.cls_token, v.cls, 0);
  v.append_text(e, text, 0);
  if (special) v.append(e, v.options.sep_token, v.sep, 0);
  return e;
}

Encoding WordPieceTokenizer::encode_pair(std::string_view text, std::string_view pair, bool add_special_tokens) const {
  const Impl& v = *impl_;
  bool special = add_special_tokens && v.post_process;
  Encoding e = encode(text, add_special_tokens);
  // The pair is segment 1 whenever there is a post-processor, with or without special tokens.
  int32_t type = v.post_process ? 1 : 0;
  v.append_text(e, pair, type);
  if (special) v.append(e, v.options.sep_token, v.sep, 1);
  return e;
}

size_t WordPieceTokenizer::vocab_size() const { return impl_->vocab.size(); }

std::optional<int32_t> WordPieceTokenizer::token_to_id(std::string_view token) const {
  auto it = impl_->ids.find(std::string(token));
  if (it == impl_->ids.end()) return std::nullopt;
  return it->second;
}

const std::string& WordPieceTokenizer::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->vocab.size()) {
    throw Error(ErrorCode::OutOfRange, "WordPieceTokenizer::id_to_token: id " + std::to_string(id) + " is not in [0, " +
                                           std::to_string(impl_->vocab.size()) + ")");
  }
  return impl_->vocab[static_cast<size_t>(id)];
}

const WordPieceOptions& WordPieceTokenizer::options() const { return impl_->options; }

}  // namespace rungs::text
