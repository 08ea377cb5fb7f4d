// SPDX-License-Identifier: Apache-2.0
#include "core/text/unicode.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "rungs/text.hpp"

namespace rungs::text::unicode {
namespace {

struct PropertyRange {
  char32_t first, last;
  std::uint8_t bits;
};
struct CombiningRange {
  char32_t first, last;
  std::uint8_t rank;
};
struct Decomposition {
  char32_t cp;
  std::uint32_t nfd_offset, nfd_length, nfkd_offset, nfkd_length;
};
struct Mapping {
  char32_t cp;
  std::uint32_t offset, length;
};
struct Composition {
  char32_t first, second, composite;
};

#include "core/text/unicode_data.inc"

// Hangul syllables decompose and compose by formula (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

std::uint8_t properties(char32_t cp) {
  auto it = std::upper_bound(std::begin(kProperties), std::end(kProperties), cp,
                             [](char32_t c, const PropertyRange& r) { return c < r.first; });
  if (it == std::begin(kProperties)) return 0;
  --it;
  return cp <= it->last ? it->bits : 0;
}

std::uint8_t combining_rank(char32_t cp) {
  if (cp < 0x300) return 0;
  auto it = std::upper_bound(std::begin(kCombining), std::end(kCombining), cp,
                             [](char32_t c, const CombiningRange& r) { return c < r.first; });
  if (it == std::begin(kCombining)) return 0;
  --it;
  return cp <= it->last ? it->rank : 0;
}

const Decomposition* find_decomposition(char32_t cp) {
  auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), cp,
                             [](const Decomposition& d, char32_t c) { return d.cp < c; });
  return it != std::end(kDecompositions) && it->cp == cp ? &*it : nullptr;
}

void decompose(std::u32string_view text, bool compatibility, std::u32string& out) {
  out.reserve(out.size() + text.size());
  for (char32_t cp : text) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
      char32_t s = cp - kSBase;
      out.push_back(kLBase + s / kNCount);
      out.push_back(kVBase + (s % kNCount) / kTCount);
      if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
      continue;
    }
    const Decomposition* d = cp < 0xA0 ? nullptr : find_decomposition(cp);
    if (d == nullptr) {
      out.push_back(cp);
    } else if (compatibility && d->nfkd_length != 0) {
      out.append(kMappingData + d->nfkd_offset, d->nfkd_length);
    } else if (d->nfd_length != 0) {
      out.append(kMappingData + d->nfd_offset, d->nfd_length);
    } else {
      out.push_back(cp);
    }
  }
}

// Canonical ordering: each run of non-starters stably sorted by combining class.
void reorder(std::u32string& text) {
  size_t i = 0;
  while (i < text.size()) {
    if (combining_rank(text[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && combining_rank(text[j]) != 0) ++j;
    if (j - i > 1) {
      std::stable_sort(text.begin() + static_cast<std::ptrdiff_t>(i), text.begin() + static_cast<std::ptrdiff_t>(j),
                       [](char32_t a, char32_t b) { return combining_rank(a) < combining_rank(b); });
    }
    i = j;
  }
}

char32_t compose_pair(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  auto it = std::lower_bound(std::begin(kCompositions), std::end(kCompositions), first,
                             [](const Composition& c, char32_t f) { return c.first < f; });
  for (; it != std::end(kCompositions) && it->first == first; ++it) {
    if (it->second == second) return it->composite;
  }
  return 0;
}

// Canonical composition (Unicode 3.11): a character combines with the last starter unless a
// character between them is a starter or has a combining class at least its own.
void compose(std::u32string& text) {
  size_t out = 0;
  std::ptrdiff_t starter = -1;
  std::uint8_t last_rank = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char32_t cp = text[i];
    std::uint8_t rank = combining_rank(cp);
    if (starter >= 0) {
      bool adjacent = static_cast<std::ptrdiff_t>(out) == starter + 1;
      if (adjacent || (last_rank != 0 && last_rank < rank)) {
        if (char32_t composite = compose_pair(text[static_cast<size_t>(starter)], cp)) {
          text[static_cast<size_t>(starter)] = composite;
          continue;
        }
      }
    }
    if (rank == 0) starter = static_cast<std::ptrdiff_t>(out);
    last_rank = rank;
    text[out++] = cp;
  }
  text.resize(out);
}

const Mapping* find_lowercase(char32_t cp) {
  auto it = std::lower_bound(std::begin(kLowercase), std::end(kLowercase), cp,
                             [](const Mapping& m, char32_t c) { return m.cp < c; });
  return it != std::end(kLowercase) && it->cp == cp ? &*it : nullptr;
}

bool is_cased(char32_t cp) { return (properties(cp) & kCased) != 0; }
bool is_case_ignorable(char32_t cp) { return (properties(cp) & kCaseIgnorable) != 0; }

// Final_Sigma (Unicode 3.13, table 3-17): a cased letter (then case-ignorables) before, and no
// case-ignorables then a cased letter after.
bool final_sigma(std::u32string_view text, size_t i) {
  size_t j = i;
  bool before = false;
  while (j > 0) {
    char32_t c = text[--j];
    if (is_case_ignorable(c)) continue;
    before = is_cased(c);
    break;
  }
  if (!before) return false;
  for (size_t k = i + 1; k < text.size(); ++k) {
    char32_t c = text[k];
    if (is_case_ignorable(c)) continue;
    return !is_cased(c);
  }
  return true;
}

}  // namespace

std::u32string decode_utf8(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  size_t n = utf8.size(), i = 0;
  while (i < n) {
    unsigned b = s[i];
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    }
    int need = 0;
    unsigned lower = 0x80, upper = 0xBF;
    char32_t cp = 0;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1, cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2, cp = b & 0x0F;
      if (b == 0xE0) lower = 0xA0;
      if (b == 0xED) upper = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3, cp = b & 0x07;
      if (b == 0xF0) lower = 0x90;
      if (b == 0xF4) upper = 0x8F;  // nothing past U+10FFFF
    } else {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool ok = true;
    for (int k = 0; k < need; ++k, ++j) {
      if (j >= n || s[j] < lower || s[j] > upper) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (s[j] & 0x3F);
      lower = 0x80, upper = 0xBF;
    }
    out.push_back(ok ? cp : 0xFFFD);
    i = j;  // after an error, the offending byte starts the next character
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_utf8(out, cp);
  return out;
}

size_t utf16_length(std::string_view utf8) {
  size_t n = 0;
  for (char32_t cp : decode_utf8(utf8)) n += cp >= 0x10000 ? 2 : 1;
  return n;
}

std::u32string nfkc(std::u32string_view text) {
  // Fast path: ASCII is its own NFKC.
  if (std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 0x80; })) return std::u32string(text);
  std::u32string out;
  decompose(text, true, out);
  reorder(out);
  compose(out);
  return out;
}

std::u32string nfd(std::u32string_view text) {
  std::u32string out;
  decompose(text, false, out);
  reorder(out);
  return out;
}

std::u32string to_lower(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char32_t cp = text[i];
    if (cp < 0x80) {
      out.push_back(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    } else if (cp == 0x3A3) {
      out.push_back(final_sigma(text, i) ? 0x3C2 : 0x3C3);
    } else if (const Mapping* m = find_lowercase(cp)) {
      out.append(kMappingData + m->offset, m->length);
    } else {
      out.push_back(cp);
    }
  }
  return out;
}

bool is_whitespace(char32_t cp) { return (properties(cp) & kWhitespace) != 0; }
bool is_control(char32_t cp) { return (properties(cp) & kControl) != 0; }
bool is_unassigned(char32_t cp) { return (properties(cp) & kUnassigned) != 0; }
bool is_punctuation(char32_t cp) { return (properties(cp) & kPunctuation) != 0; }
bool is_nonspacing_mark(char32_t cp) { return (properties(cp) & kNonspacingMark) != 0; }

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace rungs::text::unicode

namespace rungs::text {
std::string_view unicode_version() { return unicode::kUnicodeVersion; }
}  // namespace rungs::text
