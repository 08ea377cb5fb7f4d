// SPDX-License-Identifier: Apache-2.0
// The real text mode's helpers in Node: the sentences of the text box and the tokens per bucket a
// ladder makes of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SENTENCES, SAMPLE_SENTENCES, bucketRows, sentencesOf } from '../src/sentences.js';

test('one sentence per non-empty line, trimmed, at most MAX_SENTENCES', () => {
  assert.deepEqual(sentencesOf('  a b \n\n\r\nc\r\n   \n'), { texts: ['a b', 'c'], dropped: 0 });
  assert.deepEqual(sentencesOf(''), { texts: [], dropped: 0 });
  const many = Array.from({ length: MAX_SENTENCES + 3 }, (_, i) => `s${i}`).join('\n');
  const got = sentencesOf(many);
  assert.equal(got.texts.length, MAX_SENTENCES);
  assert.equal(got.texts[MAX_SENTENCES - 1], `s${MAX_SENTENCES - 1}`);
  assert.equal(got.dropped, 3);
  assert.ok(sentencesOf(SAMPLE_SENTENCES).texts.length >= 6);
  assert.equal(sentencesOf(SAMPLE_SENTENCES).texts[0], 'the fox jumped over the lazy dog');
});

test('tokens per bucket: real tokens and each sentence padded to its bucket extent', () => {
  const ranges = [{ start: 1, end: 9 }, { start: 9, end: 17 }, { start: 17, end: 33 }];
  const tokens = [3, 8, 9, 20, 40];
  const buckets = [0, 0, 1, 2, -1];
  const rows = bucketRows(ranges, tokens, buckets);
  assert.deepEqual(rows.map((r) => r.actualRows), [11, 9, 20]);
  assert.deepEqual(rows.map((r) => r.paddedRows), [16, 16, 32]);
  assert.deepEqual(rows.map((r) => r.runs), [2, 1, 1]);
  assert.deepEqual(bucketRows(ranges, [], []).map((r) => r.paddedRows), [0, 0, 0]);
});
