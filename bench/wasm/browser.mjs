#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// bench/wasm/browser.mjs: rungs' npm package in headless Chromium (Debian's), one thread against
// N, side by side in one page: matmul 512x512x512, the bundled encoder at 256 tokens and the
// bundled 2,000-request trace through a BucketedCompileCache (power of two 8..256). The page is
// served cross-origin isolated, so the package loads its threaded variant; every output on N
// threads is checked against one thread (|a - b| <= 1e-4 * max(1, |b|)) before anything is timed.
// The peers are not in this page (bench/wasm/run.mjs compares with them, in Node).
//
// --only text (issue #18): Universal Sentence Encoder Lite, rungs' TextEmbedder against
// @energetic-ai/embeddings on tfjs-backend-wasm, the passes of lib/text-core.mjs (the same as
// run.mjs --only text runs in Node), once in a page that is not cross-origin isolated (both engines
// on their single-threaded binaries: 1 thread) and once in an isolated one (tfjs setThreadsCount(N),
// rungs' threaded variant): embeddings checked line by line, exit 1 if they differ. In the page,
// @energetic-ai/embeddings' own code (dist/index.js, CommonJS) runs on the UMD builds of
// @tensorflow/tfjs-core, -converter and -backend-wasm 4.22 (its @energetic-ai/core is a Node bundle).
//
// --only peers (issue #17): rungs against tfjs-backend-wasm and onnxruntime-web with the same
// thread count for all three, a page for 1 thread (not isolated: every engine single-threaded) and
// one for N (isolated: tfjs' threaded SIMD binary, ORT numThreads N): bench/wasm/run.mjs's kernel
// rows and the trace, through the same peer modules, which lib/peers/browser.mjs drives in the page
// (bundled here with esbuild). Outputs checked against each other; exit 1 if they differ. The
// N-thread page also runs the trace through rungs on one thread, beside its N-thread cache, and
// judges N threads / 1 there: across the two pages more than the thread count differs.
//
//   node bench/wasm/browser.mjs [--threads N] [--reps N]     (RUNGS_NPM: the package folder)
//   node bench/wasm/browser.mjs --only text [--threads N] [--lines N] [--format json]
//   node bench/wasm/browser.mjs --only peers [--threads N] [--reps N] [--trace-reps N] [--smoke]
// --smoke (CI): one repetition, the trace's first 50 requests, nothing waited for, no goal judged:
// the pages load every engine, run every row and check every output.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { capacityWatch } from './lib/capacity.mjs';
import { parseOptions } from './lib/harness.mjs';
import { fixed, ratio, sci, table } from './lib/table.mjs';
import { waitForQuiet } from './lib/timing.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkgDir = process.env.RUNGS_NPM ? resolve(process.env.RUNGS_NPM) : join(repo, 'build/wasm-release/npm');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
// --smoke takes no value (--only peers).
const smoke = process.argv.includes('--smoke');
const opt = parseOptions(process.argv.slice(2).filter((a) => a !== '--smoke'), [
  ['--threads', 'threads against one (default 2)', (o, v) => (o.threads = +v)],
  ['--reps', 'timed repetitions, medians reported (default 7)', (o, v) => (o.reps = +v)],
  ['--only', 'text: USE Lite against @energetic-ai/embeddings (tfjs-wasm), 1 thread and --threads; peers: kernels and trace vs tfjs-wasm and ort-web', (o, v) => (o.only = v)],
  ['--trace-reps', 'peers: warm passes over the trace, median reported (default 3)', (o, v) => (o.traceReps = +v)],
  ['--lines', 'text: corpus lines (default 2000)', (o, v) => (o.lines = +v)],
  ['--format', 'text: table | json', (o, v) => (o.format = v)],
], { threads: 2, reps: 7, traceReps: 3, only: null, lines: 2000, format: 'table' }, 'node bench/wasm/browser.mjs');
if (![null, 'text', 'peers'].includes(opt.only)) throw new Error(`--only: expected text or peers, got ${opt.only}`);
if (smoke && opt.only !== 'peers') throw new Error('--smoke: only with --only peers');
if (smoke) Object.assign(opt, { reps: 1, traceReps: 1 });

// Runs in the page. Each case: a runner per thread count; outputs checked; then `reps` rounds in
// which every runner runs once in turn (batches of >= 40 ms), medians.
const pageScript = `
const report = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
const T = ${opt.threads}, REPS = ${opt.reps};
try {
  const r = await import('/pkg/index.js');
  const t = r.threading();
  if (t.maxThreads < T) throw new Error('the page runs at most ' + t.maxThreads + ' threads (' + t.variant + ' variant)');
  const text = (u) => fetch(u).then((x) => x.text());
  const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
  const model = r.loadModel(await text('/examples/models/encoder.json'), await bytes('/examples/models/encoder.safetensors'), 'encoder.json');
  const lengths = (await text('/examples/traces/chat-lognormal-2000.txt')).split('\\n').filter((l) => l.trim()).map(Number);
  const close = (a, b) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= 1e-4 * Math.max(1, Math.abs(b[i])));
  const rnd = (n, s) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + s));
  const session = new r.Session(r.Device.Cpu);
  const cases = [];
  {
    const n = 512, g = new r.Graph();
    g.output('c', g.matmul(g.input('a', [n, n]), g.param('b', [n, n])));
    const a = rnd(n * n, 1), b = rnd(n * n, 2);
    const compiled = [1, T].map((threads) => {
      const c = session.compile(g, { threads });
      c.setParam('b', b);
      return c;
    });
    cases.push({ name: 'matmul 512x512x512', flops: 2 * n ** 3, runners: compiled.map((c) => ({ threads: c.report().threads, run: () => c.run({ a })[0] })) });
    // The same product into an output array kept across calls: a fresh 1 MiB result faults in a
    // page per 4 KiB on first write, a serial cost per call that the threads do not share.
    cases.push({ name: 'matmul 512x512x512 (runInto)', flops: 2 * n ** 3, runners: compiled.map((c) => {
      const out = [new Float32Array(n * n)];
      return { threads: c.report().threads, run: () => c.runInto({ a }, out)[0] };
    }) });
  }
  {
    const n = 256;
    const ids = Float32Array.from({ length: n }, (_, i) => 1 + ((i * 7919) % 999)), mask = new Float32Array(n).fill(1);
    cases.push({ name: 'encoder tokens=256', flops: null, runners: [1, T].map((threads) => {
      const [hir, params] = model.build(n);
      const c = session.compileHir(hir, { threads });
      hir.delete();
      for (const [k, v] of Object.entries(params)) c.setParam(k, v);
      return { threads: c.report().threads, run: () => c.run({ ids, mask })[0] };
    }) });
  }
  {
    const reqs = lengths.map((len, i) => ({ len, ids: Float32Array.from({ length: len }, (_, t) => 1 + ((i * 131 + t * 7919) % 999)), mask: new Float32Array(len).fill(1) }));
    cases.push({ name: 'trace (2,000 requests, pow2 8..256)', flops: null, whole: true, runners: [1, T].map((threads) => {
      const cache = r.BucketedCompileCache.powerOfTwoLadder(r.Device.Cpu, 8, 256);
      for (const len of new Set(lengths)) cache.ensureHirWithParams(len, model, { threads })?.graph.delete();
      return { threads, run: () => {
        let last;
        for (const q of reqs) last = cache.runPadded(q.len, q.len, model, [{ name: 'ids', data: q.ids, inner: 1 }, { name: 'mask', data: q.mask, inner: 1 }], [0]).outputs[0];
        return last;
      } };
    }) });
  }
  // V8 compiles the module with its optimizing tier at instantiation (--no-wasm-dynamic-tiering),
  // on background threads: the server answers /quiet once Chromium's processes are idle.
  const quiet = await (await fetch('/quiet')).json();
  const rows = [];
  for (const cs of cases) {
    const outs = cs.runners.map((x) => x.run());
    if (!close(outs[1], outs[0])) throw new Error(cs.name + ': ' + T + ' threads differ from one');
    // Warm-up as lib/timing.mjs's sideBySide: at least 3 calls and 200 ms per runner (one whole
    // pass for the trace); batches of >= 40 ms sized from the fastest call.
    const batch = cs.runners.map((x) => {
      let ms = Infinity;
      for (let i = 0, w0 = performance.now(); i < (cs.whole ? 1 : 3) || (!cs.whole && performance.now() - w0 < 200); ++i) {
        const t0 = performance.now(); x.run(); ms = Math.min(ms, performance.now() - t0);
      }
      return cs.whole ? 1 : Math.max(1, Math.ceil(40 / Math.max(ms, 1e-3)));
    });
    const samples = cs.runners.map(() => []);
    for (let rep = 0; rep < REPS; rep++)
      cs.runners.forEach((x, k) => {
        const t0 = performance.now();
        for (let i = 0; i < batch[k]; i++) x.run();
        samples[k].push((performance.now() - t0) / batch[k]);
      });
    const med = (xs) => { const s = [...xs].sort((p, q) => p - q); return s[s.length >> 1]; };
    rows.push({ name: cs.name, flops: cs.flops, threads: cs.runners.map((x) => x.threads), ms: samples.map(med) });
  }
  await report({ ok: true, variant: t.variant, maxThreads: t.maxThreads, isolated: crossOriginIsolated, quiet, rows });
} catch (e) {
  await report({ failure: String((e && e.stack) || e) });
}`;

// The text page: ?threads=T; the corpus from /corpus.json, the model from /use/, tfjs from /tfjs/.
const textPageScript = `
const report = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
try {
  const T = Number(new URLSearchParams(location.search).get('threads'));
  const core = await import('/lib/text-core.mjs');
  const r = await import('/pkg/index.js');
  const t = r.threading();
  const text = (u) => fetch(u).then((x) => x.text());
  const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
  const lines = JSON.parse(await text('/corpus.json'));
  const progress = (m) => fetch('/progress', { method: 'POST', body: m });
  // tfjs: the UMD builds put tf on globalThis; @energetic-ai/embeddings' CommonJS gets it as its core.
  tf.wasm.setWasmPaths('/tfjs/');
  tf.wasm.setThreadsCount(T);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend did not initialise');
  await tf.ready();
  const mod = { exports: {} };
  new Function('module', 'exports', 'require', await text('/energetic/embeddings.js'))(mod, mod.exports,
    (n) => { if (n === '@energetic-ai/core') return tf; throw new Error('embeddings requires ' + n); });
  let t0 = performance.now();
  const useModel = await mod.exports.initModel(async () => ({ model: await tf.loadGraphModel('/use/model.json'), vocabulary: JSON.parse(await text('/use/vocab.json')) }));
  const tfjsLoadMs = performance.now() - t0;
  const tfjs = { threads: tf.wasm.getThreadsCount(), tokenCount: (s) => useModel.tokenizer.encode(s).length,
    embed: async (ts) => (await useModel.embed(ts)).map((v) => Float32Array.from(v)) };
  t0 = performance.now();
  const modelJson = await text('/use/model.json');
  const shards = await Promise.all(JSON.parse(modelJson).weightsManifest.flatMap((g) => g.paths).map((p) => bytes('/use/' + p)));
  const model = r.loadTfjs(modelJson, shards, 'model.json');
  const tokenizer = r.UnigramTokenizer.parse(await text('/use/vocab.json'), 'vocab.json');
  const rungsLoadMs = performance.now() - t0;
  const rungs = { threads: t.maxThreads, make: () => new r.TextEmbedder(model, tokenizer, { ladder: r.ladder.powerOfTwo(1, 128), activeExtent: true }) };
  const clock = () => { const s = performance.now(); return () => ({ wall: performance.now() - s, cpu: null }); };
  try {
    await fetch('/quiet');  // both engines' wasm compiled (--no-wasm-dynamic-tiering) before anything is timed
    const row = await core.runTextBench({ lines, tfjs, rungs, clock, progress });
    await report({ ok: true, row: { ...row, tfjsLoadMs, rungsLoadMs }, variant: t.variant, maxThreads: t.maxThreads, isolated: crossOriginIsolated,
      tfjs: 'tfjs-backend-wasm ' + tf.wasm.version_wasm + ' (UMD), threads ' + tf.wasm.getThreadsCount() + ', SIMD ' + (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) +
        ', multithread support ' + (await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT')),
      userAgent: navigator.userAgent });
  } catch (e) {
    await report({ mismatch: e instanceof core.TextMismatch, failure: String((e && e.stack) || e) });
  }
} catch (e) {
  await report({ failure: String((e && e.stack) || e) });
}`;
const tfjsDist = (p) => join(repo, 'bench/wasm/node_modules/@tensorflow', p);
const textPage = `<!doctype html><meta charset="utf-8"><title>rungs text bench</title>
<script src="/tfjs/tf-core.min.js"></script><script src="/tfjs/tf-converter.min.js"></script><script src="/tfjs/tf-backend-wasm.min.js"></script>
<script type="module">${textPageScript}</script>`;
const tfjsFiles = {
  'tf-core.min.js': tfjsDist('tfjs-core/dist/tf-core.min.js'),
  'tf-converter.min.js': tfjsDist('tfjs-converter/dist/tf-converter.min.js'),
  'tf-backend-wasm.min.js': tfjsDist('tfjs-backend-wasm/dist/tf-backend-wasm.min.js'),
  'tfjs-backend-wasm.wasm': tfjsDist('tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'),
  'tfjs-backend-wasm-simd.wasm': tfjsDist('tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'),
  'tfjs-backend-wasm-threaded-simd.wasm': tfjsDist('tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm'),
};

const page = `<!doctype html><meta charset="utf-8"><title>rungs bench</title><script type="module">${pageScript}</script>`;
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.cjs': 'text/javascript', '.json': 'application/json', '.txt': 'text/plain',
  '.wasm': 'application/wasm' };

// CPU ms used so far by the processes of group `pgid` (Chromium and its children: it is started
// detached, in a group of its own), from /proc/<pid>/stat (utime + stime, 100 ticks a second).
function groupCpuMs(pgid) {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    let stat;
    try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { continue; }  // gone
    const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');  // f[0] is field 3, state
    if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

// Serves `html` at / (with the COOP/COEP headers that make it cross-origin isolated when
// `isolated`), the package at /pkg/, the repository's examples at /examples/ and whatever
// `extra(path)` maps to a file or {body}; opens it in headless Chromium; returns what the page
// POSTs to /result. The page may POST lines to /progress (printed on stderr).
async function inChromium({ html, isolated = true, query = '', extra = () => null, timeoutMs = 900_000 }) {
  if (!existsSync(join(pkgDir, 'index.js'))) throw new Error(`no package at ${pkgDir}`);
  let resolveResult;
  const result = new Promise((r) => { resolveResult = r; });
  const headers = isolated ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {};
  let browser = null;
  const server = createServer((req, res) => {
    if (req.method === 'POST' && (req.url === '/result' || req.url === '/progress')) {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        res.end('ok');
        if (req.url === '/result') resolveResult(JSON.parse(body));
        else process.stderr.write(`  .. ${body}\n`);
      });
      return;
    }
    const url = req.url.split('?')[0];
    if (url === '/quiet') {
      waitForQuiet({ cpuMs: () => groupCpuMs(browser.pid) }).then((q) => res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(q)));
      return;
    }
    if (url === '/' || url === '/index.html') return res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(html);
    const rel = normalize(url).replace(/^(\.\.[/\\])+/, '');
    const more = extra(rel);
    if (more && more.body !== undefined) return res.writeHead(200, { 'content-type': more.type ?? 'application/json', ...headers }).end(more.body);
    const file = more ?? (rel.startsWith('/pkg/') ? join(pkgDir, rel.slice(5)) : rel.startsWith('/examples/') ? join(repo, rel) : null);
    if (!file || !existsSync(file)) return res.writeHead(404, headers).end();
    const ext = file.slice(file.lastIndexOf('.'));
    res.writeHead(200, { 'content-type': types[ext] ?? 'application/octet-stream', ...headers }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const profile = mkdtempSync(join(tmpdir(), 'rungs-bench-chromium-'));
  browser = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--js-flags=--no-wasm-dynamic-tiering',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`,
    `http://127.0.0.1:${server.address().port}/${query}`], { stdio: 'ignore', detached: true });
  let timer;
  try {
    return await Promise.race([result, new Promise((_, rej) => {
      timer = setTimeout(() => rej(new Error(`no result in ${timeoutMs / 60_000} min`)), timeoutMs);
    })]);
  } finally {
    clearTimeout(timer);
    try { process.kill(-browser.pid, 'SIGKILL'); } catch { /* gone */ }
    server.closeAllConnections();
    server.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

async function main() {
  // What the machine gives N threads (lib/capacity.mjs, in Node: the same cores), before and after.
  const watch = await capacityWatch(opt.threads);
  const r = await inChromium({ html: page });
  const capacity = await watch.end();
  if (r.failure) throw new Error(r.failure);
  console.log(`rungs in headless Chromium (${r.variant} variant, up to ${r.maxThreads} threads, crossOriginIsolated ${r.isolated}); medians of ${opt.reps}`);
  console.log(`  wasm compiled by V8's optimizing tier at instantiation (--js-flags=--no-wasm-dynamic-tiering); Chromium ` +
    `${r.quiet.quiet ? 'was idle' : 'was still busy'} ${(r.quiet.ms / 1000).toFixed(1)} s later, before anything was timed`);
  console.log(table(['case', '1 thread ms', `${opt.threads} threads ms`, 'speed-up', '1t GFLOP/s', `${opt.threads}t GFLOP/s`],
    r.rows.map((x) => [x.name, fixed(x.ms[0], 3), fixed(x.ms[1], 3), ratio(x.ms[0] / x.ms[1]),
      fixed(x.flops ? x.flops / x.ms[0] / 1e6 : null), fixed(x.flops ? x.flops / x.ms[1] / 1e6 : null)])));
  for (const x of r.rows) {
    const s = x.ms[0] / x.ms[1];
    console.log(`  goal: ${x.name}: ${opt.threads} threads >= 1.7x one thread: ${s >= 1.7 ? 'met' : 'MISSED'} (${ratio(s)})`);
  }
  if (capacity) {
    console.log(`  cores  ${capacity.line}`);
    if (capacity.warning) console.log(`  note: ${capacity.warning}`);
  }
}

// --only text: a page per thread count (1: not isolated, single-threaded binaries; N: isolated).
async function mainText() {
  const { corpusTexts, modelDir, LICENSES } = await import('./lib/text-node.mjs');
  const { corpusLines, TEXT_HEADER, textCells, TOLERANCE } = await import('./lib/text-core.mjs');
  const lines = corpusLines(corpusTexts(), { limit: opt.lines });
  const use = modelDir();
  const embeddingsJs = join(dirname(createRequire(join(repo, 'bench/wasm/package.json')).resolve('@energetic-ai/embeddings')), 'index.js');
  const extra = (rel) => {
    if (rel === '/corpus.json') return { body: JSON.stringify(lines) };
    if (rel === '/energetic/embeddings.js') return embeddingsJs;
    if (rel.startsWith('/use/')) return join(use, rel.slice(5));
    if (rel.startsWith('/lib/')) return join(repo, 'bench/wasm', rel);
    if (rel.startsWith('/tfjs/')) return tfjsFiles[rel.slice(6)] ?? null;
    return null;
  };
  const json = opt.format === 'json';
  const say = json ? (x) => console.error(x) : (x) => console.log(x);
  say(`USE Lite text embeddings in headless Chromium: rungs (TextEmbedder, pow2 1..128, active extent) vs @energetic-ai/embeddings on tfjs-backend-wasm;` +
    ` corpus: ${lines.length} distinct non-empty lines of ${LICENSES}/* (regular files, sorted)`);
  const rows = [];
  let failed = null;
  for (const T of [...new Set([1, opt.threads])]) {
    const r = await inChromium({ html: textPage, isolated: T > 1, query: `?threads=${T}`, extra, timeoutMs: 1_800_000 });
    if (r.failure) {
      if (!r.mismatch) throw new Error(r.failure);
      failed = r.failure;
      say(`FAILED (${T} thread${T > 1 ? 's' : ''}): ${r.failure}`);
      break;
    }
    say(`  ${T} thread${T > 1 ? 's' : ''}: rungs ${r.variant} variant (${r.maxThreads} threads, crossOriginIsolated ${r.isolated}); ${r.tfjs}; ` +
      `model load: tfjs ${fixed(r.row.tfjsLoadMs)} ms, rungs ${fixed(r.row.rungsLoadMs)} ms`);
    rows.push({ env: 'chromium', threads: T, userAgent: r.userAgent, ...r.row });
  }
  if (rows.length) {
    say(table(TEXT_HEADER, rows.map((x) => textCells('chromium', x, { fixed, ratio, sci }))));
    say(`  every line checked (rungs vs tfjs per sentence: max abs <= ${TOLERANCE.maxAbs}, cosine >= ${TOLERANCE.minCosine}); ` +
      'vs faster tfjs: the faster tfjs pass / rungs (fresh TextEmbedder, compiles and tokenization included)');
    for (const x of rows) say(`  goal: text (chromium, ${x.threads}t): rungs >= 2x the faster tfjs pass: ${x.ratio >= 2 ? 'met' : 'MISSED'} (${ratio(x.ratio)})`);
  }
  if (json) console.log(JSON.stringify({ text: { corpus: { source: LICENSES, lines: lines.length }, rows }, failure: failed }, null, 2));
  if (failed) process.exit(1);
}

// --only peers: a page per thread count (1: not isolated; N: isolated), lib/peers/browser.mjs in each.
async function mainPeers() {
  const { build } = await import('esbuild');
  // The page imports onnxruntime-web's loader and .wasm from /ort/ (the build that keeps them
  // outside the bundle), tfjs' .wasm files from /tfjs/.
  const bundle = await build({ entryPoints: [join(repo, 'bench/wasm/lib/peers/browser.mjs')], bundle: true, write: false, format: 'esm',
    platform: 'browser', conditions: ['onnxruntime-web-use-extern-wasm'], external: ['node:*'], logLevel: 'warning' });
  const peersJs = bundle.outputFiles[0].text;
  const ortDist = join(repo, 'bench/wasm/node_modules/onnxruntime-web/dist');
  const extra = (rel) => {
    if (rel === '/peers.js') return { body: peersJs, type: 'text/javascript' };
    if (rel.startsWith('/ort/')) return join(ortDist, rel.slice(5));
    if (rel.startsWith('/tfjs/')) return tfjsFiles[rel.slice(6)] ?? null;
    return null;
  };
  const html = `<!doctype html><meta charset="utf-8"><title>rungs vs peers</title><script type="module">
const report = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
try {
  const q = new URLSearchParams(location.search);
  const { runPeers, Mismatch } = await import('/peers.js');
  try {
    const smoke = q.get('smoke') === '1';
    const r = await runPeers({ pkg: await import('/pkg/index.js'), threads: +q.get('threads'), reps: +q.get('reps'), traceReps: +q.get('traceReps'),
      requests: smoke ? 50 : null, quiet: async () => (smoke ? { ms: 0, quiet: false } : (await fetch('/quiet')).json()),
      progress: (m) => fetch('/progress', { method: 'POST', body: m }) });
    await report({ ok: true, ...r });
  } catch (e) {
    await report({ mismatch: e instanceof Mismatch, failure: String((e && e.stack) || e) });
  }
} catch (e) {
  await report({ failure: String((e && e.stack) || e) });
}</script>`;
  console.log('rungs vs tfjs-backend-wasm vs onnxruntime-web in headless Chromium, the same thread count for all three (a page per count);' +
    ` kernels: medians of ${opt.reps} interleaved batches; trace: ${opt.traceReps} warm passes (median) after a first pass from fresh caches / sessions` +
    (smoke ? '\n  --smoke: one repetition, the first 50 requests, nothing waited for: the figures are not judged' : ''));
  for (const T of [...new Set([1, opt.threads])]) {
    const watch = await capacityWatch(T);
    const r = await inChromium({ html, isolated: T > 1, query: `?threads=${T}&reps=${opt.reps}&traceReps=${opt.traceReps}&smoke=${smoke ? 1 : 0}`, extra, timeoutMs: 1_800_000 });
    if (r.failure) {
      console.log(`FAILED (${T} thread${T > 1 ? 's' : ''}): ${r.failure}`);
      process.exit(r.mismatch ? 1 : 2);
    }
    const e = r.environment;
    console.log(`\n${T} thread${T > 1 ? 's' : ''} (crossOriginIsolated ${e.isolated}; ` + (smoke ? 'not waited for the engines\' compiles)'
      : `Chromium ${e.quiet.quiet ? 'idle' : 'still busy'} ${(e.quiet.ms / 1000).toFixed(1)} s after the engines loaded, before anything was timed)`));
    for (const k of ['rungs', 'tfjs', 'ort']) console.log(`  ${k.padEnd(5)}  ${e[k]}`);
    const gf = (x, ms) => (x.flops ? fixed(x.flops / ms / 1e6) : '-');
    const vs = (ms) => Math.min(ms.tfjs, ms.ort) / ms.rungs;
    console.log(table(['case', 'rungs ms', 'tfjs ms', 'ort ms', 'rungs GFLOP/s', 'tfjs GFLOP/s', 'ort GFLOP/s', 'vs faster peer', 'output floats',
      'fresh array ms', 'max rel diff'],
      r.kernels.map((x) => [x.name, fixed(x.ms.rungs, 3), fixed(x.ms.tfjs, 3), fixed(x.ms.ort, 3), gf(x, x.ms.rungs), gf(x, x.ms.tfjs), gf(x, x.ms.ort),
        ratio(vs(x.ms)), x.outLength, fixed(x.ms.fresh, 3), sci(x.maxRelDiff)])));
    console.log('  fresh array ms: a new Float32Array of the output\'s length written once, timed beside the engines: every engine here returns its' +
      ' result in such an array, so each row\'s times include this much of the browser\'s allocator');
    const t = r.trace;
    console.log(table([`trace (${t.requests.toLocaleString('en')} requests)`, 'rungs ms', 'tfjs ms', 'ort ms', 'vs faster peer', 'rungs compiles', 'max rel diff'],
      [['first pass (set-up and compiles included)', fixed(t.firstMs.rungs), fixed(t.firstMs.tfjs), fixed(t.firstMs.ort), ratio(vs(t.firstMs)), t.compiles, sci(t.maxRelDiff)],
        ['warm pass', fixed(t.warmMs.rungs), fixed(t.warmMs.tfjs), fixed(t.warmMs.ort), ratio(vs(t.warmMs)), '', '']]));
    console.log('  rungs: pow2 8..256 with active extent; tfjs and ORT at exact shapes (ORT: one session, the sequence dim symbolic)');
    const state = (v) => (smoke ? 'not judged' : v >= 1.3 ? 'met' : 'MISSED');
    for (const x of r.kernels) console.log(`  goal: ${x.name} (${T}t): rungs >= 1.3x the faster peer: ${state(vs(x.ms))} (${ratio(vs(x.ms))})`);
    for (const [k, ms] of [['warm', t.warmMs], ['first pass', t.firstMs]])
      console.log(`  goal: trace, ${k} (${T}t): rungs >= 1.3x the faster peer: ${state(vs(ms))} (${ratio(vs(ms))})`);
    if (t.warmMs.rungs1 != null) {
      // rungs on one thread in this page, its chunks interleaved with the N-thread cache's
      const s = t.warmMs.rungs1 / t.warmMs.rungs;
      console.log(`  rungs on 1 thread in this page, interleaved with the ${T}-thread cache: warm ${fixed(t.warmMs.rungs1)} ms, first pass ${fixed(t.firstMs.rungs1)} ms`);
      console.log(`  goal: trace, warm: rungs (pow2 + active extent) ${T} threads >= 1.7x one thread (the same page): ${smoke ? 'not judged' : s >= 1.7 ? 'met' : 'MISSED'} (${ratio(s)})`);
    }
    const capacity = await watch.end();
    if (capacity) {
      console.log(`  cores  ${capacity.line}`);
      if (capacity.warning) console.log(`  note: ${capacity.warning}`);
    }
  }
}

await (opt.only === 'text' ? mainText() : opt.only === 'peers' ? mainPeers() : main());
