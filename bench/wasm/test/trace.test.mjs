// SPDX-License-Identifier: Apache-2.0
// node --test bench/wasm/test: the trace comparison both drivers share (lib/trace.mjs), with fake
// contenders: the interleaving, the first pass's kept outputs, the warm-up filter, the checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Mismatch, check } from '../lib/harness.mjs';
import { checkTrace, encoderShapes, exactScheme, freshPasses, rungsScheme, runGroup, traceRequests } from '../lib/trace.mjs';

test('traceRequests: deterministic ids in 1..999, every token real', () => {
  const reqs = traceRequests([3, 1]);
  assert.deepEqual(reqs.map((q) => q.len), [3, 1]);
  assert.deepEqual([...reqs[0].ids], [1, 1 + 7919 % 999, 1 + (2 * 7919) % 999]);
  assert.deepEqual([...reqs[1].ids], [1 + 131]);
  assert.deepEqual([...reqs[0].mask], [1, 1, 1]);
  assert.deepEqual(traceRequests([3, 1]), reqs);
  assert.deepEqual(encoderShapes(reqs[0]), { ids: [1, 3], mask: [1, 3] });
});

// A fake cache: records what the scheme asks of it; each output is [len, instance number].
function fakeCache(log, number, missing = new Set()) {
  const compiled = [];
  return {
    ensureHirWithParams(len, hir, params) {
      compiled.push(len);
      log.push(['compile', number, len, hir, params.threads]);
      return { graph: { delete: () => log.push(['delete graph', number, len]) } };
    },
    runPadded(len, active, model, inputs, inners) {
      if (missing.has(len)) return null;
      assert.equal(len, active);
      assert.deepEqual(inputs.map((x) => [x.name, x.data.length, x.inner]), [['ids', len, 1], ['mask', len, 1]]);
      assert.deepEqual(inners, [0]);
      log.push(['run', number, len, typeof model]);
      return { outputs: [Float32Array.of(len, number)] };
    },
    stats: () => ({ compiles: compiled.length }),
    delete: () => log.push(['delete', number]),
  };
}

test('rungsScheme compiles a length once, with the threads asked for, and runs every request padded', () => {
  const reqs = traceRequests([4, 2, 4, 8]);
  const log = [];
  let made = 0;
  const hir = { name: 'hir' };
  const c = rungsScheme('rungs', { reqs, hir, threads: 2, make: () => fakeCache(log, ++made) });
  const inst = c.fresh();
  const outs = new Array(4);
  inst.run(0, 3, outs);
  inst.run(3, 4, null);
  assert.deepEqual(outs.slice(0, 3).map((y) => [...y]), [[4, 1], [2, 1], [4, 1]]);
  assert.equal(outs[3], undefined);
  assert.deepEqual(log.filter((e) => e[0] === 'compile').map((e) => e.slice(2)), [[4, hir, 2], [2, hir, 2], [8, hir, 2]]);
  assert.equal(log.filter((e) => e[0] === 'delete graph').length, 3);
  assert.deepEqual(inst.stats(), { compiles: 3 });
  // model defaults to hir; a build function can be given instead.
  assert.ok(log.filter((e) => e[0] === 'run').every((e) => e[3] === 'object'));
  const built = rungsScheme('built', { reqs, hir, model: (upper) => upper, threads: 1, make: () => fakeCache(log, ++made) }).fresh();
  built.run(0, 1, null);
  assert.equal(log.at(-1)[3], 'function');
  inst.dispose();
  assert.deepEqual(log.at(-1), ['delete', 1]);
});

test('rungsScheme names the scheme and the length when no bucket holds it', () => {
  const reqs = traceRequests([300]);
  const c = rungsScheme('rungs (a)', { reqs, hir: {}, threads: 1, make: () => fakeCache([], 1, new Set([300])) });
  assert.throws(() => c.fresh().run(0, 1, null), /^Error: rungs \(a\): length 300 has no bucket$/);
});

test('exactScheme runs sync and async peers at each exact shape and keeps the first output', async () => {
  const reqs = traceRequests([2, 5]);
  for (const async of [false, true]) {
    let disposed = 0;
    const seen = [];
    const c = exactScheme('peer', { reqs, make: async () => ({
      run(inputs) {
        seen.push(inputs.ids.length, inputs.mask.length);
        const y = [Float32Array.of(inputs.ids.length), 'second output'];
        return async ? Promise.resolve(y) : y;
      },
      dispose: () => ++disposed,
    }) });
    const inst = await c.fresh();
    const outs = new Array(2);
    await inst.run(0, 2, outs);
    assert.deepEqual(seen, [2, 2, 5, 5]);
    assert.deepEqual(outs.map((y) => [...y]), [[2], [5]]);
    assert.equal(inst.stats(), null);
    inst.dispose();
    assert.equal(disposed, 1);
  }
});

// A contender whose runs append [name, from, to] to `order` and whose outputs are the request index.
function recorder(name, order, { cpu = true } = {}) {
  return {
    name,
    fresh: async () => ({
      run(from, to, outs) {
        order.push([name, from, to, !!outs]);
        if (outs) for (let i = from; i < to; ++i) outs[i] = Float32Array.of(i);
      },
      stats: () => ({ name }),
      dispose: () => order.push([name, 'dispose']),
    }),
    cpu,
  };
}

test('runGroup: warm-up on the accepted contenders, then chunks interleaved, first pass kept, warm passes timed', async () => {
  const order = [];
  let settles = 0;
  const progress = [];
  const live = await runGroup([recorder('a', order), recorder('b', order)], {
    requests: 5, reps: 2, chunk: 2, settle: () => ++settles, progress: (t) => progress.push(t), warmUp: (c) => c.name === 'a' });
  assert.deepEqual(order.slice(0, 2), [['a', 0, 1, false], ['a', 'dispose']]);
  const pass = (keep) => [['a', 0, 2, keep], ['b', 0, 2, keep], ['a', 2, 4, keep], ['b', 2, 4, keep], ['a', 4, 5, keep], ['b', 4, 5, keep]];
  assert.deepEqual(order.slice(2), [...pass(true), ...pass(false), ...pass(false)]);
  // One settle before each of the 3 passes' 6 timed chunks, and one after the group.
  assert.equal(settles, 3 * 6 + 1);
  assert.deepEqual(progress, ['process warm-up (a throwaway cache / session per engine)',
    'first pass (fresh caches and sessions, compiles included)', 'warm pass 1/2', 'warm pass 2/2']);
  assert.deepEqual(live.map((l) => l.c.name), ['a', 'b']);
  for (const l of live) {
    assert.deepEqual(l.outputs.map((y) => y[0]), [0, 1, 2, 3, 4]);
    assert.deepEqual(l.st, { name: l.c.name });
    assert.equal(l.warm.length, 2);
    assert.ok(l.first.wall >= l.setup.wall, 'the first pass includes the set-up');
    assert.ok(l.warm.every((t) => t.wall >= 0 && t.cpu >= 0));
  }
});

test('checkTrace: the worst relative difference per contender, and a Mismatch naming the request', () => {
  const reqs = traceRequests([1, 2]);
  const mk = (name, outs) => ({ c: { name }, outputs: outs });
  const ref = mk('ref', [Float32Array.of(1), Float32Array.of(10, 20)]);
  const close = mk('close', [Float32Array.of(1.00001), Float32Array.of(10, 20.001)]);
  const live = [close, ref];
  checkTrace(live, ref, reqs, 1e-4);
  assert.equal(ref.maxRelDiff, 0);
  assert.ok(Math.abs(close.maxRelDiff - 5e-5) < 1e-6, `${close.maxRelDiff}`);
  assert.ok(live.every((l) => l.outputs === null), 'the kept outputs are dropped');
  const far = mk('far', [Float32Array.of(1), Float32Array.of(10, 21)]);
  const ref2 = mk('ref', [Float32Array.of(1), Float32Array.of(10, 20)]);
  assert.throws(() => checkTrace([far, ref2], ref2, reqs, 1e-4), (e) => e instanceof Mismatch && /^encoder, request 1 \(length 2\): far vs ref/.test(e.message));
});

// A fake contender for freshPasses: each pass "computes" every request's output (its length
// times `scale`), logs what ran, and reports a made-up reading.
function fakePass(log, name, scale, wall) {
  return async (keep) => {
    log.push(`${name}${keep ? ' kept' : ''}`);
    const reqs = [{ len: 2 }, { len: 5 }];
    return { t: { wall, cpu: wall / 2 }, outputs: keep ? reqs.map((q) => [q.len * scale]) : null, stats: { compiles: name.length } };
  };
}

test('freshPasses: one checked pass each, the differences against ref, then reps passes contender by contender', async () => {
  const log = [];
  const settles = [];
  const reqs = [{ len: 2 }, { len: 5 }];
  const r = await freshPasses({ a: fakePass(log, 'a', 1.0001, 3), ref: fakePass(log, 'ref', 1, 7) }, {
    ref: 'ref', reqs, reps: 2, compare: (what, y, b) => check(what, y, b, 1e-3), settle: () => settles.push(log.length),
  });
  assert.deepEqual(log, ['a kept', 'ref kept', 'a', 'ref', 'a', 'ref']);
  assert.deepEqual(settles, [2, 3, 4, 5], 'settle() before every timed pass, none before the checked ones');
  assert.deepEqual(r.names, ['a', 'ref']);
  assert.deepEqual(r.stats, { a: { compiles: 1 }, ref: { compiles: 3 } });
  assert.equal(r.diffs.ref, 0);
  assert.ok(Math.abs(r.diffs.a - 1e-4) < 1e-12, `worst over the requests: ${r.diffs.a}`);  // |5.0005 - 5| / 5
  assert.deepEqual(r.samples, { a: [{ wall: 3, cpu: 1.5 }, { wall: 3, cpu: 1.5 }], ref: [{ wall: 7, cpu: 3.5 }, { wall: 7, cpu: 3.5 }] });
});

test('freshPasses: a mismatch names the request and stops before any timed pass; an unknown ref is an error', async () => {
  const log = [];
  const reqs = [{ len: 2 }, { len: 5 }];
  await assert.rejects(freshPasses({ a: fakePass(log, 'a', 2, 1), ref: fakePass(log, 'ref', 1, 1) }, {
    ref: 'ref', reqs, reps: 3, compare: (what, y, b) => check(what, y, b, 1e-3),
  }), (e) => e instanceof Mismatch && /^trace request 0 \(length 2\): a: outputs differ at \[0\]: 4 vs 2/.test(e.message));
  assert.deepEqual(log, ['a kept', 'ref kept']);
  await assert.rejects(freshPasses({ a: fakePass([], 'a', 1, 1) }, { ref: 'ort', reqs, reps: 1, compare: () => 0 }), /no contender named 'ort'/);
});
