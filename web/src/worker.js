// SPDX-License-Identifier: Apache-2.0
// The demo's Web Worker: owns the rungs wasm module and runs every request through a real
// BucketedCompileCache, so the page stays responsive. Protocol (docs/web.md):
//
//   page -> worker
//     { type: 'plan', planId, traffic, schemes }      traffic spec + scheme specs
//     { type: 'run', runId, model, modelUrls, active, repetitions, lengths, schemes: [{ ranges }] }
//     { type: 'cancel', runId }
//     { type: 'load-onnx', loadId, fileName, bytes: ArrayBuffer, options: { bucketDim, fix } }
//                                                      a dropped or chosen .onnx (model name 'onnx')
//     { type: 'threads', id, size }                    time a size x size matmul on 1 and N threads
//     { type: 'text-load' | 'text-run', ... }          the "real text" mode (text-worker.js)
//   worker -> page
//     { type: 'ready', version, isa, variant, maxThreads }   the module loaded (threading())
//     { type: 'threads', id, rows: [{ threads, ms, gflops }], equal } | { type: 'threads', id, error }
//     { type: 'plan', planId, lengths, problems, ladders: [{ ranges, error, field, expectedWaste, covered }] }
//     { type: 'scheme-start', runId, scheme, model }
//     { type: 'progress', runId, scheme, rep, done, events, stats?, heap? }   at most every ~80 ms
//     { type: 'scheme-done', runId, scheme, stats, reports, heap, totalMs, refused, repTotals, latency }
//     { type: 'done', runId } | { type: 'cancelled', runId } | { type: 'error', runId, message }
//     { type: 'onnx-loaded', loadId, fileName, bucketDim, inputs, outputs, paramCount }
//     { type: 'onnx-error', loadId, fileName, message, code }
//
// `stats` is the cache's own stats() object; the final one of a scheme is taken right after its
// last request, before the compiled-graph reports are read (reading one is a cache lookup, which
// would count as a hit).
import { BucketedCompileCache, Device, Graph, Session, cpuIsa, heapStats, ladder, loadModel, loadOnnx, threading, version } from 'rungs';
import { buildLadder, bucketOf } from './schemes.js';
import { onTextMessage } from './text-worker.js';
import { makeTraffic } from './traffic.js';

const post = (msg) => self.postMessage(msg);

let currentRun = null;  // the run id the page wants; older loops stop at their next yield
const models = new Map();  // name -> modelEntry(model)

// Yield to the event loop (so 'cancel' and new 'run' messages get in) without the 4 ms clamp of
// nested setTimeout.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldToEvents = () => new Promise((resolve) => {
  waiting.push(resolve);
  channel.port2.postMessage(0);
});

function describe(e) {
  if (e && e.code) return `${e.message} (${e.code})`;
  return e && e.message ? e.message : String(e);
}

// --------------------------------------------------------------------------------- models

// What the page needs of a model to feed it: how each input lies along the bucket dim (rows of
// rowValues values, or passed through whole) and each output's values per row (runPadded* slices
// it back; 0: returned whole), both as the library reports them for every model format.
function modelEntry(model) {
  return { model, layouts: model.inputLayouts(1), outputInners: model.outputInners() };
}

// An ONNX file: its Model says how each input lies along the bucket dim and what it feeds, and
// makes reproducible inputs itself (ids below the vocabulary, masks of ones).
function loadOnnxModel(msg) {
  const { loadId, fileName } = msg;
  let model;
  try {
    // The frontend names the model '<name>.onnx' in its messages.
    model = loadOnnx(new Uint8Array(msg.bytes), { ...msg.options, name: fileName.replace(/\.onnx$/i, '') });
    if (!model.bucketDim()) {
      const e = new Error(`${fileName}: the model has no symbolic dim left to bucket (every dim is fixed); ` +
        'the demo needs one: clear the fix that sets it');
      e.code = 'InvalidArgument';
      throw e;
    }
    const layouts = model.inputLayouts(2);
    const inner = layouts.find((l) => l.followsBucket && l.rowValues === null);
    if (inner) {
      const e = new Error(`${fileName}: input '${inner.name}' follows the bucket dim '${model.bucketDim()}' on an inner axis, ` +
        'so it cannot be padded by rows: choose another bucket dim');
      e.code = 'Unsupported';
      throw e;
    }
    model.syntheticInputs(2);  // fails early for an input the model cannot make
  } catch (e) {
    if (model) model.delete();
    post({ type: 'onnx-error', loadId, fileName, message: describe(e), code: e && e.code ? e.code : null });
    return;
  }
  const old = models.get('onnx');
  if (old) old.model.delete();
  const entry = modelEntry(model);
  const { layouts } = entry;
  models.set('onnx', entry);
  post({
    type: 'onnx-loaded',
    loadId,
    fileName,
    bucketDim: model.bucketDim(),
    inputs: layouts.map((l) => ({ name: l.name, dtype: l.dtype, role: l.role, rowValues: l.rowValues })),
    outputs: model.outputNames(),
    paramCount: model.paramCount(),
  });
}

async function getModel(name, urls) {
  if (models.has(name)) return models.get(name);
  if (name === 'onnx') throw new Error('no .onnx file is loaded: drop one on the page or choose one');
  const [jsonText, weights] = await Promise.all([
    fetch(urls.json).then((r) => {
      if (!r.ok) throw new Error(`${urls.json}: HTTP ${r.status}`);
      return r.text();
    }),
    fetch(urls.weights).then((r) => {
      if (!r.ok) throw new Error(`${urls.weights}: HTTP ${r.status}`);
      return r.arrayBuffer();
    }),
  ]);
  const model = loadModel(jsonText, new Uint8Array(weights), name);
  const entry = modelEntry(model);
  models.set(name, entry);
  return entry;
}

// Input values for a request of n rows (request i): the model's own reproducible inputs (ids below
// the vocabulary of the embedding they feed, masks of ones, values in [-1, 1]), the same bytes the
// CLI and the C++ API make.
function makeInputs(entry, n, i) {
  const data = entry.model.syntheticInputs(n, i + 1);
  return entry.layouts.map((l, j) => ({ name: l.name, data: data[j], rowInner: l.rowValues }));
}

// --------------------------------------------------------------------------------- plan

function plan(msg) {
  const { lengths, problems } = makeTraffic(msg.traffic, ladder.lognormalTrace);
  const ladders = msg.schemes.map((s) => {
    try {
      const ranges = buildLadder(s, ladder, lengths);
      const last = ranges[ranges.length - 1].end;
      const covered = lengths.filter((k) => bucketOf(ranges, k) >= 0);
      const expectedWaste = covered.length ? ladder.expectedWaste(ranges, covered) : null;
      return { ranges, error: null, expectedWaste, covered: covered.length, maxKey: last - 1 };
    } catch (e) {
      return { ranges: null, error: describe(e), field: e && e.field ? e.field : null };
    }
  });
  post({ type: 'plan', planId: msg.planId, lengths, problems, ladders });
}

// --------------------------------------------------------------------------------- run

function condenseReport(r) {
  return {
    isa: r.isa,
    policy: r.policy,
    passes: r.passes.map((p) => ({ name: p.name, ms: p.ms, nodesBefore: p.nodesBefore, nodesAfter: p.nodesAfter, changed: p.changed })),
    kernels: r.kernels.map((k) => ({ op: k.op, kernel: k.kernel, shape: k.shape })),
    arenaBytes: r.arenaBytes,
    intermediateBytes: r.intermediateBytes,
    paramBytes: r.paramBytes,
    compileMs: r.compileMs,
  };
}

// Nearest-rank percentile of sorted values (p in (0, 1]).
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length))) - 1];
}

// One pass of the requests through a fresh cache. The first repetition streams its requests to the
// page (the charts) and gives the scheme's stats and reports; later ones are timed only.
async function runOnce(runId, index, entry, active, lengths, ranges, rep, doneBefore, latencies) {
  const cache = new BucketedCompileCache(Device.Cpu, ranges);
  const streaming = rep === 0;
  try {
    cache.setActiveExtent(active);
    const events = [];
    let lastPost = performance.now();
    let lastYield = lastPost;
    let refused = 0;
    let totalMs = 0;
    for (let i = 0; i < lengths.length; i++) {
      const n = lengths[i];
      const inputs = makeInputs(entry, n, i);
      const compiledBefore = streaming ? cache.compiledCount() : 0;
      const t0 = performance.now();
      const run = cache.runPaddedMixed(n, n, entry.model, inputs, entry.outputInners);
      const ms = performance.now() - t0;
      totalMs += ms;
      if (run) latencies.push(ms);
      else refused++;
      if (streaming) {
        const bucket = run ? bucketOf(ranges, n) : -1;
        const event = { i, key: n, bucket, upper: run ? run.upper : null, ms, compiled: false, compileMs: 0 };
        if (cache.compiledCount() !== compiledBefore) {
          event.compiled = true;
          event.compileMs = cache.stats().buckets[bucket].compileMs;
        }
        events.push(event);
      }
      const now = performance.now();
      if (now - lastPost > 80 || i === lengths.length - 1) {
        const msg = { type: 'progress', runId, scheme: index, rep, done: doneBefore + i + 1, events: events.splice(0) };
        if (streaming) Object.assign(msg, { stats: cache.stats(), heap: heapStats() });
        post(msg);
        lastPost = now;
      }
      if (now - lastYield > 20) {
        await yieldToEvents();
        lastYield = performance.now();
        if (currentRun !== runId) return null;
      }
    }
    const out = { totalMs, refused, stats: null, reports: null, heap: null };
    if (streaming) {
      out.stats = cache.stats();
      out.reports = {};
      out.stats.buckets.forEach((b, j) => {
        if (!b.compiled) return;
        const e = cache.ensureHirWithParams(b.upper, entry.model);
        out.reports[j] = condenseReport(e.graph.report());
        e.graph.delete();
      });
      out.heap = heapStats();
    }
    return out;
  } finally {
    cache.delete();
  }
}

// The requests through a scheme `repetitions` times, each with a fresh cache: the first
// repetition's stats, reports and total, every repetition's total, and per-request latency
// percentiles over every request served in every repetition.
async function runScheme(runId, index, entry, active, lengths, ranges, repetitions) {
  post({ type: 'scheme-start', runId, scheme: index });
  const latencies = [];
  const totals = [];
  let first = null;
  for (let rep = 0; rep < repetitions; rep++) {
    const out = await runOnce(runId, index, entry, active, lengths, ranges, rep, rep * lengths.length, latencies);
    if (!out) return false;
    if (rep === 0) first = out;
    totals.push(out.totalMs);
  }
  latencies.sort((a, b) => a - b);
  const latency = { p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), count: latencies.length };
  post({
    type: 'scheme-done', runId, scheme: index, stats: first.stats, reports: first.reports, heap: first.heap,
    totalMs: first.totalMs, refused: first.refused, repTotals: totals, latency,
  });
  return true;
}

async function run(msg) {
  const { runId } = msg;
  currentRun = runId;
  try {
    const entry = await getModel(msg.model, msg.modelUrls);
    for (let s = 0; s < msg.schemes.length; s++) {
      if (currentRun !== runId) break;
      const ok = await runScheme(runId, s, entry, msg.active, msg.lengths, msg.schemes[s].ranges, msg.repetitions ?? 1);
      if (!ok) break;
    }
    post({ type: currentRun === runId ? 'done' : 'cancelled', runId });
  } catch (e) {
    post({ type: 'error', runId, message: describe(e) });
  }
}

// --------------------------------------------------------------------------------- threads

// One size x size x size matmul compiled with CompileOptions.threads 1 and maxThreads, each timed
// over enough runs for ~0.3 s, best of three rounds; the outputs must agree.
function compareThreads(msg) {
  const { size } = msg;
  const { maxThreads } = threading();
  const counts = maxThreads > 1 ? [1, maxThreads] : [1];
  const a = new Float32Array(size * size).map((_, i) => Math.sin(i * 0.37));
  const b = new Float32Array(size * size).map((_, i) => Math.cos(i * 0.11));
  const g = new Graph();
  g.output('y', g.matmul(g.input('a', [size, size]), g.input('b', [size, size])));
  const session = new Session(Device.Cpu);
  const rows = [];
  const outputs = [];
  try {
    for (const threads of counts) {
      const compiled = session.compile(g, { threads });
      try {
        outputs.push(compiled.run({ a, b })[0]);
        let reps = 1;
        for (let t0 = performance.now(); performance.now() - t0 < 50; reps++) compiled.run({ a, b });
        reps = Math.max(1, Math.round(reps * 6));
        let best = Infinity;
        for (let round = 0; round < 3; round++) {
          const t0 = performance.now();
          for (let r = 0; r < reps; r++) compiled.run({ a, b });
          best = Math.min(best, (performance.now() - t0) / reps);
        }
        rows.push({ threads: compiled.report().threads, ms: best, gflops: (2 * size ** 3) / (best * 1e6) });
      } finally {
        compiled.delete();
      }
    }
  } finally {
    session.delete();
    g.delete();
  }
  const equal = outputs.every((o) => o.length === outputs[0].length &&
    o.every((v, i) => Math.abs(v - outputs[0][i]) <= 1e-4 * (1 + Math.abs(outputs[0][i]))));
  post({ type: 'threads', id: msg.id, rows, equal });
}

self.onmessage = (ev) => {
  const msg = ev.data;
  try {
    if (onTextMessage(msg, post)) return;
    if (msg.type === 'plan') plan(msg);
    else if (msg.type === 'run') run(msg);
    else if (msg.type === 'load-onnx') loadOnnxModel(msg);
    else if (msg.type === 'threads') {
      try {
        compareThreads(msg);
      } catch (e) {
        post({ type: 'threads', id: msg.id, error: describe(e) });
      }
    }
    else if (msg.type === 'cancel') {
      if (currentRun === msg.runId) currentRun = null;
    }
  } catch (e) {
    post({ type: 'error', runId: msg.runId ?? null, planId: msg.planId ?? null, message: describe(e) });
  }
};

post({ type: 'ready', version: version(), isa: cpuIsa(), ...threading() });
