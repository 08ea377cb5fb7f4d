// SPDX-License-Identifier: Apache-2.0
// Errors from JavaScript: every C++ rungs::Error arrives as a thrown JS Error with the same message
// (in the package's names) and its code; no abort, no lost module; the object it was called on still works afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { BucketedCompileCache, Device, Graph, HirModule, Model, Session, heapStats, ladder, padRows } from 'rungs';

import { assertRungsError, rowGraph } from './helpers.mjs';

test('graph builder errors name the op and shapes; the graph keeps working', () => {
  const g = new Graph();
  try {
    const a = g.input('a', [2, 3]);
    const b = g.input('b', [4, 5]);
    const before = g.nodeCount();
    assertRungsError(() => g.matmul(a, b), 'ShapeMismatch', /matmul/, /\[2, 3\]/, /\[4, 5\]/);
    assertRungsError(() => g.add(a, b), 'ShapeMismatch', /add/);
    assertRungsError(() => g.input('a', [1]), 'InvalidArgument', /'a'/);
    assertRungsError(() => g.reshape(a, [7]), 'ShapeMismatch', /reshape/);
    assertRungsError(() => g.softmax(a, 5), 'InvalidArgument', /axis/);
    assertRungsError(() => g.input('c', [2, 1.5]), 'InvalidArgument', /shape\[1\]/);
    assert.equal(g.nodeCount(), before, 'failed calls add no node');
    g.output('y', g.relu(a));
    assert.deepEqual(g.outputs(), [{ name: 'y', shape: [2, 3] }]);
    assert.throws(() => g.relu(), /called with 0 arguments/, 'a missing argument throws');
  } finally {
    g.delete();
  }
});

test('compile and run errors; the compiled graph keeps working', () => {
  const m = new HirModule();
  m.output('y', m.linear(m.input('x', [2, 3]), 'fc', 4));
  const session = new Session(Device.Cpu);
  const compiled = session.compileHir(m);
  try {
    assertRungsError(() => compiled.run({ x: new Float32Array(6) }), 'ParamNotSet', /fc\./);
    assertRungsError(() => compiled.setParam('fc.weight', new Float32Array(5)), 'ShapeMismatch', /fc\.weight/, /12/);
    assertRungsError(() => compiled.setParam('nope', new Float32Array(5)), 'UnknownName', /nope/);
    compiled.setParam('fc.weight', new Float32Array(12).fill(1));
    compiled.setParam('fc.bias', new Float32Array(4).fill(0.5));
    assertRungsError(() => compiled.run({ x: new Float32Array(7) }), 'ShapeMismatch', /'x'/, /7/, /6/);
    assertRungsError(() => compiled.run({ x: new Float32Array(6), z: new Float32Array(1) }), 'UnknownName', /'z'/);
    assertRungsError(() => compiled.run({}), 'MissingInput', /'x'/);
    assertRungsError(() => compiled.run([]), 'InvalidArgument', /object/);
    assertRungsError(() => compiled.inputShape('q'), 'UnknownName', /q/);
    assertRungsError(() => session.compileHir(m, { fusion: 'yes' }), 'InvalidArgument', /fusion/);
    assertRungsError(() => session.compileHir(m, { fuse: false }), 'InvalidArgument', /unknown option 'fuse'/);
    assertRungsError(() => session.compileHir(m, { maxArenaBytes: 1 }), 'ArenaLimit', /maxArenaBytes = 1/);
    assertRungsError(() => session.compileHir(m, { policy: 'f8' }), 'InvalidArgument', /'f8'/);
    const [y] = compiled.run({ x: new Float32Array([1, 2, 3, 0, 0, 0]) });
    assert.deepEqual(Array.from(y), [6.5, 6.5, 6.5, 6.5, 0.5, 0.5, 0.5, 0.5]);
  } finally {
    compiled.delete();
    session.delete();
    m.delete();
  }
});

// The core's messages name its C++ functions and options; from JS they name the method called
// and this package's spellings, and leave the caller's own (quoted) names alone.
test('messages name the JS methods and options, not the C++ ones', () => {
  const g = new Graph();
  g.output('y', g.matmul(g.input('x', [2, 2]), g.param('max_arena_bytes', [2, 2])));
  const session = new Session(Device.Cpu);
  const compiled = session.compile(g);
  const x = new Float32Array(4);
  const notSet = [/param 'max_arena_bytes' \[2, 2\] was never set; call setParam\("max_arena_bytes", \.\.\.\) with 4 values/];
  try {
    const cpp = /run_in_place|set_param|max_arena_bytes =|^run:|^profile:/;
    for (const [call, who] of [
      [() => compiled.run({ x }), 'CompiledGraph.run'],                      // the fast path
      [() => compiled.run({ x: new Int32Array(4) }), 'CompiledGraph.run'], // the general path
      [() => compiled.runInto({ x }, [new Float32Array(4)]), 'CompiledGraph.runInto'],
      [() => compiled.runInto({ x: new Int32Array(4) }, [new Float32Array(4)]), 'CompiledGraph.runInto'],
      [() => compiled.profile({ x }, 1), 'CompiledGraph.profile'],
    ]) {
      const e = assertRungsError(call, 'ParamNotSet', new RegExp(`^${who.replace('.', '\\.')}: `), ...notSet);
      assert.doesNotMatch(e.message.replaceAll("'max_arena_bytes'", '').replaceAll('"max_arena_bytes"', ''), cpp, e.message);
    }
    assertRungsError(() => compiled.setParam('w', x), 'UnknownName', /^CompiledGraph\.setParam: unknown param 'w'/);
    assertRungsError(() => compiled.inputShape('q'), 'UnknownName', /^CompiledGraph\.inputShape: unknown input 'q'/);
    assertRungsError(() => session.compile(g, { maxArenaBytes: 1 }), 'ArenaLimit', /maxArenaBytes = 1/);
    assertRungsError(() => padRows(new Float32Array(5), 2, 3), 'InvalidArgument', /^padRows: 5 values/);
    assertRungsError(() => ladder.expectedWaste(ladder.powerOfTwo(1, 8), [9]), 'InvalidArgument', /^ladder\.expectedWaste: observed key 9/);
    assertRungsError(() => ladder.optimal([], 3), 'InvalidArgument', /^ladder\.optimal: observedKeys must not be empty/);
    const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 1, 8);
    try {
      assertRungsError(() => cache.runPadded(5, 9, rowGraph, [{ name: 'x', data: new Float32Array(36), inner: 4 }], [4]),
        'InvalidArgument', /^BucketedCompileCache\.runPadded: actualRows 9 exceed upper/);
    } finally {
      cache.delete();
    }
    assertRungsError(() => BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 0, 8), 'InvalidArgument',
      /^BucketedCompileCache\.powerOfTwoLadder: min must be >= 1/);
    // Advice that names a C++ call: the JS call to make instead.
    assertRungsError(() => compiled.runRows({ x }, 1), 'Unsupported', /^CompiledGraph\.runRows: call prepareActiveRows\(extent\) first$/);
    const parsed = Model.parse(JSON.stringify({ format: 'rungs-model', version: 1, name: 'mlp', bucket_dim: 'rows',
      inputs: [{ name: 'x', shape: ['rows', 4] }], outputs: [{ name: 'y' }], weights: 'mlp.safetensors',
      blocks: [{ op: 'linear', name: 'fc', input: 'x', out_features: 4, out: 'y' }] }));
    try {
      const advice = /load it with its weights(?: first)?: loadModel\(json, weights\)$/;
      for (const call of [() => parsed.build(8), () => parsed.weightsBytes()]) {
        const e = assertRungsError(call, 'ParamNotSet', /^model 'mlp': /, advice);
        assert.doesNotMatch(e.message, /set_weights|load_model/, e.message);
      }
    } finally {
      parsed.delete();
    }
    compiled.setParam('max_arena_bytes', new Float32Array(4).fill(1));
    assert.deepEqual(Array.from(compiled.run({ x })[0]), [0, 0, 0, 0], 'the graph still runs');
  } finally {
    compiled.delete();
    session.delete();
    g.delete();
  }
});

test('cache errors leave the cache unchanged and usable', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 32);
  try {
    const x = new Float32Array(5 * 4);
    assertRungsError(() => cache.runPadded(5, 5, rowGraph, [{ name: 'x', data: new Float32Array(19), inner: 4 }], [4]),
      'InvalidArgument', /whole number of rows/);
    assertRungsError(() => cache.runPadded(5, 5, rowGraph, [{ name: 'q', data: x, inner: 4 }], [4]), 'UnknownName', /'q'/);
    assertRungsError(() => cache.runPadded(5, 9, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]), 'InvalidArgument', /exceed upper/);
    assertRungsError(() => cache.runPadded(-1, 5, rowGraph, [], []), 'InvalidArgument', /key/);
    assertRungsError(() => cache.runPadded(5, 5, rowGraph, {}, []), 'InvalidArgument', /array/);
    assertRungsError(() => cache.getOrCompileWithOptions(5, rowGraph, { threads: 'x' }), 'InvalidArgument', /threads/);
    assert.throws(() => cache.runPadded(5, 5, 'not a function', [], []), TypeError);
    const before = cache.stats();
    const run = cache.runPadded(5, 5, rowGraph, [{ name: 'x', data: x.fill(-2), inner: 4 }], [4]);
    assert.ok(run.outputs[0].every((v) => v === 1));
    const after = cache.stats();
    assert.equal(after.runs, before.runs + 1);
    assert.equal(cache.compiledCount(), 1);
  } finally {
    cache.delete();
  }
});

test('a compile whose arena wasm32 cannot address is refused before allocating', () => {
  const g = new Graph();
  try {
    // 2^31 floats: more than wasm32's 4 GiB address space can hold.
    const x = g.input('x', [1 << 16, 1 << 15]);
    g.output('y', g.relu(x));
    const session = new Session(Device.Cpu);
    let caught;
    try {
      session.compile(g).delete();
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof Error, 'the compile is refused');
    assert.equal(caught.code, 'OutOfRange');
    assert.match(caught.message, /more than this platform can address/);
    console.log(`huge compile refused: ${caught.code}: ${caught.message}`);
    session.delete();
    assert.ok(heapStats().heapBytes < 2 ** 31, 'the heap did not grow to hold it');
  } finally {
    g.delete();
  }
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 4, 8);
  assert.equal(cache.runPadded(2, 2, rowGraph, [{ name: 'x', data: new Float32Array(8), inner: 4 }], [4]).upper, 4);
  cache.delete();
});

test('calling a deleted object is an Error, not a crash', () => {
  const g = new Graph();
  g.delete();
  assert.throws(() => g.nodeCount(), Error);
  assert.ok(g.isDeleted());
  const h = new HirModule();
  h[Symbol.dispose]();
  h[Symbol.dispose]();
  assert.ok(h.isDeleted());
});

test('a run whose buffers outgrow the 2 GiB wasm heap is an OutOfRange Error; the module keeps working', () => {
  // y = a x b with a [16384, 1], b [1, 16384]: a 1 GiB output in a 1 GiB arena, then a 1 GiB copy
  // out: more than the heap can grow to. b is an Int32Array, so run() converts it and copies the
  // output within the heap; with Float32Arrays only, the output goes straight from the arena to
  // JS and this run fits.
  const n = 16384;
  const g = new Graph();
  g.output('y', g.matmul(g.input('a', [n, 1]), g.input('b', [1, n])));
  const session = new Session(Device.Cpu);
  const compiled = session.compile(g);
  const before = heapStats().allocatedBytes;
  assertRungsError(() => compiled.run({ a: new Float32Array(n).fill(1), b: new Int32Array(n).fill(2) }),
    'OutOfRange', /out of memory/);
  compiled.delete();  // its cached arena goes with it
  assert.ok(heapStats().allocatedBytes <= before + 4096, 'nothing left behind');
  const small = new Graph();
  small.output('y', small.relu(small.input('x', [3])));
  const relu = session.compile(small);
  assert.deepEqual(Array.from(relu.run({ x: new Float32Array([-1, 0, 2]) })[0]), [0, 0, 2]);
  relu.delete();
  small.delete();
  session.delete();
  g.delete();
});
