// SPDX-License-Identifier: Apache-2.0
// The real text mode's pure helpers (text.js), tested in Node (web/test/sentences.test.mjs): the
// sentences of the text box, the sample sentences, and the tokens per bucket a ladder makes of them.

export const MAX_SENTENCES = 200;
export const SAMPLE_SENTENCES = [
  'the fox jumped over the lazy dog',
  'A quick brown fox leaps over a sleepy dog.',
  'How do I reset my password?',
  'I forgot my password and cannot log in to my account.',
  'The stock market fell sharply after the interest rate announcement.',
  'Shares dropped today when the central bank raised rates.',
  'Bake the bread at 220 degrees for thirty minutes, until the crust is golden brown.',
  'What is the weather like in Paris this weekend?',
].join('\n');

/** The sentences of the box: one per non-empty line, trimmed; at most MAX_SENTENCES. */
export function sentencesOf(text) {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return { texts: lines.slice(0, MAX_SENTENCES), dropped: Math.max(0, lines.length - MAX_SENTENCES) };
}

/**
 * Real and padded tokens per bucket of `ranges` for sentences of `tokens` tokens in `buckets`
 * (-1: outside the ladder): the per-bucket rows the padding chart draws (a bucket pads each of its
 * sentences to its extent, end - 1).
 */
export function bucketRows(ranges, tokens, buckets) {
  const rows = ranges.map(() => ({ actualRows: 0, paddedRows: 0, computedRows: 0, runs: 0 }));
  tokens.forEach((n, i) => {
    const b = buckets[i];
    if (b < 0) return;
    rows[b].actualRows += n;
    rows[b].paddedRows += ranges[b].end - 1;
    rows[b].computedRows += ranges[b].end - 1;
    rows[b].runs++;
  });
  return rows;
}

