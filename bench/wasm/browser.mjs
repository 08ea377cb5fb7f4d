#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// bench/wasm/browser.mjs: rungs' npm package in headless Chromium (Debian's), one thread against
// N, side by side in one page: matmul 512x512x512, the bundled encoder at 256 tokens and the
// bundled 2,000-request trace through a BucketedCompileCache (power of two 8..256). The page is
// served cross-origin isolated, so the package loads its threaded variant; every output on N
// threads is checked against one thread (|a - b| <= 1e-4 * max(1, |b|)) before anything is timed.
// The peers are not in this page (bench/wasm/run.mjs compares with them, in Node).
//
//   node bench/wasm/browser.mjs [--threads N] [--reps N]     (RUNGS_NPM: the package folder)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseOptions } from './lib/harness.mjs';
import { fixed, ratio, table } from './lib/table.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pkgDir = process.env.RUNGS_NPM ? resolve(process.env.RUNGS_NPM) : join(repo, 'build/wasm-release/npm');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const opt = parseOptions(process.argv.slice(2), [
  ['--threads', 'threads against one (default 2)', (o, v) => (o.threads = +v)],
  ['--reps', 'timed repetitions, medians reported (default 7)', (o, v) => (o.reps = +v)],
], { threads: 2, reps: 7 }, 'node bench/wasm/browser.mjs');

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
    cases.push({ name: 'matmul 512x512x512', flops: 2 * n ** 3, runners: [1, T].map((threads) => {
      const c = session.compile(g, { threads });
      c.setParam('b', b);
      return { threads: c.report().threads, run: () => c.run({ a })[0] };
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
  const rows = [];
  for (const cs of cases) {
    const outs = cs.runners.map((x) => x.run());
    if (!close(outs[1], outs[0])) throw new Error(cs.name + ': ' + T + ' threads differ from one');
    const batch = cs.runners.map((x) => {
      const t0 = performance.now(); x.run(); const ms = performance.now() - t0;
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
  await report({ ok: true, variant: t.variant, maxThreads: t.maxThreads, isolated: crossOriginIsolated, rows });
} catch (e) {
  await report({ failure: String((e && e.stack) || e) });
}`;

const page = `<!doctype html><meta charset="utf-8"><title>rungs bench</title><script type="module">${pageScript}</script>`;
const types = { '.js': 'text/javascript', '.cjs': 'text/javascript', '.json': 'application/json', '.txt': 'text/plain',
                '.wasm': 'application/wasm' };

async function main() {
  if (!existsSync(join(pkgDir, 'index.js'))) throw new Error(`no package at ${pkgDir}`);
  let resolveResult;
  const result = new Promise((r) => { resolveResult = r; });
  const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => { res.end('ok'); resolveResult(JSON.parse(body)); });
      return;
    }
    if (req.url === '/' || req.url === '/index.html') return res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(page);
    const url = req.url.split('?')[0];
    const rel = normalize(url).replace(/^(\.\.[/\\])+/, '');
    const file = rel.startsWith('/pkg/') ? join(pkgDir, rel.slice(5)) : rel.startsWith('/examples/') ? join(repo, rel) : null;
    if (!file || !existsSync(file)) return res.writeHead(404, headers).end();
    const ext = file.slice(file.lastIndexOf('.'));
    res.writeHead(200, { 'content-type': types[ext] ?? 'application/octet-stream', ...headers }).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const profile = mkdtempSync(join(tmpdir(), 'rungs-bench-chromium-'));
  const browser = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`,
    `http://127.0.0.1:${server.address().port}/`], { stdio: 'ignore', detached: true });
  let timer;
  try {
    const r = await Promise.race([result, new Promise((_, rej) => { timer = setTimeout(() => rej(new Error('no result in 15 min')), 900_000); })]);
    if (r.failure) throw new Error(r.failure);
    console.log(`rungs in headless Chromium (${r.variant} variant, up to ${r.maxThreads} threads, crossOriginIsolated ${r.isolated}); medians of ${opt.reps}`);
    console.log(table(['case', '1 thread ms', `${opt.threads} threads ms`, 'speed-up', '1t GFLOP/s', `${opt.threads}t GFLOP/s`],
      r.rows.map((x) => [x.name, fixed(x.ms[0], 3), fixed(x.ms[1], 3), ratio(x.ms[0] / x.ms[1]),
        fixed(x.flops ? x.flops / x.ms[0] / 1e6 : null), fixed(x.flops ? x.flops / x.ms[1] / 1e6 : null)])));
    for (const x of r.rows) {
      const s = x.ms[0] / x.ms[1];
      console.log(`  goal: ${x.name}: ${opt.threads} threads >= 1.7x one thread: ${s >= 1.7 ? 'met' : 'MISSED'} (${ratio(s)})`);
    }
  } finally {
    clearTimeout(timer);
    try { process.kill(-browser.pid, 'SIGKILL'); } catch { /* gone */ }
    server.closeAllConnections();
    server.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

await main();
