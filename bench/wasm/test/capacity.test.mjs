// SPDX-License-Identifier: Apache-2.0
// node --test bench/wasm/test: the benchmarks' machine probe (lib/capacity.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SLOW_ROUND_TRIP_NS, capacityFrom, capacityReport, capacityStartLine, capacityWatch, lineRoundTrip, machineCapacity } from '../lib/capacity.mjs';

test('capacityFrom: N when N threads take as long as one, 1 when they take turns', () => {
  assert.equal(capacityFrom(2, 50, 50), 2);
  assert.equal(capacityFrom(2, 50, 100), 1);
  assert.equal(capacityFrom(4, 10, 20), 2);
  assert.throws(() => capacityFrom(0, 1, 1), RangeError);
  assert.throws(() => capacityFrom(2, 0, 1), /positive times/);
  assert.throws(() => capacityFrom(2, 1, NaN), RangeError);
});

test('capacityReport warns below 90% of the threads, before or after, and only then', () => {
  const ok = capacityReport(2, 1.95, 1.81);
  assert.equal(ok.warning, null);
  assert.match(ok.line, /^2 threads ran a busy loop .* at 1\.95x .* before the timings, 1\.81x after$/);
  assert.deepEqual(ok.values, { threads: 2, before: 1.95, after: 1.81 });
  assert.match(capacityReport(2, 1.97, 1.79).warning, /did not give 2 threads 2 cores' worth .*\(1\.97x \/ 1\.79x\)/);
  assert.match(capacityReport(2, 1.2, 1.99).warning, /1\.20x/);
  assert.equal(capacityReport(2, null, 1.9).warning, null);
  assert.match(capacityReport(2, null, 1.9).line, /at - one thread's rate/);
});

test('machineCapacity measures a ratio between the threads taking turns and all running at once', async () => {
  // Not a speed assertion: the ratio is real timing, and a loaded machine puts it anywhere (CI
  // read 3.39 for two threads, a 10 ms one-thread run slowed by the other jobs). The ratio's
  // arithmetic is capacityFrom's test above; this one checks the workers run, answer and end.
  const c = await machineCapacity(2, { ms: 10, rounds: 3 });
  assert.ok(Number.isFinite(c) && c > 0, `capacity ${c}`);
  const one = await machineCapacity(1, { ms: 10, rounds: 3 });
  assert.ok(Number.isFinite(one) && one > 0, `capacity of one thread ${one}`);
});

test('capacityReport with round trips: prints both, warns above SLOW_ROUND_TRIP_NS before or after, and only then', () => {
  const fast = capacityReport(2, 1.99, 2.0, { before: 180.4, after: 240 });
  assert.equal(fast.warning, null);
  assert.match(fast.line, /1\.99x .* 2\.00x after; a cache line went from one thread to another and back in 180 ns \/ 240 ns$/);
  assert.deepEqual(fast.values, { threads: 2, before: 1.99, after: 2.0, roundTripNs: { before: 180.4, after: 240 } });
  const slow = capacityReport(2, 1.99, 2.0, { before: 200, after: SLOW_ROUND_TRIP_NS + 1 });
  assert.match(slow.warning, /^data moved slowly between the cores during this run \(a cache line's round trip 200 ns \/ 351 ns, above 350 ns\).*measure the machine, not the code; run again$/);
  const both = capacityReport(2, 1.2, 2.0, { before: 500, after: null });
  assert.match(both.warning, /did not give 2 threads 2 cores' worth .*; data moved slowly .*500 ns \/ -/);
  // Without round trips the line and values are as before.
  assert.equal(capacityReport(2, 1.95, 1.81).line.includes('cache line'), false);
});

test('capacityStartLine: the busy-loop ratio and the round trip measured before the timings', () => {
  assert.equal(capacityStartLine(2, 1.994, 183.6),
    "2 threads ran a busy loop at 1.99x one thread's rate; a cache line went between two threads and back in 184 ns " +
    '(worker_threads, no engine; measured again at the end)');
});

test('lineRoundTrip measures a positive time for two threads taking turns on one word', async () => {
  // Not a speed assertion (a loaded machine puts it anywhere): the workers start, alternate, end.
  const ns = await lineRoundTrip({ trips: 2000, rounds: 3 });
  assert.ok(Number.isFinite(ns) && ns > 0, `round trip ${ns}`);
});

test('lineRoundTrip stops after about `ms` when the trips would take longer', { timeout: 30_000 }, async () => {
  // A billion round trips take minutes on any machine; the 20 ms cap ends each run (the test's
  // timeout fails it instead of letting it hang if the cap did not work).
  const ns = await lineRoundTrip({ trips: 1e9, rounds: 1, ms: 20 });
  assert.ok(Number.isFinite(ns) && ns > 0, `round trip ${ns}`);
});

test('capacityWatch: nothing measured at one thread; at two a start line, and both measurements at the end', async () => {
  const one = await capacityWatch(1);
  assert.equal(one.startLine, null);
  assert.equal(await one.end(), null);
  const quick = { loop: { ms: 10, rounds: 1 }, trip: { trips: 2000, rounds: 1 } };
  const two = await capacityWatch(2, quick);
  assert.match(two.startLine, /^2 threads ran a busy loop at \d+\.\d\dx one thread's rate; a cache line went between two threads and back in \d+ ns/);
  const c = await two.end();
  assert.equal(c.values.threads, 2);
  for (const x of [c.values.before, c.values.after, c.values.roundTripNs.before, c.values.roundTripNs.after])
    assert.ok(Number.isFinite(x) && x > 0, JSON.stringify(c.values));
  // The start line's figures are the report's "before" (not measured twice).
  assert.ok(two.startLine.includes(`${c.values.before.toFixed(2)}x`), `${two.startLine} / ${c.line}`);
  assert.match(c.line, /before the timings, \d+\.\d\dx after; a cache line went from one thread to another and back in \d+ ns \/ \d+ ns$/);
});
