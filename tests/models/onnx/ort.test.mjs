// SPDX-License-Identifier: Apache-2.0
// tests/models/onnx/ort.test.mjs: the committed ONNX encoders (scripts/export-onnx-models.py)
// through onnxruntime-node (bench/native's pinned package, CPU EP) at every golden case, against
// the torch outputs in <name>.golden.json: |ort - torch| <= 1e-4 max(1, |torch|) on every value.
// With RUNGS_NODE_ADDON (the rungs_node add-on of a build that has the ONNX frontend), rungs runs
// each case too, through its bucketed cache (power-of-two 8..256, padded and with active extent),
// and must agree with ORT to the same tolerance.
//   node --test tests/models/onnx/ort.test.mjs      (ctest: onnx_ort_agreement)
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../../..');
const TOL = 1e-4;
export const MODELS = ['bert_post_ln', 'sentence_pre_ln', 'distilbert_classifier'];  // padding-safe: bucketed
const UNMASKED = 'unmasked_mean_encoder';  // no mask: NOT padding-safe; exact at exact lengths and with active extent

// onnxruntime-node lives in bench/native (its lock file pins it; scripts/setup installs it).
const ort = createRequire(join(repo, 'bench/native/package.json'))('onnxruntime-node');
ort.env.logLevel = 'error';

/** Max of |a - b| / max(1, |b|); throws naming the case and the first worst value past TOL. */
export function agree(what, a, b, tol = TOL) {
  assert.equal(a.length, b.length, `${what}: ${a.length} values vs ${b.length}`);
  let worst = 0, at = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i]));
    if (!(d <= worst)) [worst, at] = [d, i];
  }
  assert.ok(worst <= tol, `${what}: differ at [${at}]: ${a[at]} vs ${b[at]} (relative ${worst.toExponential(2)} > ${tol})`);
  return worst;
}

const golden = (name) => JSON.parse(readFileSync(join(here, `${name}.golden.json`), 'utf8'));
const int64 = ({ shape, data }) => new ort.Tensor('int64', BigInt64Array.from(data, BigInt), shape);
const label = (name, c) => `${name} batch ${c.batch} length ${c.length}`;

for (const name of [...MODELS, UNMASKED]) {
  test(`${name}: onnxruntime-node agrees with torch at every golden case`, async () => {
    const g = golden(name);
    assert.ok(g.cases.length >= 5, 'the golden holds the lengths 1, 3, 8, 17, 40 and more');
    const session = await ort.InferenceSession.create(join(here, g.model), { executionProviders: ['cpu'], intraOpNumThreads: 1 });
    try {
      assert.deepEqual(session.inputNames, g.inputs.map((i) => i.name));
      assert.deepEqual(session.outputNames, g.outputs);
      for (const c of g.cases) {
        const feeds = Object.fromEntries(Object.entries(c.inputs).map(([n, t]) => [n, int64(t)]));
        const got = await session.run(feeds);
        for (const out of g.outputs) {
          assert.deepEqual(got[out].dims.map(Number), c.outputs[out].shape, `${label(name, c)}: ${out} shape`);
          agree(`${label(name, c)}: ${out}, ORT vs torch`, got[out].data, c.outputs[out].data);
        }
      }
    } finally {
      await session.release();
    }
  });
}

// rungs on the same files (the Node add-on of bench/native, a native build with the ONNX frontend):
// every batch-1 case through a BucketedCompileCache with the power-of-two ladder 8..256, padded
// and with active extent, against ORT and torch; the batch-2 case loaded with fix batch=2 and
// compiled at its length.
const addonPath = process.env.RUNGS_NODE_ADDON;
const rungs = addonPath ? createRequire(import.meta.url)(addonPath) : null;
const pow2 = [[1, 9], [9, 17], [17, 33], [33, 65], [65, 129], [129, 257]];
for (const name of MODELS) {
  test(`${name}: rungs, bucketed (pow2 8..256, padded and active extent), agrees with ORT and torch`,
    { skip: !rungs && 'RUNGS_NODE_ADDON is not set (a build without the Node add-on or the ONNX frontend)' }, async (t) => {
      const g = golden(name);
      const path = join(here, g.model);
      const model = rungs.loadModel(path, {});
      const session = await ort.InferenceSession.create(path, { executionProviders: ['cpu'], intraOpNumThreads: 1 });
      const info = rungs.modelInfo(model);
      assert.equal(info.bucketDim, 'seq');
      assert.deepEqual(info.inputs.map((i) => i.name), g.inputs.map((i) => i.name));
      assert.deepEqual(info.outputs.map((o) => o.name), g.outputs);
      const inners = info.inputs.map((i) => i.rowValues), outInners = info.outputs.map((o) => o.rowValues);
      assert.ok(inners.every((v) => v === 1), `every input is one value per token: ${inners}`);
      let checked = 0;
      try {
        for (const active of [false, true]) {
          const cache = rungs.cache(model, pow2, active, 1);
          for (const c of g.cases.filter((x) => x.batch === 1)) {
            const feeds = Object.fromEntries(Object.entries(c.inputs).map(([n, t]) => [n, int64(t)]));
            const theirs = await session.run(feeds);
            const names = g.inputs.map((i) => i.name);
            const mine = rungs.cacheRun(cache, model, c.length, names, names.map((n) => Float32Array.from(c.inputs[n].data)), inners, outInners);
            assert.ok(mine, `${label(name, c)}: no bucket`);
            g.outputs.forEach((out, i) => {
              const what = `${label(name, c)} (${active ? 'active extent' : 'padded'}): ${out}`;
              agree(`${what}, rungs vs ORT`, mine[i], theirs[out].data);
              agree(`${what}, rungs vs torch`, mine[i], c.outputs[out].data);
              ++checked;
            });
          }
          // Active extent must really have run (no fallback to padding) at every length.
          const stats = JSON.parse(rungs.cacheStats(cache));
          if (active) {
            const why = [...new Set(stats.buckets.map((b) => b.active_reason).filter(Boolean))].join('; ');
            t.diagnostic(`${name}: active extent ran ${stats.totals.active_runs} of ${stats.totals.runs} runs${why ? ` (else: ${why})` : ''}`);
            assert.equal(stats.totals.active_runs, stats.totals.runs, `${name}: every run with active extent${why ? ` (else: ${why})` : ''}`);
          }
        }
        // Batch 2: a fixed batch dim, compiled at the case's length.
        const c = g.cases.find((x) => x.batch === 2);
        const model2 = rungs.loadModel(path, { fix: { batch: 2 } });
        const compiled = rungs.compile(model2, c.length, 1);
        const names = g.inputs.map((i) => i.name);
        const mine = rungs.run(compiled, names, names.map((n) => Float32Array.from(c.inputs[n].data)));
        g.outputs.forEach((out, i) => agree(`${label(name, c)}: ${out}, rungs vs torch`, mine[i], c.outputs[out].data));
      } finally {
        await session.release();
      }
      assert.equal(checked, 2 * g.outputs.length * g.cases.filter((x) => x.batch === 1).length);
    });
}

test(`${UNMASKED}: rungs compiled at each golden length and with active extent agrees with torch; padded to a bucket it does not`,
  { skip: !rungs && 'RUNGS_NODE_ADDON is not set' }, () => {
    const g = golden(UNMASKED);
    const model = rungs.loadModel(join(here, g.model), {});
    const names = g.inputs.map((i) => i.name);
    for (const c of g.cases.filter((x) => x.batch === 1)) {
      const mine = rungs.run(rungs.compile(model, c.length, 1), names, names.map((n) => Float32Array.from(c.inputs[n].data)));
      g.outputs.forEach((out, i) => agree(`${label(UNMASKED, c)}: ${out}, rungs (exact) vs torch`, mine[i], c.outputs[out].data));
    }
    // Padded: the unmasked mean takes the padding in, so the bucket's answer is wrong, as
    // `rungs inspect --check-padding` reports.
    const c = g.cases.find((x) => x.batch === 1 && x.length === 3);
    const cache = rungs.cache(model, pow2, false, 1);
    const info = rungs.modelInfo(model);
    const y = rungs.cacheRun(cache, model, 3, names, names.map((n) => Float32Array.from(c.inputs[n].data)),
      info.inputs.map((i) => i.rowValues), info.outputs.map((o) => o.rowValues));
    assert.throws(() => agree('padded mean', y[1], c.outputs.mean.data), /differ at/);
    // With active extent each length runs as if compiled at it: exact at every golden length.
    const active = rungs.cache(model, pow2, true, 1);
    const cases = g.cases.filter((x) => x.batch === 1);
    for (const k of cases) {
      const out = rungs.cacheRun(active, model, k.length, names, names.map((n) => Float32Array.from(k.inputs[n].data)),
        info.inputs.map((i) => i.rowValues), info.outputs.map((o) => o.rowValues));
      g.outputs.forEach((o, i) => agree(`${label(UNMASKED, k)}: ${o}, rungs (active extent) vs torch`, out[i], k.outputs[o].data));
    }
    const stats = JSON.parse(rungs.cacheStats(active));
    assert.equal(stats.totals.active_runs, cases.length, JSON.stringify(stats.buckets.map((b) => b.active_reason)));
    assert.ok(stats.buckets.some((b) => /without a key mask|mean over rows/.test(b.active_differs_from_padding ?? '')));
  });

// The check must be able to fail: a perturbed value past the tolerance is caught.
test('agree() fails past 1e-4 relative and passes within it', () => {
  const b = Float32Array.from([1, -2, 300]);
  assert.equal(agree('same', b, b), 0);
  assert.ok(agree('within', Float32Array.from([1, -2, 300.02]), b) <= TOL);
  assert.throws(() => agree('past', Float32Array.from([1, -2.001, 300]), b), /past: differ at \[1\]/);
});
