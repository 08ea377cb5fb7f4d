// SPDX-License-Identifier: Apache-2.0
// loadOnnx (docs/onnx.md): ONNX files from bytes in the wasm build.
//  - the frontend's own small test file (tests/import/onnx/matmul_add.onnx): the Model it gives,
//    its layouts, outputs against values computed here, and the options;
//  - every error a caller can cause: bytes that are not a model, options of the wrong kind,
//    ambiguous or unknown symbols, external data not given; nothing leaks across them;
//  - the committed encoders (tests/models/onnx/<name>.onnx + .golden.json) at every batch-1 golden
//    length through a BucketedCompileCache with the power-of-two ladder, padded and with active
//    extent: 1e-4 relative to torch and to onnxruntime-web (bench/wasm's pinned package) on the
//    same file in the same run.
// scripts/test passes the folders: RUNGS_ONNX_TEST_DIR (tests/import/onnx), RUNGS_ONNX_MODELS_DIR
// (tests/models/onnx) and RUNGS_ORT_WEB (bench/wasm/node_modules/onnxruntime-web).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { BucketedCompileCache, Device, heapStats, loadOnnx, Model } from 'rungs';

import { assertRungsError, maxRelError } from './helpers.mjs';

const testDir = process.env.RUNGS_ONNX_TEST_DIR;
const modelsDir = process.env.RUNGS_ONNX_MODELS_DIR;
const ortPath = process.env.RUNGS_ORT_WEB;
const noTestDir = !testDir && 'set RUNGS_ONNX_TEST_DIR (scripts/test does)';
const TOL = 1e-4;

const matmulAdd = () => new Uint8Array(readFileSync(join(testDir, 'matmul_add.onnx')));

// matmul_add.onnx: y = x @ W + b with W = (arange(12).reshape(4, 3) - 6) / 8, b = [0.5, -1, 2]
// (tests/import/onnx/make_test_models.py).
function matmulAddReference(x, rows) {
  const b = [0.5, -1, 2];
  const y = new Float32Array(rows * 3);
  for (let r = 0; r < rows; ++r) {
    for (let j = 0; j < 3; ++j) {
      let s = b[j];
      for (let k = 0; k < 4; ++k) s += x[r * 4 + k] * ((k * 3 + j - 6) / 8);
      y[r * 3 + j] = s;
    }
  }
  return y;
}

test('loadOnnx gives a Model like loadModel: layouts, outputs, bucketed runs', { skip: noTestDir }, () => {
  const model = loadOnnx(matmulAdd(), { name: 'mm' });
  try {
    assert.ok(model instanceof Model);
    assert.equal(model.bucketDim(), 'seq');  // batch is fixed to 1 by default
    assert.deepEqual(model.inputs(5), [{ name: 'x', shape: [1, 5, 4] }]);
    assert.deepEqual(model.outputNames(), ['y']);
    const [layout] = model.inputLayouts(5);
    assert.deepEqual({ ...layout }, { name: 'x', shape: [1, 5, 4], followsBucket: true, rowValues: 4, dtype: 'float32', role: 'values' });
    assert.deepEqual(model.outputInners(), [3]);
    assert.equal(model.paramCount(), 15);
    const synthetic = model.syntheticInputs(3);
    assert.equal(synthetic.length, 1);
    assert.equal(synthetic[0].length, 12);
    const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 4, 64);
    try {
      for (const rows of [1, 3, 4, 7, 33]) {
        const x = Float32Array.from({ length: rows * 4 }, (_, i) => ((i * 7) % 13) / 4 - 1.5);
        const run = cache.runPadded(rows, rows, model, [{ name: 'x', data: x, inner: 4 }], model.outputInners());
        assert.equal(run.outputs[0].length, rows * 3);
        assert.ok(maxRelError(run.outputs[0], matmulAddReference(x, rows)) <= 1e-6, `rows ${rows}`);
      }
      assert.equal(cache.compiledCount(), 3);  // buckets 4 (rows 1, 3, 4), 8 (7) and 64 (33)
    } finally {
      cache.delete();
    }
  } finally {
    model.delete();
  }
});

test('loadOnnx options: fix, bucketDim, ArrayBuffer bytes', { skip: noTestDir }, () => {
  const bytes = matmulAdd();
  const two = loadOnnx(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), { fix: { batch: 2 } });
  assert.deepEqual(two.inputs(3), [{ name: 'x', shape: [2, 3, 4] }]);
  two.delete();
  // batch bucketed, seq fixed: the other way round.
  const byBatch = loadOnnx(bytes, { bucketDim: 'batch', fix: { seq: 6 } });
  assert.equal(byBatch.bucketDim(), 'batch');
  assert.deepEqual(byBatch.inputs(3), [{ name: 'x', shape: [3, 6, 4] }]);
  byBatch.delete();
});

test('loadOnnx errors: each with its code and message, nothing leaked', { skip: noTestDir }, () => {
  const bytes = matmulAdd();
  const attempt = () => {
    assertRungsError(() => loadOnnx(new Uint8Array([1, 2, 3, 4, 5]), { name: 'junk.onnx' }), 'ParseError', /junk\.onnx/);
    assertRungsError(() => loadOnnx(bytes.subarray(0, bytes.length - 20)), 'ParseError', /model/);
    assertRungsError(() => loadOnnx(new Uint8Array(0)), 'ParseError');
    assertRungsError(() => loadOnnx('model.onnx'), 'InvalidArgument', /loadOnnx: bytes .* must be a Uint8Array or an ArrayBuffer, got the string/);
    assertRungsError(() => loadOnnx([8, 1]), 'InvalidArgument', /Uint8Array/);
    assertRungsError(() => loadOnnx(bytes, 'seq'), 'InvalidArgument', /options must be an object/);
    assertRungsError(() => loadOnnx(bytes, { bucket: 'seq' }), 'InvalidArgument', /unknown option 'bucket' \(the options are bucketDim, fix, externalData, name\)/);
    assertRungsError(() => loadOnnx(bytes, { bucketDim: 3 }), 'InvalidArgument', /options\.bucketDim must be a string/);
    assertRungsError(() => loadOnnx(bytes, { fix: [['batch', 1]] }), 'InvalidArgument', /options\.fix must be an object/);
    assertRungsError(() => loadOnnx(bytes, { fix: { batch: 1.5 } }), 'InvalidArgument', /options\.fix\.batch must be a whole number/);
    assertRungsError(() => loadOnnx(bytes, { externalData: { 'w.bin': [1, 2] } }), 'InvalidArgument', /externalData\['w\.bin'\] must be a Uint8Array/);
    // What the frontend refuses: a symbol the model does not have, nothing left to bucket.
    assertRungsError(() => loadOnnx(bytes, { bucketDim: 'tokens' }), 'InvalidArgument', /tokens/, /seq/);
    assertRungsError(() => loadOnnx(bytes, { fix: { width: 3 } }), 'InvalidArgument', /width/, /seq/);
  };
  attempt();  // the first round may grow pools the runtime keeps
  const before = heapStats().allocatedBytes;
  for (let i = 0; i < 3; ++i) attempt();
  assert.equal(heapStats().allocatedBytes, before, 'bytes still allocated after refused loads');
  // And the module still loads models.
  loadOnnx(bytes).delete();
});

// ---- the committed encoders, against torch and onnxruntime-web ---------------------------------

const ENCODERS = ['bert_post_ln', 'sentence_pre_ln', 'distilbert_classifier'];
const haveModels = modelsDir && ENCODERS.every((n) => existsSync(join(modelsDir, `${n}.onnx`)));
const skipModels = (!haveModels && `set RUNGS_ONNX_MODELS_DIR to the folder of the committed encoders (${ENCODERS.join(', ')})`) ||
  (!(ortPath && existsSync(ortPath)) && 'set RUNGS_ORT_WEB to onnxruntime-web (bench/wasm/node_modules/onnxruntime-web)');

// max |a - b| / max(1, |b|) <= TOL, naming the case and the worst value.
function agree(what, a, b) {
  assert.equal(a.length, b.length, `${what}: ${a.length} values vs ${b.length}`);
  let worst = 0;
  let at = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i]));
    if (!(d <= worst)) [worst, at] = [d, i];
  }
  assert.ok(worst <= TOL, `${what}: differ at [${at}]: ${a[at]} vs ${b[at]} (relative ${worst.toExponential(2)} > ${TOL})`);
  return worst;
}

for (const name of ENCODERS) {
  test(`${name}: loadOnnx, bucketed (pow2 8..256, padded and active extent), agrees with torch and onnxruntime-web`,
    { skip: skipModels }, async () => {
      const ort = await import(pathToFileURL(join(ortPath, 'dist/ort.node.min.mjs')).href)
        .catch(() => import(pathToFileURL(ortPath).href));
      ort.env.wasm.numThreads = 1;
      ort.env.logLevel = 'error';
      const g = JSON.parse(readFileSync(join(modelsDir, `${name}.golden.json`), 'utf8'));
      const bytes = new Uint8Array(readFileSync(join(modelsDir, `${name}.onnx`)));
      const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
      const model = loadOnnx(bytes, { name });
      const names = g.inputs.map((i) => i.name);
      let checked = 0;
      let worstTorch = 0;
      let worstOrt = 0;
      let activeRuns = 0;
      try {
        assert.equal(model.bucketDim(), 'seq');
        assert.deepEqual(model.inputs(7).map((i) => i.name), names);
        assert.deepEqual(model.outputNames(), g.outputs);
        const layouts = model.inputLayouts(7);
        assert.ok(layouts.every((l) => l.rowValues === 1 && l.dtype === 'int64'), JSON.stringify(layouts));
        const outputInners = model.outputInners();
        for (const active of [false, true]) {
          const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 256).setActiveExtent(active);
          try {
            for (const c of g.cases.filter((x) => x.batch === 1)) {
              const feeds = Object.fromEntries(names.map((n) =>
                [n, new ort.Tensor('int64', BigInt64Array.from(c.inputs[n].data, BigInt), c.inputs[n].shape)]));
              const theirs = await session.run(feeds);
              const inputs = names.map((n) => ({ name: n, data: Float32Array.from(c.inputs[n].data), inner: 1 }));
              const run = cache.runPadded(c.length, c.length, model, inputs, outputInners);
              assert.ok(run, `${name} length ${c.length}: no bucket`);
              g.outputs.forEach((out, i) => {
                const what = `${name} length ${c.length} (${active ? 'active extent' : 'padded'}): ${out}`;
                worstTorch = Math.max(worstTorch, agree(`${what}, rungs vs torch`, run.outputs[i], c.outputs[out].data));
                worstOrt = Math.max(worstOrt, agree(`${what}, rungs vs onnxruntime-web`, run.outputs[i], theirs[out].data));
                ++checked;
              });
            }
            // With active extent every request must really run at its real rows (no fallback
            // to padding, docs/active-extent.md), and agree all the same.
            if (active) {
              const st = cache.stats();
              activeRuns += st.activeRuns;
              const why = [...new Set(st.buckets.map((b) => b.activeReason).filter(Boolean))].join('; ');
              assert.equal(st.activeRuns, st.runs, `${name}: every run with active extent${why ? ` (else: ${why})` : ''}`);
              assert.ok(st.buckets.every((b) => b.activeDiffersFromPadding === ''), `${name} masks its padding`);
            }
          } finally {
            cache.delete();
          }
        }
      } finally {
        model.delete();
        await session.release();
      }
      assert.equal(checked, 2 * g.outputs.length * g.cases.filter((x) => x.batch === 1).length);
      assert.equal(activeRuns, g.cases.filter((x) => x.batch === 1).length);
      console.log(`${name}: ${checked} outputs, max relative difference ${worstTorch.toExponential(2)} vs torch, ` +
        `${worstOrt.toExponential(2)} vs onnxruntime-web; ${activeRuns} requests ran with active extent`);
    });
}
