// SPDX-License-Identifier: Apache-2.0
// The encoder-over-a-trace comparison both drivers run: bench/wasm/run.mjs in Node and
// lib/peers/browser.mjs in a page of headless Chromium. A contender is {name, fresh()}; fresh()
// makes an instance {run(from, to, outs | null), stats(), dispose()} (its set-up is timed with it);
// run() runs requests [from, to) and, given `outs`, keeps each request's first output there.
//
// rungsScheme: a BucketedCompileCache, each bucket compiled with CompileOptions.threads on a
// length's first request (runPadded alone would compile with the default, 0 = every core), every
// request padded to its bucket (or run at its own extent with active extent on).
// exactScheme: a peer's runner at each request's exact shape.
// runGroup: one group of contenders, interleaved by chunks of requests (each runs a chunk in turn),
// so that load from elsewhere on the machine lands on all of them alike: a process warm-up, a first
// pass from fresh instances (set-up and compiles included, outputs kept), then warm passes.
// freshPasses: whole passes, each from a fresh cache / session (the ONNX encoders' trace in both
// drivers, the encoder's in bench/native/run.mjs), contender by contender.
import { check } from './harness.mjs';
import { stopwatch } from './timing.mjs';

/** The trace's requests as bench/cache/bucket_bench.cpp makes them: deterministic ids, every token real. */
export function traceRequests(lengths) {
  return lengths.map((len, i) => ({
    len,
    ids: Float32Array.from({ length: len }, (_, t) => 1 + ((i * 131 + t * 7919) % 999)),
    mask: new Float32Array(len).fill(1),
  }));
}

/** The encoder's input shapes for one request of traceRequests(). */
export const encoderShapes = (inp) => ({ ids: [1, inp.ids.length], mask: [1, inp.mask.length] });

/**
 * `make()` returns a fresh cache; `model` is what runPadded builds from (a LoadedModel or a
 * build(upper) function), `hir` what ensureHirWithParams compiles (a LoadedModel).
 */
export function rungsScheme(name, { reqs, make, hir, model = hir, threads }) {
  return {
    name,
    fresh() {
      const cache = make();
      const seen = new Set();
      return {
        run(from, to, outs) {
          for (let i = from; i < to; ++i) {
            const q = reqs[i];
            if (!seen.has(q.len)) {
              seen.add(q.len);
              cache.ensureHirWithParams(q.len, hir, { threads })?.graph.delete();
            }
            const res = cache.runPadded(q.len, q.len, model, [{ name: 'ids', data: q.ids, inner: 1 }, { name: 'mask', data: q.mask, inner: 1 }], [0]);
            if (!res) throw new Error(`${name}: length ${q.len} has no bucket`);
            if (outs) outs[i] = res.outputs[0];
          }
        },
        stats: () => cache.stats(),
        dispose: () => cache.delete(),
      };
    },
  };
}

/** `make()` returns (or resolves to) a peer runner {run(inputs) -> outputs (or a promise), dispose()}. */
export function exactScheme(name, { reqs, make }) {
  return {
    name,
    fresh: async () => {
      const runner = await make();
      return {
        async run(from, to, outs) {
          for (let i = from; i < to; ++i) {
            // A sync peer's result is not awaited (no microtask per request; as lib/timing.mjs).
            let y = runner.run({ ids: reqs[i].ids, mask: reqs[i].mask });
            if (typeof y?.then === 'function') y = await y;
            if (outs) outs[i] = y[0];
          }
        },
        stats: () => null,
        dispose: () => runner.dispose(),
      };
    },
  };
}

const addClock = (a, b) => (a === null || b === null ? null : a + b);

/**
 * One pass over `requests` for every live contender ({inst, outputs}), chunk by chunk, each
 * contender a chunk in turn; `settle()` (may return a promise) runs before each timed chunk.
 * Returns each contender's {wall, cpu} (cpu null where the clock has none).
 */
export async function interleavedPass(live, { requests, keep, chunk = 50, settle = () => null }) {
  const ms = live.map(() => ({ wall: 0, cpu: 0 }));
  for (let from = 0; from < requests; from += chunk) {
    const to = Math.min(requests, from + chunk);
    for (const [k, l] of live.entries()) {
      await settle();
      const stop = stopwatch();
      await l.inst.run(from, to, keep ? l.outputs : null);
      const t = stop();
      ms[k].wall += t.wall;
      ms[k].cpu = addClock(ms[k].cpu, t.cpu);
    }
  }
  return ms;
}

/**
 * One group of contenders: a process warm-up (a throwaway instance of each contender `warmUp`
 * accepts runs the first request, so that one-time costs of the process, such as the engine's wasm
 * tiering up, do not land on whichever contender happens to run first), a first pass from fresh
 * instances (set-up timed and included; outputs kept), then `reps` warm passes, and a last
 * settle() before the next group.
 * Returns [{c, inst, first: {wall, cpu}, warm: [{wall, cpu}], st: stats after the first pass,
 * outputs}]; the caller disposes of each inst.
 */
export async function runGroup(group, { requests, reps, settle = () => null, progress = () => {}, warmUp = () => true, chunk = 50 }) {
  progress('process warm-up (a throwaway cache / session per engine)');
  for (const c of group.filter(warmUp)) {
    const inst = await c.fresh();
    await inst.run(0, 1, null);
    inst.dispose();
  }
  progress('first pass (fresh caches and sessions, compiles included)');
  const live = [];
  for (const c of group) {
    const stop = stopwatch();
    const inst = await c.fresh();
    live.push({ c, inst, setup: stop(), outputs: new Array(requests), warm: [] });
  }
  const firstMs = await interleavedPass(live, { requests, keep: true, chunk, settle });
  for (const [k, l] of live.entries()) {
    l.first = { wall: l.setup.wall + firstMs[k].wall, cpu: addClock(l.setup.cpu, firstMs[k].cpu) };
    l.st = l.inst.stats();
  }
  for (let rep = 0; rep < reps; ++rep) {
    progress(`warm pass ${rep + 1}/${reps}`);
    const ms = await interleavedPass(live, { requests, keep: false, chunk, settle });
    for (const [k, l] of live.entries()) l.warm.push(ms[k]);
  }
  await settle();
  return live;
}

/**
 * Every request's first output of each live contender against `ref`'s (|a - b| <= tol * max(1, |b|);
 * a mismatch throws lib/harness.mjs's Mismatch); sets each contender's maxRelDiff and drops the
 * kept outputs. `reqs` names the requests in the message.
 */
export function checkTrace(live, ref, reqs, tol) {
  for (const l of live) {
    if (l === ref) continue;
    let worst = 0;
    for (let i = 0; i < reqs.length; ++i)
      worst = Math.max(worst, check(`encoder, request ${i} (length ${reqs[i].len}): ${l.c.name} vs ${ref.c.name}`, l.outputs[i], ref.outputs[i], tol));
    l.maxRelDiff = worst;
  }
  ref.maxRelDiff = 0;
  for (const l of live) l.outputs = null;
}

/**
 * Whole passes over a trace, each from a fresh cache / session (set-up and compiles included):
 * `passes` maps a contender's name to async (keep) => { t: a stopwatch() reading, outputs (kept
 * when `keep`), stats }. First one checked pass each: every request's output of every other
 * contender against `ref`'s, by `compare(label, output, refOutput)` (the relative difference; a
 * Mismatch throws). Then `reps` timed passes, contender by contender, settle() before each.
 * Returns { names, stats: name -> the checked pass's stats, diffs: name -> the largest difference
 * (0 for `ref`), samples: name -> [{ wall, cpu }] }.
 */
export async function freshPasses(passes, { ref, reqs, reps, compare, settle = () => null, progress = () => {} }) {
  const names = Object.keys(passes);
  if (!names.includes(ref)) throw new Error(`freshPasses: no contender named '${ref}'`);
  progress('checked pass');
  const first = {};
  for (const n of names) first[n] = await passes[n](true);
  const diffs = { [ref]: 0 };
  for (const n of names.filter((x) => x !== ref)) {
    let worst = 0;
    first[n].outputs.forEach((y, i) => {
      worst = Math.max(worst, compare(`trace request ${i} (length ${reqs[i].len}): ${n}`, y, first[ref].outputs[i]));
    });
    diffs[n] = worst;
  }
  const stats = Object.fromEntries(names.map((n) => [n, first[n].stats]));
  for (const n of names) first[n] = null;  // the outputs go before the timed passes
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let rep = 0; rep < reps; ++rep) {
    progress(`pass ${rep + 1}/${reps}`);
    for (const n of names) {
      await settle();
      samples[n].push((await passes[n](false)).t);
    }
  }
  return { names, stats, diffs, samples };
}
