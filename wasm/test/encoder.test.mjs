// SPDX-License-Identifier: Apache-2.0
// The bundled encoder loaded from bytes (as a browser would: JSON text + safetensors Uint8Array),
// bucketed with the power-of-two ladder, equals the native build on the same requests to 1e-5
// relative. The native values come from tests/model/wasm_fixture_test.cpp, which scripts/test runs
// first; it passes the paths in RUNGS_EXAMPLES_DIR and RUNGS_FIXTURE_PATH.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { BucketedCompileCache, Device, loadModel, Model } from 'rungs';

import { assertRungsError, maxRelError } from './helpers.mjs';

const examples = process.env.RUNGS_EXAMPLES_DIR;
const fixturePath = process.env.RUNGS_FIXTURE_PATH;
const missing = !examples || !fixturePath;
const why = 'set RUNGS_EXAMPLES_DIR and RUNGS_FIXTURE_PATH (scripts/test does)';

function loadEncoder() {
  return loadModel(readFileSync(`${examples}/models/encoder.json`, 'utf8'),
    new Uint8Array(readFileSync(`${examples}/models/encoder.safetensors`)), 'encoder');
}

// The request the native fixture ran at `length`: ids spread over the vocab, mask all ones.
function request(length) {
  const ids = new Float32Array(length);
  for (let i = 0; i < length; ++i) ids[i] = (i * 379 + 11) % 1000;
  return [{ name: 'ids', data: ids, inner: 1 }, { name: 'mask', data: new Float32Array(length).fill(1), inner: 1 }];
}

test('the encoder from bytes describes itself', { skip: missing && why }, () => {
  const model = loadEncoder();
  try {
    assert.equal(model.name(), 'encoder');
    assert.equal(model.bucketDim(), 'seq');
    assert.ok(model.hasWeights());
    assert.deepEqual(model.inputs(12), [{ name: 'ids', shape: [1, 12] }, { name: 'mask', shape: [1, 12] }]);
    assert.deepEqual(model.outputNames(), ['embedding']);
    const params = model.params();
    assert.ok(params.length > 10);
    assert.equal(model.paramCount(), params.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0));
    // The bytes round-trip: the weights it hands back load again to the same description (the
    // bundled encoder stores bf16; asked for f32, every tensor comes back F32).
    assert.ok(params.every((p) => p.dtype === 'BF16'));
    const again = loadModel(model.toJson(), model.weightsBytes('BF16'), 'again');
    assert.deepEqual(again.params(), params);
    const wide = loadModel(model.toJson(), model.weightsBytes(), 'wide');
    assert.deepEqual(wide.params(), params.map((p) => ({ ...p, dtype: 'F32' })));
    again.delete();
    wide.delete();
  } finally {
    model.delete();
  }
});

test('bucketed encoder outputs equal the native build to 1e-5 relative', { skip: missing && why }, () => {
  const fixture = JSON.parse(readFileSync(fixturePath, 'utf8'));
  assert.equal(fixture.requests.length, 13);
  const model = loadEncoder();
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 256);
  try {
    let worst = 0;
    for (const { length, upper, embedding } of fixture.requests) {
      // The Model itself as build: the module and weights are built in C++, no copy through JS.
      const run = cache.runPadded(length, length, model, request(length), []);
      assert.equal(run.upper, upper, `bucket of length ${length}`);
      assert.equal(run.outputs[0].length, embedding.length);
      const err = maxRelError(run.outputs[0], embedding);
      assert.ok(err <= 1e-5, `length ${length}: max relative error ${err}`);
      worst = Math.max(worst, err);
    }
    console.log(`encoder, ${fixture.requests.length} requests, wasm vs native: max relative error ${worst.toExponential(2)}`);
    assert.equal(cache.compiledCount(), 6);
    // A JS build returning [HirModule, params] computes the same values.
    const other = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 256);
    const { length, embedding } = fixture.requests[4];
    const run = other.runPadded(length, length, (u) => model.build(u), request(length), []);
    assert.ok(maxRelError(run.outputs[0], embedding) <= 1e-5);
    other.delete();
  } finally {
    cache.delete();
    model.delete();
  }
});

test('malformed model bytes are ParseErrors naming the source', { skip: missing && why }, () => {
  const json = readFileSync(`${examples}/models/encoder.json`, 'utf8');
  const weights = new Uint8Array(readFileSync(`${examples}/models/encoder.safetensors`));
  assertRungsError(() => loadModel('{"name": ', weights, 'broken'), 'ParseError', /broken/);
  assertRungsError(() => loadModel(json, weights.subarray(0, 100), 'cut'), 'ParseError', /cut/);
  assertRungsError(() => loadModel(json, new Uint8Array(8), 'zero'), 'ParseError', /zero/);
  assertRungsError(() => loadModel(json, [1, 2, 3]), 'InvalidArgument', /Uint8Array/);
  assertRungsError(() => Model.parse('[]', 'list.json'), 'ParseError', /list\.json/);
  // The module still loads models after all that.
  const model = loadModel(new TextEncoder().encode(json), weights);
  assert.equal(model.name(), 'encoder');
  model.delete();
});
