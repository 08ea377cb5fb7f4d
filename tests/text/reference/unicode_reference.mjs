// SPDX-License-Identifier: Apache-2.0
// Node's (ICU's) NFKC, NFD and toLowerCase, for tests/text/unicode_test.cpp to compare the C++
// tables and algorithms with: every code point whose mapping is not itself, then 40,000 random
// short sequences of combining marks, decomposable characters, Hangul jamo and letters (a fixed
// seed), where canonical reordering and composition happen. One line each:
//   <nfkc|nfd|lower> TAB <input code points, hex> TAB <output code points, hex>
// Written into the build tree by the build (tests/text/CMakeLists.txt): node script > file
const hex = (s) => [...s].map((c) => c.codePointAt(0).toString(16)).join(' ');
const out = [];
const pool = [];
for (let cp = 0; cp <= 0x10ffff; ++cp) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const s = String.fromCodePoint(cp);
  const nfkc = s.normalize('NFKC'), nfd = s.normalize('NFD'), lower = s.toLowerCase();
  if (nfkc !== s) out.push(`nfkc\t${hex(s)}\t${hex(nfkc)}`);
  if (nfd !== s) out.push(`nfd\t${hex(s)}\t${hex(nfd)}`);
  if (lower !== s) out.push(`lower\t${hex(s)}\t${hex(lower)}`);
  if (/^\p{M}$/u.test(s) || nfd !== s || nfkc !== s || (cp >= 0x1100 && cp <= 0x11ff) || cp === 0x3a3 ||
      (cp >= 0x41 && cp <= 0x5a && cp % 3 === 0)) {
    pool.push(s);
  }
}
let seed = 12345;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
for (let i = 0; i < 40000; ++i) {
  let s = '';
  const n = 2 + Math.floor(random() * 5);
  for (let k = 0; k < n; ++k) s += pool[Math.floor(random() * pool.length)];
  out.push(`nfkc\t${hex(s)}\t${hex(s.normalize('NFKC'))}`);
  out.push(`nfd\t${hex(s)}\t${hex(s.normalize('NFD'))}`);
  out.push(`lower\t${hex(s)}\t${hex(s.toLowerCase())}`);
}
process.stdout.write(out.join('\n') + '\n');
