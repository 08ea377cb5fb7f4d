// SPDX-License-Identifier: Apache-2.0
// Shared by the npm package's tests (they run from the folder the packed tarball was installed in).
import assert from 'node:assert/strict';

import { Graph } from 'rungs';

// A graph over [upper, 4] rows: y = relu(x) * 2 + 1 (row-local), and a pooled sum s = sum(x, rows).
export function rowGraph(upper) {
  const g = new Graph();
  const x = g.input('x', [upper, 4]);
  const two = g.constant(new Float32Array([2]), [1]);
  const one = g.constant(new Float32Array([1]), [1]);
  g.output('y', g.add(g.mul(g.relu(x), two), one));
  g.output('s', g.sum(x, [0]));
  return g;
}

export function ramp(n, offset = 0) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; ++i) a[i] = ((i * 37 + offset) % 11) - 5.5;
  return a;
}

// Asserts `fn` throws a JS Error with `code` whose message matches every pattern.
export function assertRungsError(fn, code, ...patterns) {
  let caught;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof Error, `expected an Error, got ${caught}`);
  assert.equal(caught.code, code, `code of: ${caught.message}`);
  for (const p of patterns) assert.match(caught.message, p);
  return caught;
}

// max |a - b| / max(1, |b|), as tests/test_util.hpp's max_rel_error.
export function maxRelError(a, b) {
  assert.equal(a.length, b.length, 'lengths');
  let worst = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i]));
    worst = Math.max(worst, Number.isNaN(d) ? Infinity : d);
  }
  return worst;
}

// The upper of a cache entry, releasing the entry's graph handle (each lookup hands out a new one).
export function upperOf(entry) {
  entry.graph.delete();
  return entry.upper;
}
