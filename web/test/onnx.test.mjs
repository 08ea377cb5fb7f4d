// SPDX-License-Identifier: Apache-2.0
// The demo takes a model of the user's own: an .onnx file chosen with the file input (and one
// dropped on the drop zone), loaded by loadOnnx in the worker. Checks, in headless Chromium: a file
// that is not a model and a wrong option are reported on the page; the frontend's small test file
// loads, becomes the selected model, and a run through it shows its buckets and waste like the
// bundled models (the bucket table's requests add up to the traffic); the console stays clean.
//
//   bash scripts/web-test          (builds first)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withDemo } from '../chromium.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const buildDir = process.env.RUNGS_WEB_DIR ?? here('../../build/web');
const onnxFile = here('../../tests/import/onnx/matmul_add.onnx');
const WAIT = 180_000;

async function finishedRun(page, after) {
  const handle = await page.waitForFunction((id) => {
    const r = window.__rungs;
    return r && r.runId > id && (r.status === 'done' || r.status === 'error') && structuredClone(r);
  }, after, { timeout: WAIT, polling: 100 });
  return handle.jsonValue();
}

test('the demo loads a chosen or dropped .onnx file and runs it', { timeout: 600_000 }, async (t) => {
  assert.ok(existsSync(`${buildDir}/index.html`), `${buildDir}/index.html missing: bash scripts/web --build-only`);
  await withDemo(buildDir, {}, async ({ url, problems, newPage }) => {
    const page = await newPage();
    await page.goto(`${url}?autorun=0`);
    await page.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });
    assert.equal(await page.isHidden('#onnx-choice'), true, 'no .onnx choice before a file is loaded');

    // Not an ONNX model: a clear error, no new model.
    await page.setInputFiles('#onnx-file', { name: 'junk.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from([1, 2, 3, 4, 5, 6]) });
    await page.waitForSelector('#onnx-status.error', { timeout: WAIT });
    assert.match(await page.textContent('#onnx-status'), /junk\.onnx: not an ONNX/);
    assert.equal(await page.isHidden('#onnx-choice'), true);
    await page.setInputFiles('#onnx-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    assert.match(await page.textContent('#onnx-status'), /notes\.txt: not an \.onnx file/);

    // A bucket dim the file does not have: the frontend's message, then fixed with the boxes.
    const bytes = readFileSync(onnxFile);
    await page.fill('#onnx-bucket-dim', 'tokens');
    await page.setInputFiles('#onnx-file', { name: 'matmul_add.onnx', mimeType: 'application/octet-stream', buffer: bytes });
    await page.waitForFunction(() => /tokens/.test(document.getElementById('onnx-status').textContent) &&
      document.getElementById('onnx-status').classList.contains('error'), null, { timeout: WAIT });
    await page.fill('#onnx-fix', 'batch=x');
    await page.click('#onnx-reload');
    assert.match(await page.textContent('#onnx-status'), /Fix: 'batch=x' is not name=value/);

    // Loaded: selected, described, and a run shows its buckets like a bundled model's.
    await page.fill('#onnx-bucket-dim', '');
    await page.fill('#onnx-fix', 'batch=1');
    const before = await page.evaluate(() => window.__rungs.runId ?? 0);
    await page.click('#onnx-reload');
    await page.waitForSelector('#onnx-status.ok', { timeout: WAIT });
    assert.match(await page.textContent('#onnx-status'), /Loaded matmul_add\.onnx, bucketed on 'seq'/);
    assert.equal(await page.isChecked('input[name="model"][value="onnx"]'), true);
    assert.match(await page.textContent('#model-description'), /matmul_add\.onnx: 15 parameters; inputs x \(float32\).*Bucket dimension: seq/);
    await page.click('#run');
    const snap = await finishedRun(page, before);
    assert.equal(snap.status, 'done', `the run ended as ${snap.status}`);
    assert.equal(snap.model, 'onnx');
    const rows = await page.evaluate(() => [...document.querySelectorAll('#bucket-table tbody tr')].map((tr) => {
      const row = {};
      for (const td of tr.querySelectorAll('td[data-value]')) row[td.dataset.field] = Number(td.dataset.value);
      return row;
    }));
    assert.ok(rows.length > 0, 'the bucket table has rows');
    const st = snap.schemes[0].stats;
    t.diagnostic(`matmul_add.onnx: ${snap.lengths.length} requests, ${rows.length} buckets, waste ${st.waste}`);
    assert.ok(st.runs > 0, 'requests ran');
    assert.equal(st.hits + st.compiles, st.runs, 'every request a hit or a compile');
    assert.equal(st.compiles, rows.length, 'one compile per bucket shown');
    assert.ok(Math.abs(st.waste - st.paddedRows / st.actualRows) < 1e-12 && st.waste > 1, `waste ${st.waste}`);

    // Dropped rather than chosen: the same file through the drop zone.
    const dropped = await page.evaluateHandle((data) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(data)], 'dropped.onnx'));
      return dt;
    }, [...bytes]);
    await page.dispatchEvent('#onnx-drop', 'drop', { dataTransfer: dropped });
    await page.waitForFunction(() => /Loaded dropped\.onnx/.test(document.getElementById('onnx-status').textContent), null, { timeout: WAIT });
    assert.equal(await page.textContent('#onnx-choice-name'), 'dropped.onnx');

    assert.deepEqual(problems, [], 'no console errors or warnings, no page errors, no failed requests');
  });
});
