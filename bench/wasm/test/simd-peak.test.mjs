// SPDX-License-Identifier: Apache-2.0
// node --test bench/wasm/test: the SIMD128 multiply-add loop the kernel rows are set against
// (lib/simd-peak.mjs). What it computes and how its rate is counted; never how fast it runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PEAK_CHAINS, peakLoop, peakRate, peakWat } from '../lib/simd-peak.mjs';

// The recurrence c = c * 0.999 + 0.001 from c0, n times, in f32 (as each lane computes it).
function expected(c0, n) {
  let c = Math.fround(c0);
  for (let i = 0; i < n; ++i) c = Math.fround(Math.fround(c * Math.fround(0.999)) + Math.fround(0.001));
  return c;
}

test('peakWat: one recurrence per chain, 12 at most', () => {
  for (const chains of [1, 8, 12]) {
    const wat = peakWat(chains);
    assert.equal(wat.match(/f32x4\.mul/g).length, chains);
    assert.equal(wat.match(/f32x4\.add/g).length, 2 * chains - 1);  // the loop's, then the final sum's
  }
  assert.throws(() => peakWat(0), RangeError);
  assert.throws(() => peakWat(13), /1\.\.12/);
  assert.throws(() => peakWat(2.5), RangeError);
  assert.deepEqual(PEAK_CHAINS, [8, 10, 12]);
});

test('peakLoop: every chain runs the recurrence the given number of times', async () => {
  for (const [chains, n] of [[1, 1], [2, 3], [12, 100]]) {
    const peak = await peakLoop(chains);
    // Lane 0 of the sum of the chains, each started at its index + 1.
    let want = 0;
    for (let i = 0; i < chains; ++i) want = Math.fround(want + expected(i + 1, n));
    assert.ok(Math.abs(peak(n) - want) <= 1e-5 * Math.abs(want), `${chains} chains, ${n} iterations: ${peak(n)} vs ${want}`);
  }
});

test('peakRate: 8 flops per chain and iteration', () => {
  assert.equal(peakRate(12, 1e6, 1), 96);  // 96 MFLOP in 1 ms
  assert.equal(peakRate(8, 5e5, 2), 16);
  assert.throws(() => peakRate(12, 1, 0), /positive time/);
});
