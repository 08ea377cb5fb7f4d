// SPDX-License-Identifier: Apache-2.0
// The run's summary (src/summary.js), in Node: the run bar's status and progress through a run's
// life (loading, running with repetitions, done, stopped, failed), the cards before and after a
// scheme has measured, and the notice for invalid schemes and refused requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cardsView, noticeText, runbarView } from '../src/summary.js';

const schemes = [
  { letter: 'A', label: 'pow2 <8..256>', color: '#111', ranges: [{ start: 1, end: 9 }, { start: 9, end: 17 }], expectedWaste: 1.25 },
  { letter: 'B', label: 'exact', color: '#222', ranges: [{ start: 1, end: 2 }] },
];
const lengths = [3, 12, 7, 16, 40];
const run = (o) => ({ model: 'encoder', lengths, runnable: [0, 1], repetitions: 1, schemes, results: [null, null], current: -1, status: 'running', ...o });

test('the run bar before any run says whether the module has loaded', () => {
  assert.deepEqual(runbarView(null, false), { status: 'Loading the WebAssembly module…', max: 1, value: 0, valueText: null, count: '', stopDisabled: true });
  assert.equal(runbarView(null, true).status, 'Ready: press Run');
});

test('the run bar counts requests over every runnable scheme and repetition', () => {
  const r = run({ repetitions: 2, current: 1, results: [{ done: 10 }, { done: 7 }] });
  const v = runbarView(r, true);
  assert.equal(v.max, 5 * 2 * 2);
  assert.equal(v.value, 17);
  assert.equal(v.valueText, '17 of 20 requests');
  assert.equal(v.count, '17 / 20 requests');
  assert.equal(v.stopDisabled, false);
  // Scheme B has done 7 of its 10 requests: the second of two repetitions of 5.
  assert.equal(v.status, 'Running scheme B (exact) on encoder (repetition 2 of 2)…');
  assert.equal(runbarView(run({ current: -1 }), true).status, 'Loading encoder…');
});

test('the run bar after a run: done, stopped or failed, and Stop disabled', () => {
  const done = runbarView(run({ status: 'done', repetitions: 3 }), true);
  assert.equal(done.status, 'Done: 5 requests through 2 schemes on encoder, 3 times each');
  assert.equal(done.stopDisabled, true);
  assert.equal(runbarView(run({ status: 'done', runnable: [0] }), true).status, 'Done: 5 requests through 1 scheme on encoder');
  assert.equal(runbarView(run({ status: 'stopped' }), true).status, 'Stopped. Press Run to start again.');
  assert.equal(runbarView(run({ status: 'error', message: 'compile failed: no memory' }), true).status, 'compile failed: no memory');
});

test('cards before a scheme has measured show the plan and the predicted waste, muted', () => {
  const v = cardsView({ scheme: schemes[0], result: null, lengths, run: null });
  assert.equal(v.hero, 'A · pow2 <8..256>');
  assert.deepEqual(v.waste, { text: '1.25×', value: null, muted: true });
  assert.equal(v.wasteSub, 'predicted from the ladder; run to measure');
  assert.deepEqual(v.requests, { text: '5', sub: 'planned' });
  assert.deepEqual(v.compiles, { text: '0 / 2', sub: 'buckets compiled' });
  assert.equal(v.time.text, '—');
  const bad = cardsView({ scheme: { ...schemes[1], ranges: null, error: 'ladder: 16 < 8' }, result: null, lengths: [], run: null });
  assert.equal(bad.wasteSub, 'scheme is invalid');
  assert.equal(bad.waste.text, '—');
  assert.equal(bad.requests.text, '—');
  assert.equal(bad.compiles.text, '—');
});

test('cards after a run carry the measured figures and the numbers behind them', () => {
  const stats = { runs: 5, hits: 3, compiles: 2, compileMs: 4, runMs: 6, paddedRows: 40, actualRows: 30, waste: 40 / 30, computeWaste: 1.1, arenaBytes: 2048, weightBytes: 1024 };
  const result = { stats, refused: 0, totalMs: 10, latency: { p50: 0.5, p90: 0.75, p99: 2 } };
  const v = cardsView({ scheme: schemes[0], result, lengths, run: { active: false } });
  assert.deepEqual(v.waste, { text: '1.33×', value: 40 / 30, muted: false });
  assert.equal(v.wasteSub, '40 padded rows for 30 real · 25% padding');
  assert.deepEqual(v.requests, { text: '5', value: 5, sub: 'of 5 · 3 cache hits' });
  assert.deepEqual(v.compiles, { text: '2 / 2', value: 2, sub: '4.00 ms compiling' });
  assert.equal(v.time.value, 10);
  assert.equal(v.time.sub, 'run 6.00 ms · compile 4.00 ms · per request p50 0.50 ms · p90 0.75 ms · p99 2.00 ms');
  assert.deepEqual(v.memory, { text: '3.00 KiB', value: 3072, sub: 'arena 2.00 KiB · weights 1.00 KiB' });
  // With active extent the computed waste follows; refusals replace the hit count.
  const active = cardsView({ scheme: schemes[0], result: { ...result, refused: 2 }, lengths, run: { active: true } });
  assert.equal(active.wasteSub, '40 padded rows for 30 real · 25% padding · computed 1.10×');
  assert.equal(active.requests.sub, '2 refused (no bucket)');
});

test('the notice names a failed run, an invalid scheme and the refused lengths', () => {
  assert.equal(noticeText({ scheme: schemes[0], result: null, run: null }), '');
  assert.equal(noticeText({ scheme: { ...schemes[1], error: 'ladder: 16 < 8' }, result: null, run: { status: 'error', message: 'boom' } }),
    'boom Scheme B is invalid: ladder: 16 < 8');
  const events = [20, 18, 20, 30, 19, 21, 22, 23, 24, 25].map((key) => ({ key, upper: null })).concat([{ key: 3, upper: 8 }]);
  const text = noticeText({ scheme: schemes[0], result: { refused: 10, events }, run: null });
  assert.equal(text, '10 requests were longer than the largest bucket (16) and refused: runPadded returned null and compiled nothing ' +
    '(lengths 18, 19, 20, 21, 22, 23, 24, 25, …). They count in stats().outOfRange, not in the waste.');
  const one = noticeText({ scheme: schemes[0], result: { refused: 1, events: [{ key: 17, upper: null }] }, run: null });
  assert.match(one, /^1 request was longer than the largest bucket \(16\) and refused: .*\(lengths 17\)\./);
});
