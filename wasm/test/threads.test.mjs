// SPDX-License-Identifier: Apache-2.0
// The two WebAssembly variants (wasm/npm/index.js): which one loaded, CompileOptions.threads in
// each, the threaded one's results against one thread, and a Node process that ends by itself.
// scripts/test runs the package's tests twice: as installed (Node loads the threaded variant) and
// with RUNGS_WASM_VARIANT=single. RUNGS_EXPECT_THREADED=1 says the package must hold both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';

import { BucketedCompileCache, Device, Graph, Session, threading } from 'rungs';
import { maxRelError, ramp, rowGraph } from './helpers.mjs';

const forced = process.env.RUNGS_WASM_VARIANT;
const pkgDir = dirname(createRequire(import.meta.url).resolve('rungs/package.json'));
const hasThreaded = existsSync(join(pkgDir, 'rungs_core_mt.js'));
const cores = cpus().length;
const { variant, maxThreads } = threading();

test('the variant: threaded in Node (more than one core), single-threaded when forced', () => {
  if (process.env.RUNGS_EXPECT_THREADED === '1') assert.ok(hasThreaded, 'the package holds rungs_core_mt.js');
  assert.equal(variant, forced ?? (cores > 1 && hasThreaded ? 'threads' : 'single'));
  assert.equal(maxThreads, variant === 'threads' ? Math.min(cores, 8) : 1);
});

function matmulGraph(n) {
  const g = new Graph();
  const a = g.input('a', [n, n]);
  const b = g.param('b', [n, n]);
  g.output('y', g.gelu(g.matmul(a, b)));
  return g;
}

test('CompileOptions.threads: 0 = maxThreads, more is capped, the report says how many ran', () => {
  const g = matmulGraph(96);
  const session = new Session(Device.Cpu);
  try {
    for (const [asked, ran] of [[0, maxThreads], [1, 1], [2, Math.min(2, maxThreads)], [1000, maxThreads]]) {
      const c = session.compile(g, { threads: asked });
      assert.equal(c.report().threads, ran, `threads: ${asked}`);
      c.delete();
    }
  } finally {
    session.delete();
    g.delete();
  }
});

test('N threads compute what one thread does (matmul 256 + gelu, a bucketed cache)', () => {
  const n = 256;
  const g = matmulGraph(n);
  const session = new Session(Device.Cpu);
  const a = ramp(n * n, 3).map((v) => v / 7);
  const b = ramp(n * n, 5).map((v) => v / 11);
  const outs = [];
  try {
    for (const threads of [1, maxThreads]) {
      const c = session.compile(g, { threads });
      c.setParam('b', b);
      for (let rep = 0; rep < 3; rep++) outs.push(c.run({ a })[0]);
      c.delete();
    }
  } finally {
    session.delete();
    g.delete();
  }
  for (const o of outs.slice(1)) assert.ok(maxRelError(o, outs[0]) < 1e-5, `max rel error ${maxRelError(o, outs[0])}`);

  // Several compiled graphs (one per bucket) share the pool: run them interleaved.
  const cache = BucketedCompileCache.powerOfTwoLadder(Device.Cpu, 8, 64);
  try {
    for (const rows of [5, 60, 17, 33, 8, 64]) {
      const e = cache.getOrCompileWithOptions(rows, rowGraph, { threads: maxThreads });
      assert.equal(e.graph.report().threads, maxThreads);
      const x = ramp(e.upper * 4, rows);
      const [y] = e.graph.run({ x });
      assert.deepEqual(Array.from(y), Array.from(x, (v) => Math.max(v, 0) * 2 + 1));
      e.graph.delete();
    }
  } finally {
    cache.delete();
  }
});

test('row segments: a stretch of row-local kernels runs split by rows, and equals one thread', () => {
  // x [37, 16] -> gelu(x w1 + b) -> relu(. w2): every kernel row-local, one segment of two.
  const g = new Graph();
  const x = g.input('x', [37, 16]);
  const h = g.gelu(g.add(g.matmul(x, g.param('w1', [16, 32])), g.param('b', [32])));
  g.output('y', g.relu(g.matmul(h, g.param('w2', [32, 8]))));
  const session = new Session(Device.Cpu);
  const w1 = ramp(16 * 32, 1).map((v) => v / 13), b = ramp(32, 2), w2 = ramp(32 * 8, 3).map((v) => v / 17);
  const input = { x: ramp(37 * 16, 4).map((v) => v / 5) };
  const outs = [];
  try {
    for (const threads of [1, maxThreads]) {
      const c = session.compile(g, { threads });
      const segs = c.report().kernels.map((k) => k.rowSegment);
      assert.deepEqual(segs, segs.map(() => (threads > 1 ? 0 : -1)), `threads ${threads}: ${JSON.stringify(c.report().kernels)}`);
      c.setParam('w1', w1);
      c.setParam('b', b);
      c.setParam('w2', w2);
      for (let rep = 0; rep < 3; rep++) outs.push(c.run(input)[0]);
      c.delete();
    }
  } finally {
    session.delete();
    g.delete();
  }
  for (const o of outs.slice(1)) assert.ok(maxRelError(o, outs[0]) < 1e-6, `max rel error ${maxRelError(o, outs[0])}`);
});

test('a Node program that ran graphs on several threads ends by itself', { timeout: 60_000 }, () => {
  const script = `
    import { Graph, Session, Device, threading } from 'rungs';
    const g = new Graph();
    g.output('y', g.matmul(g.input('a', [128, 128]), g.input('b', [128, 128])));
    const c = new Session(Device.Cpu).compile(g, { threads: 0 });
    const a = new Float32Array(128 * 128).fill(1);
    c.run({ a, b: a });
    console.log(threading().variant, c.report().threads);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 45_000, env: process.env });
  assert.equal(r.error, undefined, `the process did not end: ${r.error}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), `${variant} ${maxThreads}`);
  assert.equal(r.stderr, '', 'nothing on stderr');
});
