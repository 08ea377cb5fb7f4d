// SPDX-License-Identifier: Apache-2.0
// rungs' npm package (the wasm-release build output, SIMD128; in Node its threaded variant when the
// package holds it, wasm/npm/index.js), imported by path: RUNGS_NPM (a folder holding index.js) or
// <repo>/build/wasm-release/npm. scripts/bench-wasm builds it first. Every graph is compiled with
// an explicit CompileOptions.threads (the threaded variant's default 0 means every core).
// Headless Chromium runs this file too (bench/wasm/browser.mjs --only peers, through use()): the
// Node modules are imported only by packageDir() and init().

export const name = 'rungs';

/** The package folder in Node: RUNGS_NPM, or <repo>/build/wasm-release/npm. */
export async function packageDir() {
  const { resolve } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  return process.env.RUNGS_NPM ? resolve(process.env.RUNGS_NPM) : fileURLToPath(new URL('../../../../build/wasm-release/npm', import.meta.url));
}

let r = null;  // the imported package

// What each part of the benchmark needs from the package (wasm/npm/index.d.ts).
const needs = {
  matmul: ['Graph', 'Graph.prototype.input', 'Graph.prototype.param', 'Graph.prototype.matmul', 'Session', 'Session.prototype.compile',
    'CompiledGraph.prototype.setParam', 'CompiledGraph.prototype.run'],
  model: ['loadModel', 'Session.prototype.compileHir', 'CompiledGraph.prototype.setParam', 'CompiledGraph.prototype.run'],
  cache: ['loadModel', 'BucketedCompileCache', 'BucketedCompileCache.powerOfTwoLadder', 'BucketedCompileCache.prototype.runPadded',
    'BucketedCompileCache.prototype.setActiveExtent', 'BucketedCompileCache.prototype.stats'],
  onnx: ['loadOnnx', 'Model.prototype.inputLayouts', 'Model.prototype.outputInners', 'Session.prototype.compileHir',
    'BucketedCompileCache.prototype.ensureHirWithParams', 'BucketedCompileCache.prototype.runPadded'],
};

function has(path) {
  let o = r;
  for (const p of path.split('.')) {
    if (o == null || !(p in o)) return false;
    o = o[p];
  }
  return o != null;
}

/** Loads the package in Node; returns use()'s answer. Throws if it cannot be imported. */
export async function init() {
  const { existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const dir = await packageDir();
  const index = join(dir, 'index.js');
  if (!existsSync(index))
    throw new Error(`rungs: no package at ${dir} (build it: source scripts/lib.sh; build wasm-release rungs_wasm)`);
  return use(await import(pathToFileURL(index).href), dir);
}

/** Uses `pkg`, the package imported from `from`; returns {info, missing: {part: [api...]}, maxThreads}. */
export function use(pkg, from) {
  r = pkg;
  const missing = {};
  for (const [part, apis] of Object.entries(needs)) missing[part] = apis.filter((a) => !has(a));
  const t = r.threading ? r.threading() : { variant: 'single', maxThreads: 1 };
  return { info: `rungs ${r.version()} (npm package, ISA ${r.cpuIsa()}, ${t.variant} variant, up to ${t.maxThreads} threads) from ${from}`,
    missing, maxThreads: t.maxThreads };
}

export const api = () => r;

/** C = A B for A [n, n] per call (an input), B [n, n] a param (packed once, at setParam). */
export function matmul(n, B, threads = 1) {
  const g = new r.Graph();
  g.output('c', g.matmul(g.input('a', [n, n]), g.param('b', [n, n])));
  const session = new r.Session(r.Device.Cpu);
  const c = session.compile(g, { threads });
  if (c.report().threads !== threads) throw new Error(`rungs: asked for ${threads} threads, the report says ${c.report().threads}`);
  c.setParam('b', B);
  g.delete();
  const out = [new Float32Array(n * n)];
  return {
    run: (A) => c.run({ a: A })[0],
    // The same product into one output array kept across calls (CompiledGraph.runInto).
    runInto: (A) => c.runInto({ a: A }, out)[0],
    kernels: () => c.report().kernels?.map((k) => k.kernel).join(', '),
    dispose: () => {
      c.delete();
      session.delete();
    },
  };
}

const models = new Map();
/** The rungs Model for a bundled model read by lib/model.mjs (loaded once from the same bytes). */
export function loadModel(m) {
  if (!models.has(m.spec.name)) models.set(m.spec.name, r.loadModel(m.jsonText, m.weightBytes, `${m.spec.name}.json`));
  return models.get(m.spec.name);
}

/** The model compiled at `extent` (Session.compileHir, weights set): run({name: data}) -> outputs. */
export function model(m, extent, threads = 1) {
  const t0 = performance.now();
  const [hir, params] = loadModel(m).build(extent);
  const session = new r.Session(r.Device.Cpu);
  const c = session.compileHir(hir, { threads });
  if (c.report().threads !== threads) throw new Error(`rungs: asked for ${threads} threads, the report says ${c.report().threads}`);
  hir.delete();
  for (const [n, v] of Object.entries(params)) c.setParam(n, v);
  return {
    setupMs: performance.now() - t0,
    run: (inputs) => c.run(inputs),
    dispose: () => {
      c.delete();
      session.delete();
    },
  };
}
