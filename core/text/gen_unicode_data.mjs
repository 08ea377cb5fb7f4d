// SPDX-License-Identifier: Apache-2.0
// Writes core/text/unicode_data.inc, the Unicode tables of rungs::text, from this Node's ICU:
//
//   node core/text/gen_unicode_data.mjs > core/text/unicode_data.inc
//   node core/text/gen_unicode_data.mjs --check core/text/unicode_data.inc   # ctest: text_unicode_tables
//
// --check exits 1 when the file is not what this Node makes, and 77 (ctest's skip) when this
// Node's Unicode version is not the file's (the tables are pinned to one version, so that
// tokenization does not change with the machine's Node).
//
// The tokenizers must agree with JavaScript references (String.prototype.normalize('NFKC') for
// Universal Sentence Encoder Lite, tokenizers.js for WordPiece), so the tables are read from the
// same engine instead of from UnicodeData.txt: full NFD / NFKD decompositions, lower-case
// mappings and the properties BERT's basic tokenizer uses come straight from Node. Canonical
// combining classes are not exposed to JavaScript; their ORDER is what reordering and composition
// need, and NFD reveals it (two marks swap exactly when the first has the higher class), so each
// mark gets a rank with the same order and ties. The canonical composition pairs are found from
// the decompositions and checked against NFC. tests/text checks the C++ normaliser against Node's
// on every code point and on random mark sequences, and that this file is what Node makes.
const cps = [];
for (let cp = 0; cp <= 0x10ffff; ++cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;  // surrogates: never produced by UTF-8 decoding
  cps.push(cp);
}
const hangul = (cp) => cp >= 0xac00 && cp <= 0xd7a3;  // decomposed and composed by formula
const str = (cp) => String.fromCodePoint(cp);
const points = (s) => [...s].map((c) => c.codePointAt(0));

// ---- properties: one bit each, as ranges of equal bits
const props = [
  ['kWhitespace', /^\s$/u],                    // JavaScript's \s (BERT: cleaned to ' ', split on)
  ['kControl', /^[\p{Cc}\p{Cf}\p{Co}\p{Cs}]$/u],  // removed by BERT (with \t \n \r exempt)
  ['kUnassigned', /^\p{Cn}$/u],                // removed by BERT (original and Rust), kept by tokenizers.js
  ['kPunctuation', /^[\p{P}\u0021-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007e]$/u],
  ['kNonspacingMark', /^\p{Mn}$/u],            // dropped by accent stripping
  ['kCased', /^\p{Cased}$/u],                  // final sigma context
  ['kCaseIgnorable', /^\p{Case_Ignorable}$/u],
];
const ranges = [];
for (const cp of cps) {
  const s = str(cp);
  let bits = 0;
  props.forEach(([, re], i) => { if (re.test(s)) bits |= 1 << i; });
  const last = ranges[ranges.length - 1];
  if (last && last[2] === bits && last[1] === cp - 1) last[1] = cp;
  else if (bits) ranges.push([cp, cp, bits]);
}

// ---- decompositions (full, recursive) and lower-case mappings
const decomps = [];  // [cp, nfd points or null, nfkd points or null]
const lower = [];    // [cp, points]
for (const cp of cps) {
  const s = str(cp);
  if (!hangul(cp)) {
    const d = s.normalize('NFD'), kd = s.normalize('NFKD');
    if (d !== s || kd !== s) decomps.push([cp, d !== s ? points(d) : null, kd !== d ? points(kd) : null]);
  }
  const l = s.toLowerCase();
  if (l !== s) lower.push([cp, points(l)]);
}

// ---- canonical combining class ranks
const nfdStable = (cp) => !hangul(cp) && str(cp).normalize('NFD') === str(cp);
const swaps = (x, y) => (str(x) + str(y)).normalize('NFD') === str(y) + str(x);
const marks = cps.filter((cp) => nfdStable(cp) && (cp === 0x345 || swaps(cp, 0x334) || swaps(0x345, cp)));
const cmp = (x, y) => (swaps(x, y) ? 1 : swaps(y, x) ? -1 : 0);
marks.sort((x, y) => cmp(x, y) || x - y);
const rank = new Map();
let r = 1;
marks.forEach((cp, i) => { if (i > 0 && cmp(marks[i - 1], cp) !== 0) ++r; rank.set(cp, r); });
if (r > 255) throw new Error(`${r} combining classes do not fit a byte`);
// Ranges of equal rank (marks are sorted by rank, so re-sort by code point).
const rankRanges = [];
for (const cp of [...marks].sort((a, b) => a - b)) {
  const last = rankRanges[rankRanges.length - 1];
  if (last && last[1] === cp - 1 && last[2] === rank.get(cp)) last[1] = cp;
  else rankRanges.push([cp, cp, rank.get(cp)]);
}

// ---- canonical composition pairs: (first, second) -> primary composite
const pairs = [];
for (const [cp, d] of decomps) {
  if (!d || d.length < 2 || str(cp).normalize('NFC') !== str(cp)) continue;
  let found = null;
  for (let k = d.length - 1; k >= 1 && !found; --k) {
    const c = d[k];
    const rest = points(String.fromCodePoint(...d.filter((_, i) => i !== k)).normalize('NFC'));
    if (rest.length !== 1) continue;
    const pair = str(rest[0]) + str(c);
    if (pair.normalize('NFC') === str(cp) && pair.normalize('NFD') === str(cp).normalize('NFD')) found = [rest[0], c, cp];
  }
  if (!found) throw new Error(`no composition pair found for U+${cp.toString(16)}`);
  pairs.push(found);
}
pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);

// ---- output
const hex = (cp) => '0x' + cp.toString(16).toUpperCase();
const out = [];
const unicode = process.versions.unicode;
out.push('// SPDX-License-Identifier: Apache-2.0 AND Unicode-3.0');
out.push(`// Generated by core/text/gen_unicode_data.mjs from Node ${process.versions.node} (ICU ${process.versions.icu},`);
out.push(`// Unicode ${unicode}): do not edit. Included by core/text/unicode.cpp only.`);
out.push('// The data is derived from the Unicode Character Database (through ICU): Copyright (c) 1991-2025');
out.push('// Unicode, Inc., under the Unicode License v3 (https://www.unicode.org/license.txt).');
out.push(`constexpr char kUnicodeVersion[] = "${unicode}";`);
out.push('');
out.push('// Properties: {first, last, bits} over code points with any bit set, sorted.');
out.push(props.map(([n], i) => `constexpr std::uint8_t ${n} = ${1 << i};`).join('\n'));
out.push('constexpr PropertyRange kProperties[] = {');
for (let i = 0; i < ranges.length; i += 4)
  out.push('  ' + ranges.slice(i, i + 4).map(([a, b, f]) => `{${hex(a)}, ${hex(b)}, ${f}}`).join(', ') + ',');
out.push('};');
out.push('');
out.push('// Canonical combining classes as ranks (same order and ties): {first, last, rank}.');
out.push('constexpr CombiningRange kCombining[] = {');
for (let i = 0; i < rankRanges.length; i += 4)
  out.push('  ' + rankRanges.slice(i, i + 4).map(([a, b, k]) => `{${hex(a)}, ${hex(b)}, ${k}}`).join(', ') + ',');
out.push('};');
out.push('');
// Mapping data: one char32_t array; each entry names an offset and a length into it.
const data = [];
const put = (seq) => { if (!seq) return [0, 0]; const o = data.length; data.push(...seq); return [o, seq.length]; };
const decompRows = decomps.map(([cp, d, kd]) => [cp, ...put(d), ...put(kd)]);
const lowerRows = lower.map(([cp, l]) => [cp, ...put(l)]);
out.push('// Full decompositions, sorted by code point (Hangul syllables excepted): {cp, nfd offset,');
out.push('// nfd length, nfkd offset, nfkd length} into kMappingData; a length 0 means "as the other"');
out.push('// for nfkd (NFKD equals NFD) and "none" for nfd.');
out.push('constexpr Decomposition kDecompositions[] = {');
for (let i = 0; i < decompRows.length; i += 4)
  out.push('  ' + decompRows.slice(i, i + 4).map((r) => `{${hex(r[0])}, ${r[1]}, ${r[2]}, ${r[3]}, ${r[4]}}`).join(', ') + ',');
out.push('};');
out.push('');
out.push('// Lower-case mappings (String.prototype.toLowerCase of the lone code point), sorted:');
out.push('// {cp, offset, length} into kMappingData.');
out.push('constexpr Mapping kLowercase[] = {');
for (let i = 0; i < lowerRows.length; i += 5)
  out.push('  ' + lowerRows.slice(i, i + 5).map((r) => `{${hex(r[0])}, ${r[1]}, ${r[2]}}`).join(', ') + ',');
out.push('};');
out.push('');
out.push('// Canonical composition pairs, sorted by (first, second): {first, second, composite}.');
out.push('constexpr Composition kCompositions[] = {');
for (let i = 0; i < pairs.length; i += 4)
  out.push('  ' + pairs.slice(i, i + 4).map(([a, b, c]) => `{${hex(a)}, ${hex(b)}, ${hex(c)}}`).join(', ') + ',');
out.push('};');
out.push('');
out.push('constexpr char32_t kMappingData[] = {');
for (let i = 0; i < data.length; i += 10)
  out.push('  ' + data.slice(i, i + 10).map(hex).join(', ') + ',');
out.push('};');
const made = out.join('\n') + '\n';
const check = process.argv.indexOf('--check');
if (check < 0) {
  process.stdout.write(made);
} else {
  const { readFileSync } = await import('node:fs');
  const file = process.argv[check + 1];
  const committed = readFileSync(file, 'utf8');
  const version = /kUnicodeVersion\[\] = "([^"]*)"/.exec(committed)?.[1];
  if (version !== unicode) {
    console.log(`${file} holds Unicode ${version}, this Node has ${unicode}: not compared`);
    process.exit(77);
  }
  // The header names the Node and ICU that made it; any Node of the same Unicode makes the rest.
  const body = (text) => text.split('\n').slice(3).join('\n');
  if (body(committed) !== body(made)) {
    console.error(`${file} is not what core/text/gen_unicode_data.mjs makes: regenerate it`);
    process.exit(1);
  }
  console.log(`${file} is what Node ${process.versions.node} (Unicode ${unicode}) makes`);
}
