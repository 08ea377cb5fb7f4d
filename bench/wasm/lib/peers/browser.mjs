// SPDX-License-Identifier: Apache-2.0
// rungs against tfjs-backend-wasm and onnxruntime-web in a page of headless Chromium, the same
// thread count for all three (issue #17): bench/wasm/browser.mjs --only peers bundles this file
// with esbuild (a page cannot resolve npm package names), serves it, and calls runPeers() in a page
// per thread count (1: not cross-origin isolated, every engine on its single-threaded binary; N:
// isolated, rungs' threaded variant, tfjs' threaded SIMD binary, ORT numThreads N).
//
// The rows are bench/wasm/run.mjs's, through the same peer modules: square matmul 128/256/512 (B a
// fixed weight), the bundled mlp at 16/64/256 rows, the bundled encoder at 256 tokens; then the
// bundled 2,000-request trace through the encoder: rungs' BucketedCompileCache (power of two
// 8..256 with active extent), tfjs and ORT at exact shapes. Every output is checked against the
// others (|a - b| <= 1e-4 * max(1, |b|)) before anything is timed (the trace: every request of the
// first pass). Kernels: lib/timing.mjs's sideBySide (interleaved batches, medians); trace: passes
// interleaved by chunks of 50 requests, a first pass from a fresh cache / session (compiles and
// set-up included) and warm passes (median). With N > 1 threads rungs is timed first, then the
// peers (as bench/wasm/run.mjs does), and every timed batch and chunk waits 100 ms first: the
// engines' workers spin for a while after a call and would take the next contender's cores.
// With N > 1 the trace also runs rungs on one thread in the same page, chunk by chunk beside its
// N-thread cache (the same variant, the same pauses): the page's own N threads / 1 ratio, where
// the 1-thread page differs in more than the thread count (the single-threaded variant, no pauses).
import { check, uniform } from '../harness.mjs';
import { modelFromBytes } from '../model.mjs';
import { median, sideBySide } from '../timing.mjs';
import { checkTrace, encoderShapes, exactScheme, rungsScheme, runGroup, traceRequests } from '../trace.mjs';
import * as ortPeer from './ort.mjs';
import * as rungsPeer from './rungs.mjs';
import * as tfjsPeer from './tfjs.mjs';

export { Mismatch } from '../harness.mjs';

const TOL = 1e-4;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fetchModel(name) {
  const jsonText = await (await fetch(`/examples/models/${name}.json`)).text();
  const weights = JSON.parse(jsonText).weights;
  return modelFromBytes(jsonText, new Uint8Array(await (await fetch(`/examples/models/${weights}`)).arrayBuffer()), weights);
}

/**
 * pkg: rungs' package, imported by the page; `requests`: the trace's first so many (null: all).
 * Returns {environment, kernels: [row], trace};
 * a row's ms are {rungs, tfjs, ort}. `quiet()` resolves once the browser is idle (the engines'
 * wasm compiled), `progress(text)` reports.
 */
export async function runPeers({ pkg, threads: T, reps, traceReps, requests = null, quiet, progress }) {
  const rungs = rungsPeer.use(pkg, '/pkg/');
  if (rungs.maxThreads < T) throw new Error(`the page runs rungs on at most ${rungs.maxThreads} threads (${pkg.threading().variant} variant)`);
  const environment = {
    rungs: rungs.info,
    tfjs: await tfjsPeer.init(T, { wasmPaths: '/tfjs/' }),
    ort: await ortPeer.init(T, { wasmPaths: '/ort/' }),
    isolated: globalThis.crossOriginIsolated,
    userAgent: navigator.userAgent,
  };
  const models = { mlp: await fetchModel('mlp'), encoder: await fetchModel('encoder') };
  environment.quiet = await quiet();
  const settleMs = T > 1 ? 100 : 0;
  // At one thread the three engines are timed in turn. At more, as bench/wasm/run.mjs does, rungs
  // first, then the peers, each group's runners created and disposed in turn: a live threaded
  // session's workers take a core from whoever runs beside it.
  const groups = T > 1 ? [['rungs'], ['tfjs', 'ort']] : [['rungs', 'tfjs', 'ort']];

  // ---------------------------------------------------------------- kernels
  const cases = [
    ...[128, 256, 512].map((n) => ({ kind: 'matmul', n, name: `matmul ${n}x${n}x${n}`, flops: 2 * n ** 3 })),
    ...[16, 64, 256].map((e) => ({ kind: 'mlp', n: e, name: `mlp rows=${e}`, flops: 2 * e * (64 * 256 + 256 * 64) })),
    { kind: 'encoder', n: 256, name: 'encoder tokens=256', flops: null },
  ];
  const kernels = [];
  for (const cs of cases) {
    progress(`${T} thread${T > 1 ? 's' : ''}: ${cs.name}`);
    const m = models[cs.kind === 'matmul' ? 'mlp' : cs.kind];
    const shapes = cs.kind === 'encoder' ? () => ({ ids: [1, cs.n], mask: [1, cs.n] }) : () => ({ x: [cs.n, 64] });
    const input = cs.kind === 'matmul' ? uniform(cs.n * cs.n, 1)
      : cs.kind === 'encoder' ? { ids: Float32Array.from({ length: cs.n }, (_, t) => 1 + ((t * 7919) % 999)), mask: new Float32Array(cs.n).fill(1) }
      : { x: uniform(cs.n * 64, 3) };
    const B = cs.kind === 'matmul' ? uniform(cs.n * cs.n, 2) : null;
    const makers = {
      rungs: () => (cs.kind === 'matmul' ? rungsPeer.matmul(cs.n, B, T) : rungsPeer.model(m, cs.n, T)),
      tfjs: () => (cs.kind === 'matmul' ? tfjsPeer.matmul(cs.n, B) : tfjsPeer.model(m, shapes)),
      ort: () => (cs.kind === 'matmul' ? ortPeer.matmul(cs.n, B) : ortPeer.model(m, cs.n, shapes)),
    };
    const first = async (r) => (cs.kind === 'matmul' ? await r.run(input) : (await r.run(input))[0]);
    const outs = {};
    const ms = {};
    for (const group of groups) {
      const runners = {};
      for (const k of group) runners[k] = await makers[k]();
      for (const k of group) outs[k] = await first(runners[k]);
      const t = await sideBySide(group.map((k) => ({ name: k, fn: () => runners[k].run(input) })), { reps, settleMs });
      for (const r of Object.values(runners)) r.dispose();
      for (const [k, v] of t) ms[k] = v.wall;
      // After rungs' group, what every engine pays for its result alone: a fresh Float32Array the
      // size of the output, written once (a page's first write faults it in;
      // docs/results-threads.md). Timed on its own, not in the engines' rotation: a 40 ms batch
      // of the encoder's 128-float arrays is some 40,000 of them, and collecting that garbage ran
      // through the next batch in the rotation, rungs' (its first calls 13-28 ms, 9 alone).
      if (group.includes('rungs')) {
        const length = outs.rungs.length;
        ms.fresh = (await sideBySide([{ name: 'fresh', fn: () => new Float32Array(length).fill(1) }], { reps })).get('fresh').wall;
      }
      if (settleMs) await sleep(settleMs);
    }
    let maxRelDiff = 0;
    for (const k of ['tfjs', 'ort']) maxRelDiff = Math.max(maxRelDiff, check(`${cs.name}: ${k} vs rungs`, outs[k], outs.rungs, TOL));
    check(`${cs.name}: ort vs tfjs`, outs.ort, outs.tfjs, TOL);
    kernels.push({ name: cs.name, flops: cs.flops, threads: T, maxRelDiff, outLength: outs.rungs.length, ms });
  }

  // ---------------------------------------------------------------- trace
  const enc = models.encoder;
  const lengths = (await (await fetch('/examples/traces/chat-lognormal-2000.txt')).text()).split('\n').filter((l) => l.trim()).map(Number)
    .slice(0, requests ?? undefined);
  const reqs = traceRequests(lengths);
  const hir = rungsPeer.loadModel(enc);
  const r = rungsPeer.api();
  const pow2Active = () => {
    const cache = r.BucketedCompileCache.powerOfTwoLadder(r.Device.Cpu, 8, 256);
    cache.setActiveExtent(true);
    return cache;
  };
  const contenders = {
    rungs: rungsScheme('rungs', { reqs, hir, threads: T, make: pow2Active }),
    rungs1: rungsScheme('rungs1', { reqs, hir, threads: 1, make: pow2Active }),
    tfjs: exactScheme('tfjs', { reqs, make: () => tfjsPeer.model(enc, encoderShapes) }),
    ort: exactScheme('ort', { reqs, make: () => ortPeer.model(enc, null, encoderShapes) }),
  };
  const settle = () => (settleMs ? sleep(settleMs) : null);
  const live = [];
  const traceGroups = T > 1 ? [['rungs', 'rungs1'], ['tfjs', 'ort']] : groups;
  for (const group of traceGroups) {
    const what = `${T} thread${T > 1 ? 's' : ''}: trace (${group.join(', ')})`;
    const gl = await runGroup(group.map((k) => contenders[k]), { requests: reqs.length, reps: traceReps, settle,
      progress: (text) => progress(`${what}, ${text}`) });
    for (const l of gl) l.inst.dispose();  // before the next group runs
    live.push(...gl);
  }
  const byName = Object.fromEntries(live.map((l) => [l.c.name, l]));
  checkTrace(live, byName.tfjs, reqs, TOL);
  const traceDiff = Math.max(...live.map((l) => l.maxRelDiff));
  const compiles = byName.rungs.st.compiles;
  const trace = {
    threads: T, requests: reqs.length, compiles, maxRelDiff: traceDiff,
    firstMs: Object.fromEntries(live.map((l) => [l.c.name, l.first.wall])),
    warmMs: Object.fromEntries(live.map((l) => [l.c.name, median(l.warm.map((t) => t.wall))])),
  };
  return { environment, kernels, trace };
}
