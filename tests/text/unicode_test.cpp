// SPDX-License-Identifier: Apache-2.0
// core/text's Unicode against Node's (ICU): NFKC, NFD and lower-casing of every code point and of
// 40,000 random mark sequences (tests/text/reference/unicode_reference.mjs, run by the build), and
// UTF-8 decoding as the WHATWG decoder does it.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

#include "core/text/unicode.hpp"
#include "rungs/text.hpp"

namespace rungs::text::unicode {
namespace {

std::u32string parse_hex(const std::string& field) {
  std::u32string out;
  std::istringstream in(field);
  std::string word;
  while (in >> word) out.push_back(static_cast<char32_t>(std::stoul(word, nullptr, 16)));
  return out;
}

std::string show(std::u32string_view s) {
  std::ostringstream out;
  for (char32_t c : s) out << std::hex << static_cast<uint32_t>(c) << ' ';
  return out.str();
}

TEST(TextUnicode, MatchesNodeOnEveryCodePointAndRandomSequences) {
  std::ifstream in(RUNGS_TEXT_UNICODE_REFERENCE);
  if (!in) GTEST_SKIP() << "no " << RUNGS_TEXT_UNICODE_REFERENCE << " (the build makes it with node)";
  std::unordered_map<char32_t, std::u32string> single[3];  // nfkc, nfd, lower of one code point
  std::string line;
  size_t lines = 0, failures = 0;
  while (std::getline(in, line)) {
    size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    ASSERT_NE(t2, std::string::npos) << line;
    std::string kind = line.substr(0, t1);
    std::u32string input = parse_hex(line.substr(t1 + 1, t2 - t1 - 1));
    std::u32string want = parse_hex(line.substr(t2 + 1));
    int k = kind == "nfkc" ? 0 : kind == "nfd" ? 1
                                               : 2;
    std::u32string got = k == 0 ? nfkc(input) : k == 1 ? nfd(input)
                                                       : to_lower(input);
    if (got != want && ++failures <= 20) {
      ADD_FAILURE() << kind << "(" << show(input) << ") = " << show(got) << ", Node: " << show(want);
    }
    if (input.size() == 1) single[k][input[0]] = want;
    ++lines;
  }
  EXPECT_GT(lines, 100000u);
  EXPECT_EQ(failures, 0u);
  // Every code point the reference does not list maps to itself.
  size_t unchanged = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::u32string s(1, cp);
    for (int k = 0; k < 3; ++k) {
      if (single[k].count(cp) != 0) continue;
      std::u32string got = k == 0 ? nfkc(s) : k == 1 ? nfd(s)
                                                     : to_lower(s);
      if (got != s) {
        ADD_FAILURE() << "U+" << show(s) << "maps to " << show(got) << " (kind " << k << "), Node leaves it";
        if (++failures > 20) return;
      }
      ++unchanged;
    }
  }
  EXPECT_GT(unchanged, 3000000u);
}

TEST(TextUnicode, FinalSigma) {
  EXPECT_EQ(to_lower(U"\u039F\u0394\u03A5\u03A3\u03A3\u0395\u03A5\u03A3"), U"\u03BF\u03B4\u03C5\u03C3\u03C3\u03B5\u03C5\u03C2");
  EXPECT_EQ(to_lower(U"\u03A3"), U"\u03C3");        // no cased letter before: not final
  EXPECT_EQ(to_lower(U"A\u03A3 B"), U"a\u03C2 b");  // a word's end
  EXPECT_EQ(to_lower(U"A\u03A3.B"), U"a\u03C3.b");  // '.' is case-ignorable, then a letter
}

TEST(TextUnicode, Utf8DecodingReplacesEachMaximalInvalidSubsequence) {
  // The WHATWG examples (Encoding standard, and Unicode's "U+FFFD substitution of maximal subparts").
  EXPECT_EQ(decode_utf8("a\x80"
                        "b"),
            U"a\uFFFDb");
  EXPECT_EQ(decode_utf8("\xE2\x82"), U"\uFFFD");  // truncated: one U+FFFD
  EXPECT_EQ(decode_utf8("\xE2\x82"
                        "a"),
            U"\uFFFDa");
  EXPECT_EQ(decode_utf8("\xF0\x80\x80"), U"\uFFFD\uFFFD\uFFFD");            // overlong: each byte
  EXPECT_EQ(decode_utf8("\xED\xA0\x80"), U"\uFFFD\uFFFD\uFFFD");            // a surrogate: each byte
  EXPECT_EQ(decode_utf8("\xF4\x90\x80\x80"), U"\uFFFD\uFFFD\uFFFD\uFFFD");  // past U+10FFFF
  EXPECT_EQ(decode_utf8("\xC0\xAF"), U"\uFFFD\uFFFD");
  EXPECT_EQ(decode_utf8("\xFF"), U"\uFFFD");
  EXPECT_EQ(decode_utf8("\xF0\x9F\x91\x8D"), U"\U0001F44D");
  EXPECT_EQ(encode_utf8(U"a\u00E9\u4E2D\U0001F44D"), "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x91\x8D");
  EXPECT_EQ(utf16_length("a\xC3\xA9\xF0\x9F\x91\x8D"), 4u);
}

TEST(TextUnicode, CharacterClasses) {
  EXPECT_TRUE(is_whitespace(U' ') && is_whitespace(U'\t') && is_whitespace(0xA0) && is_whitespace(0x3000));
  EXPECT_FALSE(is_whitespace(U'a') || is_whitespace(0x200B));
  EXPECT_TRUE(is_punctuation(U'$') && is_punctuation(U'^') && is_punctuation(0x3002) && is_punctuation(0x2014));
  EXPECT_FALSE(is_punctuation(0x20AC) || is_punctuation(U'a'));  // a currency sign outside ASCII is not
  EXPECT_TRUE(is_control(0x7) && is_control(0x200B) && is_control(0xE000));
  EXPECT_TRUE(is_unassigned(0x378) && !is_unassigned(U'a'));
  EXPECT_TRUE(is_nonspacing_mark(0x301) && !is_nonspacing_mark(U'e'));
  EXPECT_TRUE(is_chinese_char(0x4E2D) && is_chinese_char(0x20000) && !is_chinese_char(0x3042));
  EXPECT_EQ(rungs::text::unicode_version(), "17.0");
}

}  // namespace
}  // namespace rungs::text::unicode
