// SPDX-License-Identifier: Apache-2.0
// Arguments Embind would take on trust: enums, handles, typed arrays of another kind, row counts
// that do not match the data, and objects used after delete(). Each is a thrown Error with a
// rungs `code` that names the call, the argument and what it takes (docs/errors.md rows J14-J19);
// the object called stays usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Activation, BucketedCompileCache, Device, Graph, HirModule, Session, ladder, loadModel } from 'rungs';

import { assertRungsError, rowGraph } from './helpers.mjs';

const DEVICES = /Device\.Cpu or Device\.Reference/;

test('a device that is not a Device value is refused, naming the argument and the allowed values', () => {
  const cases = [
    [() => new Session('cpu'), /the string 'cpu'/],
    [() => new Session('banana'), /the string 'banana'/],
    [() => new Session(7), /the number 7/],
    [() => new Session({ value: 99 }), /the object \{"value":99\}/],
    [() => new Session(), /undefined/],
    [() => new Session(null), /null/],
    [() => new Session(Activation.Relu), /got Activation\.Relu/],
    [() => BucketedCompileCache.powerOfTwoLadder('Cpu', 8, 64), /the string 'Cpu'/],
    [() => new BucketedCompileCache(1, ladder.powerOfTwo(8, 64)), /the number 1/],
    [() => BucketedCompileCache.withPolicy('cpu', ladder.powerOfTwo(8, 64), 'f32'), /the string 'cpu'/],
    [() => BucketedCompileCache.powerOfTwoLadderWithPolicy({}, 8, 64, 'f32'), /object/],
  ];
  for (const [call, got] of cases) {
    const e = assertRungsError(call, 'InvalidArgument', /device must be/, DEVICES, got);
    assert.ok(e instanceof TypeError, `a TypeError: ${e.message}`);
  }
  // The real values still work, and give what they say.
  for (const d of [Device.Cpu, Device.Reference]) {
    const s = new Session(d);
    const g = rowGraph(2);
    const c = s.compile(g);
    assert.equal(c.report().isa, d === Device.Cpu ? 'wasm' : 'scalar');
    c.delete();
    g.delete();
    s.delete();
  }
});

test('an activation that is not an Activation value is refused', () => {
  const m = new HirModule();
  try {
    const x = m.input('x', [2, 3]);
    assertRungsError(() => m.linear(x, 'fc', 4, 'relu'), 'InvalidArgument', /HirModule\.linear: activation must be Activation\.None, .*Activation\.Sigmoid/, /the string 'relu'/);
    assertRungsError(() => m.mlp(x, 'ff', 8, 3), 'InvalidArgument', /HirModule\.mlp: activation/, /the number 3/);
    assertRungsError(() => m.linear(x, 'fc', 4, Device.Cpu), 'InvalidArgument', /activation/, /got Device\.Cpu/);
    assertRungsError(() => m.linear({ value: 1 }, 'fc', 4), 'InvalidArgument', /HirModule\.linear: x must be a Value/);
    const y = m.linear(x, 'fc', 4, Activation.Relu);
    assert.deepEqual(m.shape(y), [2, 4]);
    assert.deepEqual(m.shape(m.mlp(x, 'ff', 8)), [2, 3], 'the default activation still applies');
  } finally {
    m.delete();
  }
});

test('a handle of the wrong class, or a non-handle, is refused naming the argument', () => {
  const session = new Session(Device.Cpu);
  const g = rowGraph(2);
  const m = new HirModule();
  m.output('y', m.linear(m.input('x', [2, 3]), 'fc', 4));
  try {
    assertRungsError(() => session.compile(m), 'InvalidArgument', /Session\.compile: graph must be a Graph, got a HirModule/, /compileHir/);
    assertRungsError(() => session.compileHir(g), 'InvalidArgument', /Session\.compileHir: module must be a HirModule, got a Graph/);
    assertRungsError(() => session.compile(null), 'InvalidArgument', /graph must be a Graph, got null/);
    assertRungsError(() => session.compile({}), 'InvalidArgument', /graph must be a Graph/);
    assertRungsError(() => session.compile(), 'InvalidArgument', /Session\.compile: argument 1 is required/);
    // Embind's own refusals (a missing argument) come back coded, with the call's name.
    const e = assertRungsError(() => g.relu(), 'InvalidArgument', /Graph\.relu/, /called with 0 arguments/);
    assert.ok(e instanceof TypeError);
    const c = session.compile(g);
    assert.equal(c.outputNames().length, 2);
    c.delete();
  } finally {
    m.delete();
    g.delete();
    session.delete();
  }
});

test('a Value argument must be a node handle {id}: not a string, a fraction or a negative id', () => {
  const g = new Graph();
  const m = new HirModule();
  try {
    const x = g.input('x', [2, 3]);
    const before = g.nodeCount();
    assertRungsError(() => g.relu({}), 'InvalidArgument', /Graph\.relu: x must be a Value \(\{id\}\)/, /the object \{\}/);
    assertRungsError(() => g.relu('x'), 'InvalidArgument', /Graph\.relu: x must be a Value/, /the string 'x'/);
    assertRungsError(() => g.relu({ id: 0.5 }), 'InvalidArgument', /x must be a Value/);
    assertRungsError(() => g.relu({ id: -1 }), 'InvalidArgument', /x must be a Value/);
    assertRungsError(() => g.add(x, null), 'InvalidArgument', /Graph\.add: b must be a Value/, /null/);
    assertRungsError(() => g.concat([x, 7], 0), 'InvalidArgument', /Graph\.concat: xs\[1\] must be a Value/);
    assertRungsError(() => g.output('y', undefined), 'InvalidArgument', /Graph\.output: value must be a Value/);
    assert.equal(g.nodeCount(), before, 'nothing added');
    // A well-formed id that is not a node of this graph is the C++ check (row 12).
    assertRungsError(() => g.relu({ id: 99 }), 'InvalidArgument', /does not belong to this graph/);
    const h = m.input('h', [1, 2, 4]);
    assertRungsError(() => m.meanPool(h, 'mask'), 'InvalidArgument', /HirModule\.meanPool: mask must be a Value .* or null/);
    assert.deepEqual(m.shape(m.meanPool(h)), [1, 4], 'a null mask is allowed');
    g.output('y', g.relu(x));
    assert.deepEqual(g.outputs(), [{ name: 'y', shape: [2, 3] }]);
  } finally {
    m.delete();
    g.delete();
  }
});

test('numbers and booleans Embind would coerce are refused, naming the argument', () => {
  const g = new Graph();
  const m = new HirModule();
  try {
    const x = g.input('x', [2, 3]);
    assertRungsError(() => g.softmax(x, 'a'), 'InvalidArgument', /Graph\.softmax: axis must be a whole number, got the string 'a'/);
    assertRungsError(() => g.softmax(x, 1.5), 'InvalidArgument', /axis must be a whole number, got the number 1\.5/);
    assertRungsError(() => g.sum(x, [0], 'yes'), 'InvalidArgument', /Graph\.sum: keepDims must be true or false/);
    assertRungsError(() => g.concat([x, x], '0'), 'InvalidArgument', /Graph\.concat: axis must be a whole number/);
    const h = m.input('h', [1, 2, 4]);
    assertRungsError(() => m.linear(h, 'fc', 4, Activation.None, 1), 'InvalidArgument', /HirModule\.linear: bias must be true or false, got the number 1/);
    assertRungsError(() => m.selfAttention(h, 'att', '2'), 'InvalidArgument', /HirModule\.selfAttention: heads must be a whole number/);
    assertRungsError(() => m.layerNorm(h, 'ln', '1e-5'), 'InvalidArgument', /HirModule\.layerNorm: eps must be a number/);
    assertRungsError(() => ladder.powerOfTwo(8, 64, 'no'), 'InvalidArgument', /ladder\.powerOfTwo: head must be true or false, got the string 'no'/);
    assertRungsError(() => ladder.geometric(8, 64, '2'), 'InvalidArgument', /ladder\.geometric: ratio must be a number/);
    assertRungsError(() => ladder.linear(8, 64, 8, 1), 'InvalidArgument', /ladder\.linear: head must be true or false/);
    assert.deepEqual(g.shape(g.softmax(x, 0)), [2, 3]);
    assert.deepEqual(g.shape(g.sum(x, [1], true)), [2, 1]);
    assert.deepEqual(m.shape(m.selfAttention(h, 'att', 2, null, true)), [1, 2, 4]);
    assert.equal(ladder.powerOfTwo(8, 64, true).length, 7);
  } finally {
    m.delete();
    g.delete();
  }
});

test('a typed array of another kind is named, with the fix', () => {
  const session = new Session(Device.Cpu);
  const g = new Graph();
  g.output('y', g.relu(g.input('x', [3])));
  const c = session.compile(g);
  try {
    // Int32Array, BigInt64Array and Uint8Array are run inputs too (typed-inputs.test.mjs); others are not.
    assertRungsError(() => c.run({ x: new Int16Array(3) }), 'InvalidArgument',
      /input 'x' must be a Float32Array, BigInt64Array, Int32Array or Uint8Array \(bool\), got an Int16Array/,
      /Float32Array\.from/);
    assertRungsError(() => c.run({ x: new Float64Array(3) }), 'InvalidArgument', /got a Float64Array/);
    assertRungsError(() => c.run({ x: [1, 2, 3] }), 'InvalidArgument', /got an array/, /Float32Array\.from/);
    assertRungsError(() => c.run({ x: 'abc' }), 'InvalidArgument', /got a string/);
    assertRungsError(() => c.run({ x: { length: 3 } }), 'InvalidArgument', /got an object/);
    assertRungsError(() => loadModel('{}', new Int8Array(4)), 'InvalidArgument', /must be a Uint8Array, got an Int8Array/, /Uint8Array\.from/);
    assert.deepEqual(Array.from(c.run({ x: new Float32Array([-1, 0, 2]) })[0]), [0, 0, 2]);
  } finally {
    c.delete();
    g.delete();
    session.delete();
  }
});

test('runPadded checks actualRows against the rows each input holds', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 32);
  try {
    const x = new Float32Array(5 * 4);
    assertRungsError(() => cache.runPadded(5, 3, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]),
      'ShapeMismatch', /runPadded: input 'x' holds 5 rows \(20 values of inner 4\) but actualRows is 3/);
    assertRungsError(() => cache.runPadded(7, 7, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]),
      'ShapeMismatch', /holds 5 rows .* actualRows is 7/);
    assertRungsError(() => cache.runPaddedMixed(5, 2, rowGraph, [{ name: 'x', data: x, rowInner: 4 }], [4]),
      'ShapeMismatch', /runPaddedMixed: input 'x' holds 5 rows/);
    assert.equal(cache.compiledCount(), 0, 'nothing compiled for a refused call');
    assert.equal(cache.stats().runs, 0);
    // A key outside every bucket is still null (no error), whatever the rows.
    assert.equal(cache.runPadded(40, 3, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]), null);
    const run = cache.runPadded(5, 5, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]);
    assert.equal(run.upper, 8);
    assert.equal(run.outputs[0].length, 5 * 4);
  } finally {
    cache.delete();
  }
});

test('an object used after delete() is a coded Error naming the class', () => {
  const g = new Graph();
  const x = g.input('x', [2]);
  g.delete();
  assertRungsError(() => g.nodeCount(), 'InvalidArgument', /Graph\.nodeCount: this Graph was deleted/);
  assertRungsError(() => g.relu(x), 'InvalidArgument', /Graph\.relu: this Graph was deleted/);
  assertRungsError(() => g.delete(), 'InvalidArgument', /Graph\.delete: this Graph was deleted/);
  g[Symbol.dispose]();  // disposing twice stays a no-op (for `using`)

  const session = new Session(Device.Cpu);
  const h = rowGraph(2);
  h.delete();
  assertRungsError(() => session.compile(h), 'InvalidArgument', /Session\.compile: graph \(a Graph\) was deleted/);
  session.delete();
  const fresh = rowGraph(2);
  assertRungsError(() => session.compile(fresh), 'InvalidArgument', /this Session was deleted/);
  fresh.delete();

  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 32);
  cache.delete();
  assertRungsError(() => cache.stats(), 'InvalidArgument', /BucketedCompileCache\.stats: this BucketedCompileCache was deleted/);
  assertRungsError(() => cache.runPadded(5, 5, rowGraph, [], []), 'InvalidArgument', /this BucketedCompileCache was deleted/);

  // A deleted Model as a build.
  const live = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 32);
  const m = new HirModule();
  m.delete();
  assertRungsError(() => live.getOrCompileHir(5, m), 'InvalidArgument');
  assert.equal(live.compiledCount(), 0);
  live.delete();
});
