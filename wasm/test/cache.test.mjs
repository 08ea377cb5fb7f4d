// SPDX-License-Identifier: Apache-2.0
// api.md 5.1 from JavaScript: ladders, bucket lookup, lazy compiles, null for std::nullopt, build
// never called out of range, padding and slicing, stats as a plain object.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { BucketedCompileCache, Device, Graph, HirModule, ladder, padRows, sliceRows, PrecisionPolicy } from 'rungs';

import { assertRungsError, ramp, rowGraph, upperOf } from './helpers.mjs';

const ranges = (pairs) => pairs.map(([start, end]) => ({ start, end }));

test('powerOfTwoLadder buckets match the api.md tables', () => {
  const table = [
    [[8, 256], [[1, 9], [9, 17], [17, 33], [33, 65], [65, 129], [129, 257]]],
    [[8, 64], [[1, 9], [9, 17], [17, 33], [33, 65]]],
    [[10, 64], [[1, 17], [17, 33], [33, 65]]],
    [[8, 20], [[1, 9], [9, 17], [17, 33]]],
    [[16, 16], [[1, 17]]],
    [[1, 32], [[1, 2], [2, 3], [3, 5], [5, 9], [9, 17], [17, 33]]],
  ];
  for (const [[min, max], want] of table) {
    const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, min, max);
    try {
      assert.deepEqual(cache.buckets(), ranges(want), `powerOfTwoLadder(${min}, ${max})`);
      assert.equal(cache.totalBuckets(), want.length);
      assert.equal(cache.compiledCount(), 0);
      assert.deepEqual(ladder.powerOfTwo(min, max), ranges(want));
    } finally {
      cache.delete();
    }
  }
});

test('ladder validation errors carry the api.md messages', () => {
  assertRungsError(() => new BucketedCompileCache(Device.Cpu, []), 'InvalidArgument', /at least 1 bucket/);
  assertRungsError(() => new BucketedCompileCache(Device.Cpu, ranges([[5, 5]])), 'InvalidArgument', /empty/);
  assertRungsError(() => new BucketedCompileCache(Device.Cpu, ranges([[1, 10], [5, 20]])), 'InvalidArgument', /overlap/);
  assertRungsError(() => new BucketedCompileCache(Device.Cpu, ranges([[10, 20], [1, 5]])), 'InvalidArgument', /overlap/);
  assertRungsError(() => BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 0, 8), 'InvalidArgument', /min must be >= 1/);
  assertRungsError(() => BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 16, 8), 'InvalidArgument', /max/);
  assertRungsError(() => new BucketedCompileCache(Device.Cpu, [{ start: 1.5, end: 3 }]), 'InvalidArgument', /\[0\]\.start/);
  assertRungsError(() => new BucketedCompileCache(Device.Cpu, [{ start: -1, end: 3 }]), 'InvalidArgument', /integer/);
});

test('touching buckets and gaps are allowed; a key in a gap is null and never builds', () => {
  const cache = new BucketedCompileCache(Device.Cpu, ranges([[0, 4], [4, 8], [16, 32]]));
  try {
    assert.equal(cache.bucketFor(0), 0, 'key 0 is legal when a bucket holds it');
    assert.equal(cache.bucketFor(4), 1);
    assert.equal(cache.bucketFor(10), null);
    assert.equal(cache.bucketFor(32), null);
    let calls = 0;
    const build = (upper) => {
      calls += 1;
      return rowGraph(upper);
    };
    assert.equal(cache.getOrCompile(10, build), null);
    assert.equal(cache.getOrCompile(1000, build), null);
    assert.equal(cache.runPadded(12, 12, build, [{ name: 'x', data: ramp(48), inner: 4 }], [4, 0]), null);
    assert.equal(calls, 0, 'build is not called out of range');
    assert.equal(cache.compiledCount(), 0);
    assert.equal(cache.stats().outOfRange, 3);
  } finally {
    cache.delete();
  }
});

test('a bucket compiles once at upper = end - 1; later calls reuse it without building', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 64);
  try {
    const uppers = [];
    const build = (upper) => {
      uppers.push(upper);
      return rowGraph(upper);
    };
    const first = cache.getOrCompile(10, build);
    assert.equal(first.upper, 16);
    assert.deepEqual(first.graph.inputShape('x'), [16, 4]);
    for (const key of [9, 12, 16]) assert.equal(upperOf(cache.getOrCompile(key, build)), 16);
    assert.equal(upperOf(cache.getOrCompile(1, build)), 8);
    assert.deepEqual(uppers, [16, 8]);
    assert.equal(cache.compiledCount(), 2);
    const stats = cache.stats();
    assert.equal(stats.compiles, 2);
    assert.equal(stats.hits, 3);
    assert.equal(stats.buckets[1].hits, 3);
    assert.equal(stats.buckets[1].compiled, true);
    assert.equal(stats.buckets[2].compiled, false);
    first.graph.delete();
  } finally {
    cache.delete();
  }
});

test('a throwing build propagates its own exception and leaves the bucket uncompiled', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 64);
  try {
    class Custom extends Error {}
    assert.throws(() => cache.getOrCompile(20, () => {
      throw new Custom('from build');
    }), (e) => e instanceof Custom && e.message === 'from build');
    assert.equal(cache.compiledCount(), 0);
    assert.equal(cache.stats().failedCompiles, 1);
    assertRungsError(() => cache.getOrCompile(20, () => 42), 'InvalidArgument', /build\(32\) returned a value of type number/);
    assertRungsError(() => cache.getOrCompile(20, (u) => {
      const g = new Graph();
      try {
        g.output('y', g.relu(g.input('x', [u + 1, 4])));
        g.output('y', g.relu(g.input('z', [u, 4])));
      } catch (e) {
        g.delete();  // build's own graph: the cache never received it
        throw e;
      }
      return g;
    }), 'InvalidArgument', /'y' is already used/);
    assert.equal(cache.compiledCount(), 0);
    // A later call retries and succeeds.
    assert.equal(upperOf(cache.getOrCompile(20, rowGraph)), 32);
    assert.equal(cache.compiledCount(), 1);
  } finally {
    cache.delete();
  }
});

test('runPadded pads to upper, runs, slices; output inner 0 or past the list is unsliced', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 64);
  try {
    for (const rows of [1, 5, 8, 9, 30, 64]) {
      const x = ramp(rows * 4, rows);
      const sliced = cache.runPadded(rows, rows, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]);
      const upper = sliced.upper;
      assert.equal(upper, Math.max(8, 2 ** Math.ceil(Math.log2(rows))));
      assert.equal(sliced.mode, 'padded', 'active extent off');
      const [y, s] = sliced.outputs;
      assert.equal(y.length, rows * 4, 'y sliced to the actual rows');
      for (let i = 0; i < y.length; ++i) assert.equal(y[i], Math.max(x[i], 0) * 2 + 1);
      assert.equal(s.length, 4, 'output past outputInners comes back unsliced');
      const unsliced = cache.runPadded(rows, rows, rowGraph, [{ name: 'x', data: x, inner: 4 }], [0, 0]);
      assert.equal(unsliced.outputs[0].length, upper * 4, 'inner 0: unsliced');
      for (let i = rows * 4; i < upper * 4; ++i) assert.equal(unsliced.outputs[0][i], 1, 'padded rows are zeros in');
      for (let c = 0; c < 4; ++c) {
        let want = 0;
        for (let r = 0; r < rows; ++r) want += x[r * 4 + c];
        assert.ok(Math.abs(s[c] - want) < 1e-4, 'padding adds zeros to the pooled sum');
      }
    }
    const stats = cache.stats();
    assert.equal(stats.runs, 12);
    assert.equal(stats.actualRows, 2 * (1 + 5 + 8 + 9 + 30 + 64));
    assert.equal(stats.paddedRows, 2 * (8 + 8 + 8 + 16 + 32 + 64));
    assert.ok(Math.abs(stats.waste - stats.paddedRows / stats.actualRows) < 1e-12);
    assert.equal(JSON.parse(cache.statsJson()).totals.padded_rows, stats.paddedRows, 'statsJson is the same stats');
  } finally {
    cache.delete();
  }
});

// Float32Array inputs take runPadded's staged path (index.js); other typed arrays the general one.
// The two must agree on everything: outputs, upper, mode, the stats they count, and the errors.
test('runPadded: the staged path (Float32Array) and the general path (Int32Array) agree', () => {
  const caches = [0, 1].map(() => BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 64));
  const [staged, general] = caches;
  try {
    for (const rows of [1, 7, 9, 33]) {
      const ints = Int32Array.from({ length: rows * 4 }, (_, i) => (i % 7) - 3);
      const a = staged.runPadded(rows, rows, rowGraph, [{ name: 'x', data: Float32Array.from(ints), inner: 4 }], [4]);
      const b = general.runPadded(rows, rows, rowGraph, [{ name: 'x', data: ints, inner: 4 }], [4]);
      assert.ok(a.outputs[0] instanceof Float32Array && a.outputs[1] instanceof Float32Array);
      assert.deepEqual(a, b, `rows ${rows}`);
      for (let i = 0; i < ints.length; ++i) assert.equal(a.outputs[0][i], Math.max(ints[i], 0) * 2 + 1);
    }
    for (const cache of caches) cache.setActiveExtent(true);
    const x = new Float32Array(3 * 4).fill(2);
    const active = staged.runPadded(3, 3, rowGraph, [{ name: 'x', data: x, inner: 4 }], [4]);
    assert.deepEqual(active, general.runPadded(3, 3, rowGraph, [{ name: 'x', data: Int32Array.from(x), inner: 4 }], [4]));
    assert.equal(active.mode, 'active');
    assert.equal(staged.runPadded(65, 65, rowGraph, [{ name: 'x', data: new Float32Array(65 * 4), inner: 4 }], [4]), null);
    assert.equal(general.runPadded(65, 65, rowGraph, [{ name: 'x', data: new Int32Array(65 * 4), inner: 4 }], [4]), null);
    // Counters equal; the timings (…Ms) are the clock's.
    const counts = (stats) => JSON.parse(JSON.stringify(stats, (k, v) => (k.endsWith('Ms') ? undefined : v)));
    assert.deepEqual(counts(staged.stats()), counts(general.stats()));
    const errorOf = (f) => {
      try {
        f();
      } catch (e) {
        return `${e.constructor.name} ${e.code}: ${e.message}`;
      }
      return 'no error';
    };
    const errors = (cache, make) => [
      errorOf(() => cache.runPadded(5, 4, rowGraph, [{ name: 'x', data: make(20), inner: 4 }], [4])),
      errorOf(() => cache.runPadded(5, 5, rowGraph, [{ name: 'q', data: make(20), inner: 4 }], [4])),
      errorOf(() => cache.runPadded(20, 20, () => 'no graph', [{ name: 'x', data: make(80), inner: 4 }], [4])),
    ];
    const stagedErrors = errors(staged, (n) => new Float32Array(n));
    assert.match(stagedErrors[0], /^Error ShapeMismatch: BucketedCompileCache\.runPadded: input 'x' holds 5 rows .* actualRows is 4/);
    assert.match(stagedErrors[1], /UnknownName: .*'q'/);
    assert.match(stagedErrors[2], /InvalidArgument: .*build\(32\) returned/);
    assert.deepEqual(stagedErrors, errors(general, (n) => new Int32Array(n)));
    assert.deepEqual(counts(staged.stats()), counts(general.stats()), 'errors leave both caches alike');
  } finally {
    for (const cache of caches) cache.delete();
  }
});

test('runPaddedMixed passes an input without rowInner through unpadded', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 4, 16);
  const build = (upper) => {
    const g = new Graph();
    g.output('y', g.add(g.input('x', [upper, 2]), g.input('b', [1, 2])));
    return g;
  };
  try {
    const x = new Float32Array([1, 2, 3, 4, 5, 6]);
    const b = new Float32Array([10, 20]);
    const run = cache.runPaddedMixed(3, 3, build, [{ name: 'x', data: x, rowInner: 2 }, { name: 'b', data: b, rowInner: null }], [2]);
    assert.equal(run.upper, 4);
    assert.deepEqual(Array.from(run.outputs[0]), [11, 22, 13, 24, 15, 26]);
    assertRungsError(() => cache.runPaddedMixed(3, 3, build, [{ name: 'x', data: x, rowInner: 2 }, { name: 'b', data: b, rowInner: 2 }], [2]),
      'ShapeMismatch', /'b'/);
  } finally {
    cache.delete();
  }
});

test('padRows and sliceRows, and their errors', () => {
  assert.deepEqual(Array.from(padRows(new Float32Array([1, 2, 3, 4]), 2, 3)), [1, 2, 3, 4, 0, 0]);
  assert.deepEqual(Array.from(sliceRows(new Float32Array([1, 2, 3, 4, 5, 6]), 2, 2)), [1, 2, 3, 4]);
  assertRungsError(() => padRows(new Float32Array(4), 0, 3), 'InvalidArgument');
  assertRungsError(() => padRows(new Float32Array(5), 2, 3), 'InvalidArgument');
  assertRungsError(() => padRows(new Float32Array(8), 2, 3), 'InvalidArgument', /exceed upper/);
  assertRungsError(() => sliceRows(new Float32Array(4), 2, 3), 'InvalidArgument', /exceed upper/);
  assertRungsError(() => padRows([1, 2], 2, 3), 'InvalidArgument', /Float32Array/);
});

test('ladder functions: geometric, linear, fromExtents, head, optimal, expectedWaste', () => {
  assert.deepEqual(ladder.geometric(8, 100, 2).map((r) => r.end - 1), [8, 16, 32, 64, 100]);
  assert.deepEqual(ladder.linear(8, 30, 8).map((r) => r.end - 1), [8, 16, 24, 30]);
  assert.deepEqual(ladder.fromExtents([8, 24, 64]), ranges([[1, 9], [9, 25], [25, 65]]));
  assert.deepEqual(ladder.withHead(ladder.powerOfTwo(8, 64)), ranges([[1, 2], [2, 3], [3, 5], [5, 9], [9, 17], [17, 33], [33, 65]]));
  assert.deepEqual(ladder.powerOfTwo(8, 64, true), ladder.withHead(ladder.powerOfTwo(8, 64)));
  assert.deepEqual(ladder.head, [1, 2, 4]);
  const keys = [3, 3, 3, 10, 10, 50];
  const best = ladder.optimal(keys, 3);
  assert.deepEqual(best.map((r) => r.end - 1), [3, 10, 50]);
  assert.equal(ladder.expectedWaste(best, keys), 1);
  assert.equal(ladder.optimal(new Uint32Array(keys), 3).length, 3);
  assert.equal(ladder.paddedRows(ladder.fromExtents([64]), keys), 64 * 6);
  assert.ok(Math.abs(ladder.expectedWaste(ladder.fromExtents([64]), keys) - 384 / 79) < 1e-12);
  const trace = ladder.lognormalTrace(40, 500, 256, 7);
  assert.equal(trace.length, 500);
  assert.ok(trace.every((n) => Number.isInteger(n) && n >= 1 && n <= 256));
  assert.deepEqual(ladder.lognormalTrace(40, 500, 256, 7), trace, 'same seed, same trace');
  assertRungsError(() => ladder.optimal([], 3), 'InvalidArgument');
  assertRungsError(() => ladder.expectedWaste(ladder.fromExtents([8]), [9]), 'InvalidArgument', /9/);
  assertRungsError(() => ladder.geometric(8, 100, 1), 'InvalidArgument');
  assertRungsError(() => ladder.validate(ranges([[1, 10], [5, 20]]), 'mine'), 'InvalidArgument', /mine/, /overlap/);
});

test('HirModule builds, ensureHirWithParams uploads params once, the cache policy is honoured', () => {
  const cache = BucketedCompileCache.powerOfTwoLadderWithPolicy(Device.Cpu, 4, 8, PrecisionPolicy.bf16Weights());
  assert.equal(cache.policy(), 'bf16_weights');
  let builds = 0;
  const build = (upper) => {
    builds += 1;
    const m = new HirModule();
    m.output('y', m.linear(m.input('x', [upper, 3]), 'fc', 2));
    const weight = new Float32Array([1, 0, 0, 1, 1, 1]);
    return [m, { 'fc.weight': weight, 'fc.bias': new Float32Array([0.5, -0.5]) }];
  };
  try {
    const entry = cache.ensureHirWithParams(3, build);
    assert.equal(entry.upper, 4);
    assert.equal(entry.graph.report().policy, 'bf16_weights');
    assert.deepEqual(entry.graph.paramNames().sort(), ['fc.bias', 'fc.weight']);
    assert.ok(entry.graph.paramIsSet('fc.weight'));
    assert.equal(upperOf(cache.ensureHirWithParams(2, build)), 4);
    assert.equal(builds, 1, 'already compiled: build not called');
    const run = cache.runPadded(2, 2, build, [{ name: 'x', data: new Float32Array([1, 2, 3, 4, 5, 6]), inner: 3 }], [2]);
    assert.deepEqual(Array.from(run.outputs[0]), [1 + 3 + 0.5, 2 + 3 - 0.5, 4 + 6 + 0.5, 5 + 6 - 0.5]);
    entry.graph.delete();
  } finally {
    cache.delete();
  }
});

test('a bucket graph handle outlives the cache it came from', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 4, 8);
  const { graph } = cache.getOrCompile(3, rowGraph);
  cache.delete();
  const [y] = graph.run({ x: new Float32Array(16).fill(-1) });
  assert.ok(y.every((v) => v === 1));
  graph.delete();
});

test('active extent computes only the real rows and says so in the stats', () => {
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 64).setActiveExtent(true);
  try {
    assert.equal(cache.activeExtent(), true);
    const rowLocal = (upper) => {
      const g = new Graph();
      g.output('y', g.relu(g.input('x', [upper, 4])));
      return g;
    };
    const x = ramp(20 * 4);
    const run = cache.runPadded(20, 20, rowLocal, [{ name: 'x', data: x, inner: 4 }], [4]);
    assert.equal(run.upper, 32);
    assert.equal(run.mode, 'active');
    for (let i = 0; i < 80; ++i) assert.equal(run.outputs[0][i], Math.max(x[i], 0));
    const stats = cache.stats();
    assert.equal(stats.activeRuns, 1);
    assert.equal(stats.computedRows, 20);
    assert.equal(stats.paddedRows, 32);
    assert.equal(stats.buckets[2].activeSupported, true);
  } finally {
    cache.delete();
  }
});
