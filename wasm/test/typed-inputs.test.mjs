// SPDX-License-Identifier: Apache-2.0
// Integer and boolean inputs (BigInt64Array, Int32Array, Uint8Array wherever a Float32Array input
// is taken: run, runRows, runPadded, runPaddedMixed), converted exactly to f32; an integer past
// 2^24 is a coded error naming the input and the value. And the comparison / where / pow / erf /
// sin / cos / logicalNot graph ops.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { BucketedCompileCache, Device, Graph, Session } from 'rungs';

import { assertRungsError } from './helpers.mjs';

function mulGraph(shape) {
  const g = new Graph();
  g.output('y', g.mul(g.input('ids', shape), g.input('mask', shape)));
  return g;
}

for (const device of [Device.Cpu, Device.Reference]) {
  test(`run and runRows take BigInt64Array, Int32Array and Uint8Array (${device === Device.Cpu ? 'cpu' : 'reference'})`, () => {
    const session = new Session(device);
    const graph = mulGraph([2, 3]);
    const compiled = session.compile(graph);
    try {
      const ids = new BigInt64Array([0n, 1n, -7n, 16777216n, -16777216n, 12345n]);
      const mask = new Uint8Array([1, 0, 255, 1, 1, 0]);  // any non-zero byte is true
      assert.deepEqual(Array.from(compiled.run({ ids, mask })[0]), [0, 0, -7, 16777216, -16777216, 0]);
      const i32 = new Int32Array([3, 1, -7, 16777216, -16777216, 42]);
      assert.deepEqual(Array.from(compiled.run({ ids: i32, mask: new Float32Array(6).fill(1) })[0]),
        [3, 1, -7, 16777216, -16777216, 42]);
      // A view into a larger buffer (byteOffset != 0) is read from its own offset.
      const wide = new BigInt64Array([99n, 5n, 6n, 7n, 8n, 9n, 10n]);
      const view = new BigInt64Array(wide.buffer, 8, 6);
      assert.deepEqual(Array.from(compiled.run({ ids: view, mask: new Int32Array(6).fill(1) })[0]), [5, 6, 7, 8, 9, 10]);
      assertRungsError(() => compiled.run({ ids: new BigInt64Array([0n, 1n, 2n, 3n, 4n, 16777217n]), mask }),
        'InvalidArgument', /run: input 'ids' holds 16777217 at index 5, which f32 cannot hold exactly/);
      assertRungsError(() => compiled.run({ ids: new BigInt64Array([-(1n << 62n), 0n, 0n, 0n, 0n, 0n]), mask }),
        'InvalidArgument', /holds -4611686018427387904 at index 0/);
      assertRungsError(() => compiled.run({ ids: new Int32Array([0, -16777217, 0, 0, 0, 0]), mask }),
        'InvalidArgument', /holds -16777217 at index 1/);
      assertRungsError(() => compiled.run({ ids: new Float64Array(6), mask }),
        'InvalidArgument', /Float32Array, BigInt64Array, Int32Array or Uint8Array/);
      assert.equal(compiled.prepareActiveRows(2), true);
      assert.deepEqual(Array.from(compiled.runRows({ ids: ids.subarray(0, 3), mask: mask.subarray(0, 3) }, 1)[0]), [0, 0, -7]);
    } finally {
      compiled.delete();
      session.delete();
      graph.delete();
    }
  });
}

test('runPadded and runPaddedMixed take integer and bool inputs', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 4, 16);
  const build = (upper) => {
    const g = new Graph();
    g.output('y', g.mul(g.add(g.input('x', [upper, 2]), g.input('b', [2])), g.input('keep', [1])));
    return g;
  };
  const rowsOnly = (upper) => {
    const g = new Graph();
    g.output('y', g.neg(g.input('x', [upper, 2])));
    return g;
  };
  try {
    const x = new BigInt64Array([1n, 2n, 3n, 4n, 5n, 6n]);
    const run = cache.runPaddedMixed(3, 3, build, [
      { name: 'x', data: x, rowInner: 2 },
      { name: 'b', data: new Int32Array([10, 20]), rowInner: null },
      { name: 'keep', data: new Uint8Array([1]), rowInner: null },
    ], [2]);
    assert.deepEqual(Array.from(run.outputs[0]), [11, 22, 13, 24, 15, 26]);
    // Key 10: another bucket (a bucket keeps the graph it compiled first).
    const padded = cache.runPadded(10, 3, rowsOnly, [{ name: 'x', data: new Int32Array([1, 2, 3, 4, 5, 6]), inner: 2 }], [2]);
    assert.deepEqual(Array.from(padded.outputs[0]), [-1, -2, -3, -4, -5, -6]);
    const before = cache.stats().runs;
    assertRungsError(() => cache.runPadded(10, 3, rowsOnly, [{ name: 'x', data: new BigInt64Array([1n, 2n, 3n, 4n, 5n, 1n << 25n]), inner: 2 }], [2]),
      'InvalidArgument', /input 'x' holds 33554432 at index 5/);
    assert.equal(cache.stats().runs, before, 'a refused input runs nothing');
  } finally {
    cache.delete();
  }
});

test('where, comparisons, logicalNot, pow, erf, sin and cos', () => {
  const g = new Graph();
  const a = g.input('a', [4]);
  const b = g.input('b', [4]);
  g.output('where', g.where(g.less(a, b), a, b));
  g.output('eq', g.equal(a, b));
  g.output('ge', g.greaterEqual(a, b));
  g.output('not', g.logicalNot(g.greater(a, b)));
  g.output('le', g.lessEqual(a, b));
  g.output('pow', g.pow(b, g.constant(new Float32Array([2]), [1])));
  g.output('trig', g.add(g.erf(a), g.add(g.sin(a), g.cos(a))));
  const session = new Session(Device.Cpu);
  const compiled = session.compile(g);
  try {
    const av = new Float32Array([1, 5, NaN, -2]);
    const bv = new Float32Array([2, 5, 0, -3]);
    const [where, eq, ge, not, le, pow, trig] = compiled.run({ a: av, b: bv });
    assert.deepEqual(Array.from(where), [1, 5, 0, -3]);
    assert.deepEqual(Array.from(eq), [0, 1, 0, 0]);
    assert.deepEqual(Array.from(ge), [0, 1, 0, 1]);
    assert.deepEqual(Array.from(not), [1, 1, 1, 0]);
    assert.deepEqual(Array.from(le), [1, 1, 0, 0]);
    assert.deepEqual(Array.from(pow), [4, 25, 0, 9]);
    // erf(1) = 0.8427007929..., erf(5) = 0.9999999999984626 (1 in f32)
    assert.ok(Math.abs(trig[0] - (0.8427007929 + Math.sin(1) + Math.cos(1))) < 1e-6);
    assert.ok(Math.abs(trig[1] - (1 + Math.sin(5) + Math.cos(5))) < 1e-6);
    assert.ok(Number.isNaN(trig[2]));
    assert.throws(() => g.where(a, b), /where/);
  } finally {
    compiled.delete();
    session.delete();
    g.delete();
  }
});
