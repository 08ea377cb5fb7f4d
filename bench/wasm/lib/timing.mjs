// Timing: warm up, calibrate a batch of calls per case, then time every case once per repetition
// in turn (so a burst of machine noise lands on all of them alike) and keep the median.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// fn may be sync or async; a sync result is not awaited (no microtask for the sync peers).
async function call(fn) {
  const r = fn();
  if (r && typeof r.then === 'function') await r;
}

/**
 * cases: [{name, fn}]. Returns Map name -> {ms: median per-call ms, samples, calls}.
 * Each repetition times a batch of at least `minBatchMs` of calls of each case.
 */
export async function sideBySide(cases, { warmup = 3, reps = 7, minBatchMs = 30 } = {}) {
  const calls = new Map();
  for (const c of cases) {
    const t0 = performance.now();
    for (let i = 0; i < warmup; ++i) await call(c.fn);
    const per = (performance.now() - t0) / warmup;
    calls.set(c.name, Math.max(1, Math.ceil(minBatchMs / Math.max(per, 1e-3))));
  }
  const samples = new Map(cases.map((c) => [c.name, []]));
  for (let r = 0; r < reps; ++r)
    for (const c of cases) {
      const n = calls.get(c.name);
      const t0 = performance.now();
      for (let i = 0; i < n; ++i) await call(c.fn);
      samples.get(c.name).push((performance.now() - t0) / n);
    }
  const out = new Map();
  for (const c of cases) out.set(c.name, { ms: median(samples.get(c.name)), samples: samples.get(c.name), calls: calls.get(c.name) });
  return out;
}
