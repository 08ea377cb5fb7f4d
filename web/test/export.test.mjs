// SPDX-License-Identifier: Apache-2.0
// The demo's exports in Node: CSV quoting (a list ladder's label has commas), mean and sd of the
// repetition totals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CSV_COLUMNS, csvField, exportCsv, exportJson, meanSd } from '../src/export.js';

test('CSV fields are quoted when they hold a comma, a quote or a line break', () => {
  assert.equal(csvField('list 16,32,64'), '"list 16,32,64"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('a\nb'), '"a\nb"');
  assert.equal(csvField('pow2 8–256'), 'pow2 8–256');
  assert.equal(csvField(null), '');
  assert.equal(csvField(1.5), '1.5');
});

test('mean and sample sd of the repetition totals', () => {
  assert.deepEqual(meanSd([]), { mean: null, sd: null });
  assert.deepEqual(meanSd([4]), { mean: 4, sd: 0 });
  const { mean, sd } = meanSd([2, 4, 4, 4, 5, 5, 7, 9]);
  assert.equal(mean, 5);
  assert.ok(Math.abs(sd - Math.sqrt(32 / 7)) < 1e-12);
});

test('a run exports one CSV row per scheme under the header, and JSON with everything', () => {
  const stats = { runs: 3, compiles: 2, hits: 1, actualRows: 30, paddedRows: 48, waste: 1.6, compileMs: 5, arenaBytes: 10, weightBytes: 20 };
  const run = {
    status: 'done', model: 'mlp', active: false, repetitions: 2, lengths: [10, 10, 10],
    schemes: [
      { letter: 'A', label: 'list 16,32', spec: { kind: 'list' }, error: null, ranges: [{ start: 1, end: 17 }, { start: 17, end: 33 }], expectedWaste: 1.6 },
      { letter: 'B', label: 'pow2 8–256', spec: { kind: 'pow2' }, error: 'Largest extent must be a whole number', ranges: null },
    ],
    results: [{ final: true, stats, refused: 0, totalMs: 12, repTotals: [12, 10], latency: { p50: 1, p90: 2, p99: 9, count: 6 } }, null],
  };
  const lines = exportCsv(run).split('\r\n');
  assert.equal(lines[0], CSV_COLUMNS.join(','));
  assert.equal(lines.length, 4);  // header, two schemes, the final empty line
  assert.ok(lines[1].startsWith('A,"list 16,32",2,3,0,2,1,30,48,1.6,5,12,2,11,'));
  assert.ok(lines[2].startsWith('B,pow2 8–256,,,,,'));
  assert.ok(lines[2].endsWith(',Largest extent must be a whole number'));
  const json = JSON.parse(exportJson(run, { url: 'http://x/?model=mlp' }));
  assert.equal(json.url, 'http://x/?model=mlp');
  assert.deepEqual(json.schemes[0].stats, stats);
  assert.equal(json.schemes[0].totalMeanMs, 11);
  assert.equal(json.schemes[1].stats, null);
});
