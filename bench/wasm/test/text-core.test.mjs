// SPDX-License-Identifier: Apache-2.0
// node --test bench/wasm/test: the text benchmark's checks (lib/text-core.mjs) fail when they must.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { checkEqual, compare, corpusLines, runTextBench, TextMismatch } from '../lib/text-core.mjs';

const v = (...xs) => Float32Array.from(xs);

test('compare finds the worst line by max abs and by cosine', () => {
  const d = compare([v(1, 0), v(0, 1), v(1, 1)], [v(1, 0), v(0, 1.00005), v(1, -1)]);
  assert.equal(d.worstAbsLine, 2);
  assert.equal(d.maxAbs, 2);
  assert.equal(d.worstCosLine, 2);
  assert.ok(Math.abs(d.minCosine) < 1e-12);
  assert.throws(() => compare([v(1)], []), TextMismatch);
  assert.throws(() => compare([v(1)], [v(1, 2)]), TextMismatch);
});

test('checkEqual passes at the tolerance and fails past it, naming the line', () => {
  const lines = ['a', 'b'];
  checkEqual('x', compare([v(1, 0), v(0, 1)], [v(1, 0), v(0, 1 + 0.5e-4)]), lines);
  assert.throws(() => checkEqual('x', compare([v(1, 0), v(0, 1)], [v(1, 0), v(0, 1 + 2e-4)]), lines), /max abs .* line 2 \("b"\)/);
  // Within 1e-4 everywhere but pointing elsewhere: the cosine check catches it.
  assert.throws(() => checkEqual('x', compare([v(1e-5, 0)], [v(0, 1e-5)]), ['c']), /cosine .* line 1/);
});

test('corpusLines: distinct trimmed non-empty lines, limit or spread', () => {
  const texts = ['  a\n\nb \na\n', 'c\nd\ne\nf\n'];
  assert.deepEqual(corpusLines(texts), ['a', 'b', 'c', 'd', 'e', 'f']);
  assert.deepEqual(corpusLines(texts, { limit: 2 }), ['a', 'b']);
  assert.deepEqual(corpusLines(texts, { spread: 3 }), ['a', 'c', 'e']);
});

test('runTextBench fails on a rungs that differs from tfjs and passes on one that agrees', async () => {
  const lines = ['one', 'two words', 'three words here'];
  const vec = (t, eps = 0) => Float32Array.from({ length: 8 }, (_, i) => Math.sin(t.length + i) + (i === 5 ? eps : 0));
  const tfjs = { threads: 1, tokenCount: (t) => t.split(' ').length, embed: async (ts) => ts.map((t) => vec(t)) };
  const rungs = (eps) => ({ threads: 1, make: () => ({ embed: (ts) => ts.map((t) => vec(t, eps)), stats: () => ({ compiles: 2 }),
    tokenCounts: (ts) => ts.map((t) => t.split(' ').length), delete() {} }) });
  let t = 0;
  const clock = () => { const t0 = (t += 10); return () => ({ wall: (t += 5) - t0, cpu: null }); };
  const row = await runTextBench({ lines, batch: 2, tfjs, rungs: rungs(0), clock });
  assert.equal(row.tokens, 6);
  assert.equal(row.diff.maxAbs, 0);
  assert.ok(row.ratio > 0);
  await assert.rejects(runTextBench({ lines, batch: 2, tfjs, rungs: rungs(3e-4), clock }), TextMismatch);
});
