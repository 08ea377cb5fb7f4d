// SPDX-License-Identifier: Apache-2.0
// Tests of the npm package as a user gets it: scripts/test packs <build>/npm, installs the tarball
// into an empty folder and runs this file there, so `rungs` resolves through package.json exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { Graph, Session, Device, version, cpuIsa } from 'rungs';

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(require.resolve('rungs/package.json'), 'utf8'));

function reluGraph(shape) {
  const g = new Graph();
  const x = g.input('x', shape);
  g.output('y', g.relu(x));
  return g;
}

function ramp(n) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; ++i) a[i] = (i % 7) - 3.25 - i * 0.5;
  for (let i = 0; i < n; i += 3) a[i] = -a[i];
  return a;
}

// Compiles and runs, freeing the C++ objects even when the body throws.
function withCompiled(device, graph, body) {
  const session = new Session(device);
  const compiled = session.compile(graph);
  try {
    return body(compiled);
  } finally {
    compiled.delete();
    session.delete();
    graph.delete();
  }
}

test('version() is the package version', () => {
  assert.match(version(), /^\d+\.\d+\.\d+$/);
  assert.equal(version(), pkg.version);
});

test('Cpu kernels dispatch to wasm SIMD128', () => {
  const isa = cpuIsa();
  console.log(`rungs ${version()} wasm module: cpuIsa() = ${isa}`);
  assert.equal(isa, 'wasm');
});

test('relu graph built from JS runs on a Float32Array', () => {
  for (const n of [1, 3, 4, 5, 17]) {
    const input = ramp(2 * n);
    withCompiled(Device.Cpu, reluGraph([2, n]), (compiled) => {
      assert.deepEqual(compiled.inputNames(), ['x']);
      assert.deepEqual(compiled.outputNames(), ['y']);
      assert.deepEqual(compiled.outputShape('y'), [2, n]);
      assert.equal(compiled.report().isa, cpuIsa());
      const outputs = compiled.run({ x: input });
      assert.equal(outputs.length, 1);
      const [y] = outputs;
      assert.ok(y instanceof Float32Array);
      assert.equal(y.length, input.length);
      for (let i = 0; i < input.length; ++i) {
        assert.equal(y[i], Math.max(input[i], 0), `y[${i}] for x = ${input[i]}`);
      }
      assert.ok(y.some((v) => v > 0) && y.some((v) => v === 0), 'input has both signs');
    });
  }
});

test('Cpu and Reference devices agree', () => {
  const input = ramp(40);
  const run = (device) => withCompiled(device, reluGraph([40]), (c) => c.run({ x: input })[0]);
  assert.deepEqual(run(Device.Cpu), run(Device.Reference));
});

test('outputs come back in declared order', () => {
  const g = new Graph();
  const a = g.input('a', [3]);
  const b = g.input('b', [2]);
  g.output('second', g.relu(b));
  g.output('first', g.relu(a));
  withCompiled(Device.Cpu, g, (compiled) => {
    assert.deepEqual(compiled.outputNames(), ['second', 'first']);
    const [second, first] = compiled.run({
      a: new Float32Array([1, -2, 3]),
      b: new Float32Array([-4, 5]),
    });
    assert.deepEqual(Array.from(second), [0, 5]);
    assert.deepEqual(Array.from(first), [1, 0, 3]);
  });
});

test('wrong-length input throws a JS Error naming the input, and the graph stays usable', () => {
  withCompiled(Device.Cpu, reluGraph([4, 8]), (compiled) => {
    let caught;
    try {
      compiled.run({ x: new Float32Array(31) });
    } catch (e) {
      caught = e;
    }
    assert.ok(caught instanceof Error, `expected an Error, got ${typeof caught}: ${caught}`);
    assert.match(caught.message, /'x'/);
    assert.match(caught.message, /31/);
    assert.match(caught.message, /32/);
    assert.equal(caught.code, 'ShapeMismatch');
    console.log(`wrong length rejected: ${caught.message}`);

    const [y] = compiled.run({ x: new Float32Array(32).fill(-1) });
    assert.equal(y.length, 32);
    assert.ok(y.every((v) => v === 0));
  });
});

// relu((x + k) @ w) and softmax(x), compiled, with w set; x and k [3, 4] (k as an Int32Array).
function twoOutputGraph() {
  const g = new Graph();
  const x = g.input('x', [3, 4]), k = g.input('k', [3, 4]);
  g.output('y', g.relu(g.matmul(g.add(x, k), g.param('w', [4, 2]))));
  g.output('s', g.softmax(x, -1));
  const compiled = new Session(Device.Cpu).compile(g);
  compiled.setParam('w', Float32Array.from({ length: 8 }, (_, i) => (i % 3) - 1));
  const xs = Float32Array.from({ length: 12 }, (_, i) => i - 5), ks = Int32Array.from({ length: 12 }, (_, i) => 2 * i);
  return { g, compiled, xs, ks };
}

test('run: Float32Array inputs, copied straight into the run, and converted Int32Array inputs give the same outputs', () => {
  const { g, compiled, xs, ks } = twoOutputGraph();
  const fast = compiled.run({ x: xs, k: Float32Array.from(ks) });  // every input a Float32Array of its size
  const converted = compiled.run({ x: xs, k: ks });                // an Int32Array: converted first
  assert.equal(fast.length, 2);
  assert.deepEqual(fast.map((o) => Array.from(o)), converted.map((o) => Array.from(o)));
  // Row 0: x + k = [-5, -2, 1, 4]; w = [[-1, 0], [1, -1], [0, 1], [-1, 0]]; relu([-1, 3]).
  assert.deepEqual(Array.from(fast[0]).slice(0, 2), [0, 3]);
  assert.ok(fast[0] instanceof Float32Array && fast[1] instanceof Float32Array);
  // The results are the caller's: a later run does not change them.
  const kept = Array.from(fast[1]);
  compiled.run({ x: new Float32Array(12).fill(9), k: new Float32Array(12) });
  assert.deepEqual(Array.from(fast[1]), kept);
  // ... and each owns its memory: not a view into the wasm heap (shared in the threaded variant).
  for (const o of fast) {
    assert.ok(!(o.buffer instanceof SharedArrayBuffer) && o.byteOffset === 0 && o.buffer.byteLength === o.byteLength);
  }
  // A Float32Array that is a window on a larger buffer is read from its own offset.
  const window = new Float32Array(20).fill(1e9);
  window.set(xs, 4);
  assert.deepEqual(compiled.run({ x: window.subarray(4, 16), k: Float32Array.from(ks) }).map((o) => Array.from(o)),
    converted.map((o) => Array.from(o)));
  // The helper behind the fast path is not part of the API.
  assert.equal(compiled._runStaged, undefined);
  compiled.delete();
  assert.throws(() => compiled.run({ x: xs, k: Float32Array.from(ks) }), (e) => e instanceof Error && /deleted/.test(e.message));
  g.delete();
});

test('runInto writes run\'s results into the caller\'s arrays, refuses wrong ones and leaves them untouched', () => {
  const { g, compiled, xs, ks } = twoOutputGraph();
  const expected = compiled.run({ x: xs, k: ks }).map((o) => Array.from(o));
  const outs = [new Float32Array(6).fill(NaN), new Float32Array(12).fill(NaN)];
  assert.equal(compiled.runInto({ x: xs, k: Float32Array.from(ks) }, outs), outs);  // the fast path
  assert.deepEqual(outs.map((o) => Array.from(o)), expected);
  outs.forEach((o) => o.fill(NaN));
  compiled.runInto({ x: xs, k: ks }, outs);  // an Int32Array input: the general path, then a copy
  assert.deepEqual(outs.map((o) => Array.from(o)), expected);
  // An output may be a window on a larger buffer, and one of the inputs (read before written).
  const big = new Float32Array(20).fill(7);
  const inPlace = Float32Array.from(xs);
  compiled.runInto({ x: inPlace, k: Float32Array.from(ks) }, [big.subarray(2, 8), inPlace]);
  assert.deepEqual(Array.from(big.subarray(2, 8)), expected[0]);
  assert.deepEqual([big[0], big[1], big[8]], [7, 7, 7]);
  assert.deepEqual(Array.from(inPlace), expected[1]);
  // Wrong outputs: a coded TypeError naming the output and the size; nothing is written.
  outs.forEach((o) => o.fill(-1));
  for (const [bad, pattern] of [
    [[outs[0]], /outputs must be an array of 2 Float32Array\(s\), one per output \(y, s\), got an array of 1/],
    [[outs[0], new Float32Array(11)], /outputs\[1\] \(output 's'\) must be a Float32Array of 12 values, got one of 11/],
    [[outs[0], new Float64Array(12)], /outputs\[1\] \(output 's'\) must be a Float32Array of 12 values, got a Float64Array/],
    [null, /outputs must be an array/],
  ]) {
    assert.throws(() => compiled.runInto({ x: xs, k: ks }, bad),
      (e) => e instanceof TypeError && e.code === 'InvalidArgument' && pattern.test(e.message) && /CompiledGraph\.runInto/.test(e.message));
  }
  assert.ok(outs.every((o) => o.every((v) => v === -1)));
  // A run error (a wrong input size) is run's, and the outputs stay as they were.
  assert.throws(() => compiled.runInto({ x: new Float32Array(11), k: Float32Array.from(ks) }, outs), (e) => e.code === 'ShapeMismatch');
  assert.ok(outs.every((o) => o.every((v) => v === -1)));
  compiled.delete();
  assert.throws(() => compiled.runInto({ x: xs, k: ks }, outs), (e) => /CompiledGraph\.runInto.*deleted/.test(e.message));
  g.delete();
});

test('run: Float32Array inputs large enough to grow the wasm memory reach the run intact', () => {
  // 2 x 16 MiB of input and output and as much arena: more than the module's initial 16 MiB heap.
  const n = 2048 * 2048;
  const g = new Graph();
  g.output('y', g.relu(g.input('x', [2048, 2048])));
  const compiled = new Session(Device.Cpu).compile(g);
  const x = Float32Array.from({ length: n }, (_, i) => (i % 7) - 3);
  const [y] = compiled.run({ x });
  assert.equal(y.length, n);
  let bad = -1;
  for (let i = 0; i < n && bad < 0; ++i) if (y[i] !== Math.max(0, (i % 7) - 3)) bad = i;
  assert.equal(bad, -1, `y[${bad}] = ${y[bad]}`);
  compiled.delete();
  g.delete();
});

test('unknown, missing and non-Float32Array inputs throw JS Errors', () => {
  withCompiled(Device.Cpu, reluGraph([2]), (compiled) => {
    assert.throws(() => compiled.run({ x: new Float32Array(2), z: new Float32Array(2) }),
      (e) => e instanceof Error && e.code === 'UnknownName' && /'z'/.test(e.message));
    assert.throws(() => compiled.run({}),
      (e) => e instanceof Error && e.code === 'MissingInput' && /'x'/.test(e.message));
    assert.throws(() => compiled.run({ x: [1, 2] }),
      (e) => e instanceof Error && e.code === 'InvalidArgument' && /Float32Array/.test(e.message));
  });
});

test('graph builder errors are JS Errors', () => {
  const g = new Graph();
  try {
    assert.throws(() => g.input('x', [2, 1.5]), (e) => e instanceof Error && /shape/.test(e.message));
    assert.throws(() => g.relu({ id: 12345 }), (e) => e instanceof Error && e.code !== undefined);
    const x = g.input('x', [3]);
    assert.deepEqual(g.shape(g.relu(x)), [3]);
  } finally {
    g.delete();
  }
});

test('profile() times every kernel of the report, with the work of a product', () => {
  const g = new Graph();
  const x = g.input('x', [8, 16]);
  g.output('y', g.relu(g.matmul(x, g.param('w', [16, 4]))));
  g.output('z', g.softmax(x));
  const session = new Session(Device.Cpu);
  const compiled = session.compile(g);
  try {
    compiled.setParam('w', ramp(64));
    const prof = compiled.profile({ x: ramp(128) }, 3);
    const kernels = compiled.report().kernels;
    assert.deepEqual(prof.map((k) => k.kernel), kernels.map((k) => k.kernel));
    for (const k of prof) assert.ok(Number.isFinite(k.ms) && k.ms >= 0, `${k.kernel}: ${k.ms} ms`);
    const mm = prof.find((k) => k.op === 'fused_matmul');
    assert.ok(mm, JSON.stringify(prof.map((k) => k.op)));
    assert.deepEqual(mm.shape, [8, 4]);
    assert.equal(mm.flops, 2 * 8 * 16 * 4);
    assert.equal(prof.find((k) => k.op === 'softmax').flops, 0);
    assert.equal(compiled.profile({ x: ramp(128) }).length, prof.length, 'repetitions defaults to 20');
    assert.throws(() => compiled.profile({ x: ramp(128) }, 0), /repetitions must be in \[1, 100000\], got 0/);
    assert.throws(() => compiled.profile({}, 1), (e) => e.code === 'MissingInput');
  } finally {
    compiled.delete();
    session.delete();
    g.delete();
  }
});
