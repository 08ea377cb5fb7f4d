// SPDX-License-Identifier: Apache-2.0
// Timing: warm up, calibrate a batch of calls per case, then time every case once per repetition
// in turn (so a burst of machine noise lands on all of them alike) and keep the median.
//
// Two clocks: wall time (performance.now) and the process's CPU time (process.cpuUsage: user +
// system, every thread of the process; the contenders are single-threaded, so it is the thread's
// time plus V8's background work such as GC). On a shared machine whose load exceeds its cores,
// wall time includes waiting for a core; CPU time does not, and its ratios are the steadier ones.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// A page has no process CPU clock (bench/wasm/browser.mjs --only peers runs this file there): cpu is null.
const hasCpuClock = typeof process === 'object' && typeof process.cpuUsage === 'function';

/** Starts both clocks; the returned function gives {wall, cpu} ms since (cpu null in a page). */
export function stopwatch() {
  const c0 = hasCpuClock ? process.cpuUsage() : null;
  const t0 = performance.now();
  return () => {
    const wall = performance.now() - t0;
    if (!c0) return { wall, cpu: null };
    const c = process.cpuUsage(c0);
    return { wall, cpu: (c.user + c.system) / 1000 };
  };
}

// fn may be sync or async; a sync result is not awaited (no microtask for the sync peers).
async function call(fn) {
  const r = fn();
  if (r && typeof r.then === 'function') await r;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const processCpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/**
 * Waits until `cpuMs()` (CPU ms used so far: this process's by default) grows by less than
 * `busyFraction` of a core in a `windowMs` window (V8 compiling the engines' wasm on its background
 * threads, lib/eager-wasm.mjs), at most `maxMs`. Returns {ms, quiet}.
 */
export async function waitForQuiet({ cpuMs = processCpuMs, windowMs = 200, busyFraction = 0.1, maxMs = 60_000 } = {}) {
  const t0 = performance.now();
  for (;;) {
    const c0 = cpuMs();
    await sleep(windowMs);
    const quiet = cpuMs() - c0 < busyFraction * windowMs;
    if (quiet || performance.now() - t0 > maxMs) return { ms: performance.now() - t0, quiet };
  }
}

/**
 * cases: [{name, fn}]. Returns Map name -> {wall, cpu: median per-call ms, samples, calls}.
 * Each repetition times a batch of at least `minBatchMs` of calls of each case. `settleMs` > 0
 * pauses before every batch: multi-threaded engines keep their workers spinning for a while after
 * a call (onnxruntime does by default), and without a pause those spinning workers hold the cores
 * the next case's batch needs, whichever engine comes next.
 */
export async function sideBySide(cases, { warmup = 3, warmupMs = 200, reps = 11, minBatchMs = 40, settleMs = 0 } = {}) {
  const calls = new Map();
  for (const c of cases) {
    // The batch size from the fastest warm-up call: the first calls carry one-time costs (the
    // encoder's first 2-thread call took 3x a steady one), and a batch sized from their mean held
    // 2 calls instead of 8, so one slow call after each pause weighed half the sample.
    // Warm-up: at least `warmup` calls and `warmupMs` (the encoder's 2-thread batches after 3
    // warm-up calls still ran 3x slow for two repetitions).
    let per = Infinity;
    for (let i = 0, w0 = performance.now(); i < warmup || performance.now() - w0 < warmupMs; ++i) {
      const t0 = performance.now();
      await call(c.fn);
      per = Math.min(per, performance.now() - t0);
    }
    calls.set(c.name, Math.max(1, Math.ceil(minBatchMs / Math.max(per, 1e-3))));
  }
  const samples = new Map(cases.map((c) => [c.name, []]));
  for (let r = 0; r < reps; ++r)
    for (const c of cases) {
      const n = calls.get(c.name);
      if (settleMs > 0) await sleep(settleMs);
      const stop = stopwatch();
      for (let i = 0; i < n; ++i) await call(c.fn);
      const t = stop();
      samples.get(c.name).push({ wall: t.wall / n, cpu: t.cpu == null ? null : t.cpu / n });
    }
  const out = new Map();
  for (const c of cases) {
    const s = samples.get(c.name);
    out.set(c.name, { wall: median(s.map((x) => x.wall)), cpu: hasCpuClock ? median(s.map((x) => x.cpu)) : null, samples: s, calls: calls.get(c.name) });
  }
  return out;
}
