// SPDX-License-Identifier: Apache-2.0
// The same installed package, loaded by headless Chromium: proves the one import works in a browser.
// Serves the installed package and a test page on 127.0.0.1; the page posts its results back.
// Twice: cross-origin isolated (COOP + COEP), where the package loads its threaded variant when
// the package has it, and not isolated, where it must load the single-threaded one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';

const require = createRequire(import.meta.url);
const pkgDir = dirname(require.resolve('rungs/package.json'));
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';

const page = `<!doctype html><meta charset="utf-8"><title>rungs</title><script type="module">
const report = (r) => fetch('/result', { method: 'POST', body: JSON.stringify(r) });
try {
  const { Graph, Session, Device, version, cpuIsa, threading } = await import('/pkg/index.js');
  const g = new Graph();
  g.output('y', g.relu(g.input('x', [6])));
  const compiled = new Session(Device.Cpu).compile(g);
  const m = new Graph();
  m.output('y', m.matmul(m.input('a', [64, 64]), m.input('b', [64, 64])));
  const a = new Float32Array(64 * 64).map((_, i) => Math.sin(i));
  const runs = [1, 0].map((threads) => {
    const c = new Session(Device.Cpu).compile(m, { threads });
    return { threads: c.report().threads, y: Array.from(c.run({ a, b: a })[0]) };
  });
  const x = new Float32Array([-3, -0.5, 0, 0.5, 2, -7]);
  const [y] = compiled.run({ x });
  let error = null;
  try { compiled.run({ x: new Float32Array(5) }); } catch (e) { error = { isError: e instanceof Error, message: e.message }; }
  await report({ version: version(), isa: cpuIsa(), x: Array.from(x), y: Array.from(y), error,
                 threading: threading(), isolated: self.crossOriginIsolated, cores: navigator.hardwareConcurrency,
                 runThreads: runs.map((r) => r.threads), equal: runs[0].y.every((v, i) => Math.abs(v - runs[1].y[i]) <= 1e-4 * (1 + Math.abs(v))) });
} catch (e) {
  await report({ failure: String(e && e.stack || e) });
}
</script>`;

const hasThreaded = existsSync(join(pkgDir, 'rungs_core_mt.js'));
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

for (const isolated of [true, false]) {
  test(`the package loads and runs in headless Chromium, ${isolated ? '' : 'not '}cross-origin isolated`, { timeout: 120_000 }, () => inBrowser(isolated));
}

async function inBrowser(isolated) {
  assert.ok(existsSync(chromium), `${chromium} not found (scripts/setup installs Debian's chromium)`);
  const headers = isolated ? isolation : {};
  const fetched = [];  // the package's files the page asked for
  let resolveResult;
  const result = new Promise((resolve) => { resolveResult = resolve; });
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => { res.end('ok'); resolveResult(JSON.parse(body)); });
      return;
    }
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(page);
      return;
    }
    const rel = normalize(req.url.replace(/^\/pkg\//, '')).replace(/^(\.\.[/\\])+/, '');
    const file = join(pkgDir, rel);
    if (!req.url.startsWith('/pkg/') || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    fetched.push(rel);
    const type = rel.endsWith('.wasm') ? 'application/wasm' : 'text/javascript';
    res.writeHead(200, { 'content-type': type, ...headers }).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const profile = mkdtempSync(join(tmpdir(), 'rungs-chromium-'));
  const browser = spawn(chromium, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`, url,
  ], { stdio: 'ignore', detached: true });  // own process group: its helpers die with it
  const exited = new Promise((resolve) => browser.once('exit', resolve));
  let timer;
  try {
    const r = await Promise.race([
      result,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no result from the page in 90 s')), 90_000);
      }),
    ]);
    assert.equal(r.failure, undefined, r.failure);
    console.log(`browser: rungs ${r.version}, cpuIsa() = ${r.isa}`);
    assert.match(r.version, /^\d+\.\d+\.\d+$/);
    assert.equal(r.isa, 'wasm');
    assert.deepEqual(r.y, r.x.map((v) => Math.max(v, 0)));
    assert.ok(r.error && r.error.isError, 'wrong length must throw an Error in the browser too');
    assert.match(r.error.message, /'x'/);
    console.log(`browser (${isolated ? '' : 'not '}isolated): ${r.threading.variant} variant, up to ${r.threading.maxThreads} threads`);
    assert.equal(r.isolated, isolated);
    const threaded = isolated && hasThreaded && r.cores > 1;
    assert.equal(r.threading.variant, threaded ? 'threads' : 'single');
    assert.equal(r.threading.maxThreads, threaded ? Math.min(r.cores, 8) : 1);
    assert.deepEqual(r.runThreads, [1, r.threading.maxThreads], 'the report says how many threads ran (0 = maxThreads)');
    assert.ok(r.equal, 'the outputs on 1 and N threads agree');
    // The wasm ships as its own file beside the JS: the page fetched the variant's .wasm once
    // (the threaded variant's workers get the compiled module from the page, not the file).
    const wasmFile = threaded ? 'rungs_core_mt.wasm' : 'rungs_core.wasm';
    assert.deepEqual(fetched.filter((f) => f.endsWith('.wasm')), [wasmFile], `fetched: ${fetched.join(', ')}`);
  } finally {
    clearTimeout(timer);
    try {
      process.kill(-browser.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
    server.closeAllConnections();
    server.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}
