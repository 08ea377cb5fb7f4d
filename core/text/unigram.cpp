// SPDX-License-Identifier: Apache-2.0
// The unigram (SentencePiece-style) tokenizer of Universal Sentence Encoder Lite, a faithful port
// of lib/tokenizer.ts and lib/trie.ts in @energetic-ai/embeddings 0.2.0 (itself from tfjs-models),
// including what that code does by accident, because the model's ids are defined by it:
//   - a position no piece starts at is one unknown character (id 0, score 0); a position where
//     only longer pieces start has no single-character fallback;
//   - best[end] == 0 means "unset", so a path scoring exactly 0 is overwritten, and ties go to the
//     candidate seen last (start positions ascending, so the shorter piece);
//   - the backtrace steps back by the JavaScript (UTF-16) length of the chosen piece's string;
//   - a piece listed twice takes the later id; a null score is 0.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/text/read_file.hpp"
#include "core/text/unicode.hpp"
#include "rungs/error.hpp"
#include "rungs/text.hpp"

namespace rungs::text {

struct UnigramTokenizer::Impl {
  struct Piece {
    std::string text;
    double score = 0;
    int32_t utf16_length = 0;
  };
  struct TrieNode {
    bool end = false;
    double score = 0;
    int32_t id = 0;
    int32_t length = 0;  // code points from the root
  };
  std::vector<Piece> pieces;
  std::vector<TrieNode> nodes{TrieNode{}};         // nodes[0] is the root
  std::unordered_map<uint64_t, int32_t> children;  // (node << 21 | code point) -> node

  int32_t child(int32_t node, char32_t cp) const {
    auto it = children.find(static_cast<uint64_t>(node) << 21 | cp);
    return it == children.end() ? -1 : it->second;
  }

  void insert(std::u32string_view word, double score, int32_t id) {
    int32_t node = 0;
    for (char32_t cp : word) {
      uint64_t key = static_cast<uint64_t>(node) << 21 | cp;
      auto it = children.find(key);
      if (it == children.end()) {
        int32_t length = nodes[static_cast<size_t>(node)].length + 1;
        nodes.push_back(TrieNode{false, 0, 0, length});
        it = children.emplace(key, static_cast<int32_t>(nodes.size() - 1)).first;
      }
      node = it->second;
    }
    if (node != 0) {
      TrieNode& n = nodes[static_cast<size_t>(node)];
      n.end = true, n.score = score, n.id = id;
    }
  }
};

UnigramTokenizer::UnigramTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

UnigramTokenizer UnigramTokenizer::parse_vocab_json(std::string_view json_text, std::string_view source,
                                                    int reserved) {
  const std::string src(source);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorCode::ParseError, src + ": invalid JSON: " + e.what());
  }
  if (!j.is_array()) {
    throw Error(ErrorCode::ParseError,
                src + ": expected a JSON array of [piece, score] pairs, got " + std::string(j.type_name()));
  }
  if (j.empty()) throw Error(ErrorCode::ParseError, src + ": the vocabulary is empty (entry 0 is the unknown piece)");
  if (reserved < 0) throw Error(ErrorCode::InvalidArgument, src + ": reserved must be >= 0, got " + std::to_string(reserved));
  if (j.size() > (size_t{1} << 30)) throw Error(ErrorCode::ParseError, src + ": too many entries");
  auto impl = std::make_shared<Impl>();
  impl->pieces.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    auto where = [&] { return src + ": entry " + std::to_string(i) + ": "; };
    if (!e.is_array() || e.size() != 2) {
      throw Error(ErrorCode::ParseError, where() + "expected [piece, score], got " + e.dump().substr(0, 80));
    }
    if (!e[0].is_string()) {
      throw Error(ErrorCode::ParseError, where() + "the piece must be a string, got " + std::string(e[0].type_name()));
    }
    if (!e[1].is_number() && !e[1].is_null()) {
      throw Error(ErrorCode::ParseError,
                  where() + "the score must be a number (or null), got " + std::string(e[1].type_name()));
    }
    Impl::Piece p;
    p.text = e[0].get<std::string>();
    p.score = e[1].is_null() ? 0.0 : e[1].get<double>();
    std::u32string cps = unicode::decode_utf8(p.text);
    for (char32_t cp : cps) p.utf16_length += cp >= 0x10000 ? 2 : 1;
    if (static_cast<int64_t>(i) >= reserved) impl->insert(cps, p.score, static_cast<int32_t>(i));
    impl->pieces.push_back(std::move(p));
  }
  // The backtrace steps back by the unknown piece's length: an empty one would never finish.
  if (impl->pieces[0].utf16_length == 0) {
    throw Error(ErrorCode::ParseError, src + ": entry 0 (the unknown piece) must not be empty");
  }
  return UnigramTokenizer(std::move(impl));
}

UnigramTokenizer UnigramTokenizer::load(const std::string& path, int reserved) {
  return parse_vocab_json(read_vocab_file(path, "vocab.json"), path, reserved);
}

size_t UnigramTokenizer::vocab_size() const { return impl_->pieces.size(); }

const std::string& UnigramTokenizer::piece(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->pieces.size()) {
    throw Error(ErrorCode::OutOfRange, "UnigramTokenizer::piece: id " + std::to_string(id) + " is not in [0, " +
                                           std::to_string(impl_->pieces.size()) + ")");
  }
  return impl_->pieces[static_cast<size_t>(id)].text;
}

std::vector<int32_t> UnigramTokenizer::encode(std::string_view text) const {
  const Impl& v = *impl_;
  // processInput: NFKC, then (unless empty) a U+2581 before the text and in place of each space.
  std::u32string normalized = unicode::nfkc(unicode::decode_utf8(text));
  std::u32string symbols;
  if (!normalized.empty()) {
    symbols.reserve(normalized.size() + 1);
    symbols.push_back(U'\u2581');
    for (char32_t cp : normalized) symbols.push_back(cp == U' ' ? U'\u2581' : cp);
  }
  const size_t n = symbols.size();

  // Viterbi in one forward sweep. The reference first collects every piece ending at each
  // position, then visits them by ascending start; relaxing each edge from its start as the
  // starts ascend visits them in the same order, and best[start] is final by then (every edge
  // into `start` begins before it).
  std::vector<double> best(n + 1, 0.0);
  std::vector<int32_t> words(n + 1, 0);
  auto relax = [&](size_t start, size_t end, double piece_score, int32_t id) {
    double score = piece_score + best[start];
    if (best[end] == 0 || score >= best[end]) {
      best[end] = score;
      words[end] = id;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    bool matched = false;
    int32_t node = v.child(0, symbols[i]);
    for (size_t k = i; k < n && node >= 0; ++k) {
      const Impl::TrieNode& t = v.nodes[static_cast<size_t>(node)];
      if (t.end) {
        relax(i, i + static_cast<size_t>(t.length), t.score, t.id);
        matched = true;
      }
      node = k + 1 < n ? v.child(node, symbols[k + 1]) : -1;
    }
    if (!matched) relax(i, i + 1, 0.0, 0);  // an unknown character
  }

  std::vector<int32_t> reversed;
  for (int64_t at = static_cast<int64_t>(n); at > 0;) {
    int32_t id = words[static_cast<size_t>(at)];
    reversed.push_back(id);
    at -= v.pieces[static_cast<size_t>(id)].utf16_length;
  }
  std::vector<int32_t> ids;
  ids.reserve(reversed.size());
  bool previous_unknown = false;
  for (int32_t id : reversed) {
    if (!(previous_unknown && id == 0)) ids.push_back(id);
    previous_unknown = id == 0;
  }
  return {ids.rbegin(), ids.rend()};
}

}  // namespace rungs::text
