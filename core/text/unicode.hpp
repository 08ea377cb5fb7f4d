// SPDX-License-Identifier: Apache-2.0
// core/text/unicode.hpp: the Unicode the tokenizers need, on code points (char32_t): UTF-8 in and
// out, NFKC and NFD, lower-casing and the character classes of BERT's basic tokenizer. The tables
// (core/text/unicode_data.inc) are generated from Node's ICU by core/text/gen_unicode_data.mjs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rungs::text::unicode {

// UTF-8 to code points; each maximal invalid subsequence becomes one U+FFFD (WHATWG decoding).
std::u32string decode_utf8(std::string_view utf8);
std::string encode_utf8(std::u32string_view text);
void append_utf8(std::string& out, char32_t cp);
// The length of `utf8` in UTF-16 code units (JavaScript's String.length), after decoding.
size_t utf16_length(std::string_view utf8);

std::u32string nfkc(std::u32string_view text);
std::u32string nfd(std::u32string_view text);
// String.prototype.toLowerCase: full mappings, with the final-sigma rule.
std::u32string to_lower(std::u32string_view text);

bool is_whitespace(char32_t cp);       // JavaScript's \s
bool is_control(char32_t cp);          // Cc, Cf, Co, Cs
bool is_unassigned(char32_t cp);       // Cn
bool is_punctuation(char32_t cp);      // P, or ASCII punctuation and symbols (BERT's rule)
bool is_nonspacing_mark(char32_t cp);  // Mn
bool is_chinese_char(char32_t cp);     // BERT's CJK ideograph blocks

}  // namespace rungs::text::unicode
