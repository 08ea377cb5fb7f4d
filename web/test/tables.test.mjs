// SPDX-License-Identifier: Apache-2.0
// The result tables' HTML (src/tables.js), in Node: the compare table's columns follow the run
// (active extent, refusals, repetitions), unmeasured cells show "…", names are escaped; the
// bucket table, its selector and the default bucket; a bucket's report before and after its
// graph's report arrives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketOptions, bucketReport, bucketTableRows, compareRows, compareTable, defaultBucket, escapeHtml, rangeText } from '../src/tables.js';

const headers = (head) => [...head.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1]);
const fieldValues = (html, field) => [...html.matchAll(new RegExp(`data-field="${field}" data-value="([^"]*)"`, 'g'))].map((m) => m[1]);

const stats = (o) => ({ compiles: 2, actualRows: 30, paddedRows: 40, waste: 40 / 30, computeWaste: 1.1, compileMs: 5, arenaBytes: 1000, weightBytes: 24, ...o });
const run = {
  active: false, repetitions: 1,
  schemes: [
    { letter: 'A', label: 'pow2 <8..256>', color: '#111', ranges: [{ start: 1, end: 9 }, { start: 9, end: 17 }] },
    { letter: 'B', label: 'bad "list"', color: '#222', error: 'ladder: 16 < 8' },
    { letter: 'C', label: 'exact', color: '#333', ranges: [{ start: 1, end: 2 }] },
  ],
  results: [
    { stats: stats(), final: true, totalMs: 12.5, repTotals: [12.5], refused: 0, latency: { p50: 0.1, p90: 0.2, p99: 0.3 } },
    null,
    { stats: stats({ compiles: 1 }), final: false, refused: 3 },
  ],
};

test('compare rows carry each scheme\'s stats, and nothing a scheme has not measured', () => {
  const rows = compareRows(run);
  assert.equal(rows.length, 3);
  assert.equal(rows[0].memory, 1024);
  assert.equal(rows[0].totalMs, 12.5);
  assert.equal(rows[0].p90, 0.2);
  assert.equal(rows[1].compiles, null);
  assert.equal(rows[1].error, 'ladder: 16 < 8');
  assert.equal(rows[2].totalMs, null, 'a scheme still running has no total');
  assert.equal(rows[2].refused, 3);
  assert.deepEqual(compareRows(null), []);
});

test('the compare table shows the columns the run needs', () => {
  const rows = compareRows(run);
  const plain = compareTable(rows.filter((r) => r.i === 0), { active: false, repetitions: 1, selected: 0 });
  assert.deepEqual(headers(plain.head), ['Scheme', 'Compiled', 'Real rows', 'Padded rows', 'Waste', 'Compile', 'Total', 'p50', 'p90', 'p99', 'Memory']);
  const all = compareTable(rows, { active: true, repetitions: 3, selected: 2 });
  assert.deepEqual(headers(all.head), ['Scheme', 'Compiled', 'Refused', 'Real rows', 'Padded rows', 'Waste', 'Computed', 'Compile',
    'Total (1st)', 'Total, mean ± sd of 3', 'p50', 'p90', 'p99', 'Memory']);
  // Raw values for the tests and the export; the unmeasured total of C shows "…".
  assert.deepEqual(fieldValues(all.body, 'totalMs'), ['12.5', '']);
  assert.match(all.body, /<td data-field="totalMs" data-value="">…<\/td>/);
  assert.match(all.body, /<tr data-scheme="2" class="selected">/);
  // The invalid scheme spans the row, its label and error escaped.
  assert.match(all.body, /<tr data-scheme="1"><td class="scheme-name" title="bad &quot;list&quot;">/);
  assert.match(all.body, /colspan="13" class="muted" style="text-align:left">invalid: ladder: 16 &lt; 8<\/td>/);
});

test('the bucket table, its selector and the default bucket', () => {
  const ranges = [{ start: 1, end: 9 }, { start: 9, end: 10 }, { start: 10, end: 17 }];
  const buckets = [
    { upper: 8, runs: 5, hits: 4, compiles: 1, actualRows: 20, paddedRows: 40, compileMs: 1, runMs: 2, arenaBytes: 2048, compiled: true },
    { upper: 9, runs: 9, hits: 8, compiles: 1, actualRows: 81, paddedRows: 81, compileMs: 1, runMs: 2, arenaBytes: 2048, compiled: true },
    { upper: 16, runs: 0, hits: 0, compiles: 0, actualRows: 0, paddedRows: 0, compileMs: 0, runMs: 0, arenaBytes: 0, compiled: false },
  ];
  assert.equal(rangeText(ranges[0]), '1–8');
  assert.equal(rangeText(ranges[1]), '9');
  assert.equal(defaultBucket(ranges, buckets), 1, 'the busiest');
  assert.equal(defaultBucket(ranges, null), 0);
  assert.equal(defaultBucket([], null), -1);
  const opts = bucketOptions(ranges, buckets);
  assert.match(opts, /<option value="0">1–8 → 8 · 5 requests<\/option>/);
  assert.match(opts, /<option value="2">10–16 → 16 · 0 requests · not compiled<\/option>/);
  const body = bucketTableRows(ranges, buckets, 1);
  assert.deepEqual(fieldValues(body, 'runs'), ['5', '9', '0']);
  assert.match(body, /<tr data-bucket="1" class="selected">/);
  assert.match(body, /<td data-field="waste">2.00×<\/td>/);
  assert.match(body, /<td data-field="waste">—<\/td>/, 'no real rows: no waste factor');
  assert.match(bucketTableRows(ranges, null, 0), /<tr data-bucket="0"><td>1–8<\/td><td>8<\/td><td colspan="9"[^>]*>not run yet/);
});

test('a bucket\'s report: facts first, then the kernels and passes of its compiled graph', () => {
  const range = { start: 9, end: 17 };
  assert.match(bucketReport(null, null, null, 'bad'), /The scheme is invalid\./);
  assert.match(bucketReport(null, null, null, null), /No bucket selected\./);
  const before = bucketReport(range, null, null, null);
  assert.match(before, /<dt>Keys<\/dt><dd>9–16 \(8 lengths\)<\/dd>/);
  assert.match(before, /<dt>Status<\/dt><dd>not run yet<\/dd>/);
  assert.match(before, /Nothing compiled here yet/);
  const b = { runs: 4, hits: 3, compiles: 1, actualRows: 40, paddedRows: 64, computedRows: 40, activeRuns: 4, compiled: true,
    compileMs: 2, runMs: 8, arenaBytes: 4096, paramBytes: 512, activeSupported: false, activeReason: 'a <reduce> over rows' };
  const waiting = bucketReport(range, b, null, null);
  assert.match(waiting, /<dt>Run<\/dt><dd>8.00 ms total · 2.00 ms per request<\/dd>/);
  assert.match(waiting, /not supported: a &lt;reduce&gt; over rows/);
  assert.match(waiting, /appears when this scheme finishes/);
  const report = {
    compileMs: 3, arenaBytes: 8192, intermediateBytes: 4096,
    kernels: [{ kernel: 'gemm[wasm]+bias' }, { kernel: 'layer_norm[wasm]' }, { kernel: 'gemm[wasm]+bias' }],
    passes: [{ name: 'fuse<epilogue>', changed: true, nodesBefore: 9, nodesAfter: 6, ms: 0.2 }],
  };
  const done = bucketReport(range, b, report, null);
  assert.match(done, /Fused kernels \(3 nodes, 2 kinds\)<\/h3><ul class="kernels"><li><span>gemm\[wasm\]\+bias<\/span><span>×2<\/span><\/li>/);
  assert.match(done, /<td>fuse&lt;epilogue&gt;<\/td><td class="changed">9 → 6<\/td>/);
});

test('escapeHtml covers text and both kinds of quoted attribute', () => {
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  assert.equal(escapeHtml(42), '42');
});
