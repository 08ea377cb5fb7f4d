// SPDX-License-Identifier: Apache-2.0
// The demo's traffic and scheme helpers in Node (no browser): every bad token is reported, the
// presets are reproducible, and schemes become the library's own ladders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LENGTH_LIMIT, makeTraffic, parseLengths, presetLengths, textLengths } from '../src/traffic.js';
import { bucketOf, buildLadder, schemeLabel } from '../src/schemes.js';

const npmDir = process.env.RUNGS_NPM_DIR ?? fileURLToPath(new URL('../../build/wasm-release/npm', import.meta.url));
const { ladder } = await import(pathToFileURL(`${npmDir}/index.js`).href);

test('pasted lengths: whole numbers kept, every other token named with a reason', () => {
  const { lengths, problems } = parseLengths('5, 12;0\n-3 abc 2.5 5000 +7 2048');
  assert.deepEqual(lengths, [5, 12, 7, 2048]);
  assert.deepEqual(problems, [
    { token: '0', reason: 'below 1' },
    { token: '-3', reason: 'below 1' },
    { token: 'abc', reason: 'not a number' },
    { token: '2.5', reason: 'not a whole number' },
    { token: '5000', reason: `above the demo's limit of ${LENGTH_LIMIT}` },
  ]);
  assert.deepEqual(parseLengths('   '), { lengths: [], problems: [] });
});

test('pasted text: one request per sentence, its word count', () => {
  const { lengths, problems } = textLengths('One two three. Four five!\n\nSix — seven eight nine? Ten');
  assert.deepEqual(lengths, [3, 2, 4, 1]);  // a lone dash is not a word
  assert.deepEqual(problems, []);
});

test('presets are reproducible and inside [1, max]; bad parameters are problems, not throws', () => {
  for (const kind of ['uniform', 'lognormal', 'bimodal']) {
    const spec = { kind, count: 500, max: 300, seed: 3, median: 24 };
    const a = presetLengths(spec, ladder.lognormalTrace);
    assert.deepEqual(a, presetLengths(spec, ladder.lognormalTrace), kind);
    assert.equal(a.length, 500);
    assert.ok(a.every((k) => Number.isInteger(k) && k >= 1 && k <= 300), kind);
  }
  // The log-normal preset is the library's trace, the one `rungs trace lognormal` prints.
  assert.deepEqual(presetLengths({ kind: 'lognormal', count: 50, max: 256, seed: 9, median: 24, sigma: 0.8 }, ladder.lognormalTrace),
    ladder.lognormalTrace(24, 50, 256, 9, 0.8));
  const bad = makeTraffic({ kind: 'uniform', count: 0, max: 256, seed: 1 }, ladder.lognormalTrace);
  assert.deepEqual(bad.lengths, []);
  assert.match(bad.problems[0].reason, /Requests must be a whole number from 1 to 20000, got 0/);
});

test('schemes become the library ladders; invalid ones throw a message for the page', () => {
  const base = { min: 8, max: 256, ratio: 2, step: 64, extents: '16, 64, 256', budget: 3, head: false };
  assert.deepEqual(buildLadder({ ...base, kind: 'pow2' }, ladder, []), ladder.powerOfTwo(8, 256));
  assert.deepEqual(buildLadder({ ...base, kind: 'pow2', head: true }, ladder, []), ladder.powerOfTwo(8, 256, true));
  assert.deepEqual(buildLadder({ ...base, kind: 'linear' }, ladder, []).map((r) => r.end - 1), [8, 72, 136, 200, 256]);
  assert.deepEqual(buildLadder({ ...base, kind: 'list' }, ladder, []), ladder.fromExtents([16, 64, 256]));
  assert.deepEqual(buildLadder({ ...base, kind: 'one' }, ladder, []), [{ start: 1, end: 257 }]);
  const lengths = [3, 3, 40, 41, 200];
  assert.deepEqual(buildLadder({ ...base, kind: 'optimal' }, ladder, lengths), ladder.optimal(lengths, 3));
  assert.throws(() => buildLadder({ ...base, kind: 'optimal' }, ladder, []), /no request lengths/);
  assert.throws(() => buildLadder({ ...base, kind: 'list', extents: '16, x' }, ladder, []), /extent 'x' is not a whole number/);
  assert.throws(() => buildLadder({ ...base, kind: 'pow2', max: NaN }, ladder, []), /Largest extent must be a whole number/);
  assert.throws(() => buildLadder({ ...base, kind: 'list', extents: '64, 16' }, ladder, []), (e) => e.code === 'InvalidArgument');
  assert.equal(schemeLabel({ ...base, kind: 'optimal', head: true }), 'optimal ≤3 +head');
});

test('bucketOf finds the bucket of a key, or -1 outside the ladder', () => {
  const r = ladder.powerOfTwo(8, 64);
  assert.deepEqual([1, 8, 9, 16, 17, 64, 65, 0].map((k) => bucketOf(r, k)), [0, 0, 1, 1, 2, 3, -1, -1]);
});

test('an empty or whitespace-only box is a problem that says what is missing', () => {
  for (const text of ['', '   \n\t ']) {
    const lengths = makeTraffic({ kind: 'lengths', text }, ladder.lognormalTrace);
    assert.deepEqual(lengths.lengths, []);
    assert.equal(lengths.problems.length, 1);
    assert.match(lengths.problems[0].reason, /The box is empty: paste request lengths/);
    const words = makeTraffic({ kind: 'text', text: `${text} ... ` }, ladder.lognormalTrace);
    assert.match(words.problems[0].reason, /no sentence with words/);
  }
  // A box with only bad tokens names them (no extra note).
  assert.deepEqual(makeTraffic({ kind: 'lengths', text: 'abc' }, ladder.lognormalTrace).problems, [{ token: 'abc', reason: 'not a number' }]);
});

test('a bad list ladder: the label never throws, the error names its field', () => {
  const base = { min: 8, max: 256, ratio: 2, step: 64, extents: '16, 32, abc', budget: 3, head: false, kind: 'list' };
  assert.equal(schemeLabel(base), 'list 16,32,abc');
  assert.throws(() => buildLadder(base, ladder, []), (e) => e.field === 'extents' && /extent 'abc' is not a whole number/.test(e.message));
  assert.throws(() => buildLadder({ ...base, kind: 'pow2', min: NaN }, ladder, []), (e) => e.field === 'min');
  assert.throws(() => buildLadder({ ...base, kind: 'optimal', budget: 99 }, ladder, [3]), (e) => e.field === 'budget');
  // The library's own refusal (extents out of order) has no field: it is shown under the editor.
  assert.throws(() => buildLadder({ ...base, extents: '64, 16' }, ladder, []), (e) => e.code === 'InvalidArgument' && !e.field);
});
