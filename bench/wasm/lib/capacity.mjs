// SPDX-License-Identifier: Apache-2.0
// What the machine gives N threads right now, measured with no engine in it: N worker threads
// run the same busy loop at once, against one of them alone. On a 2-vCPU VM whose vCPUs share the
// host's cores, two threads got anything from 1.0x to 2.0x one thread's rate depending on the
// minute (docs/results-threads.md); a benchmark's N-thread rows measured in a 1.0x
// minute say nothing about the code. The benchmarks print this before and after their timings.
//
// The busy loop touches no memory another thread touches, so it cannot see the other way the same
// VM changed from minute to minute: how long data one core wrote took to reach the other. With the
// busy loop at 2.0x throughout, a cache line went from one thread to the other and back in
// 170-250 ns in some minutes and 430-550 ns in others; in the slow minutes every kernel of a graph
// split over two threads ran about 20% slower than the same rows on one thread alone (two
// processes running one thread each lost 2%), and the bundled encoder at 256 tokens ran 1.55x-1.6x
// faster on two threads than on one, against 1.9x in the fast minutes. lineRoundTrip measures it.
import { Worker } from 'node:worker_threads';

import { median } from './timing.mjs';

// An integer recurrence the JIT cannot fold or vectorize: each step needs the last.
const LOOP = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (n) => {
  let x = 1;
  for (let i = 0; i < n; ++i) x = (Math.imul(x, 1103515245) + 12345) | 0;
  parentPort.postMessage(x);
});`;

/**
 * N threads' rate against one thread's from the two wall times of the same work per thread:
 * N x one / all (N when all N ran as fast as one alone, 1 when they took turns on one core).
 */
export function capacityFrom(threads, oneMs, allMs) {
  if (!(threads >= 1) || !(oneMs > 0) || !(allMs > 0)) throw new RangeError(`capacityFrom: expected threads >= 1 and positive times, got ${threads}, ${oneMs}, ${allMs}`);
  return (threads * oneMs) / allMs;
}

/**
 * Median over `rounds` of capacityFrom(threads, ...): one worker runs about `ms` of the loop
 * alone, then all `threads` workers run the same amount each at once.
 */
export async function machineCapacity(threads, { ms = 50, rounds = 5 } = {}) {
  const workers = Array.from({ length: threads }, () => new Worker(LOOP, { eval: true }));
  try {
    const run = (ws, n) => {
      const t0 = performance.now();
      return Promise.all(ws.map((w) => new Promise((res, rej) => {
        const fail = (e) => {
          w.off('message', done);
          rej(e);
        };
        const done = () => {
          w.off('error', fail);
          res();
        };
        w.once('message', done);
        w.once('error', fail);
        w.postMessage(n);
      }))).then(() => performance.now() - t0);
    };
    // Calibrate (this also gets every worker's loop compiled by the optimizing tier).
    let n = 1 << 16;
    for (let t = await run(workers, n); t < ms / 4; t = await run(workers, n)) n *= 4;
    n = Math.round((n * ms) / (await run(workers.slice(0, 1), n)));
    const ratios = [];
    for (let r = 0; r < rounds; ++r) ratios.push(capacityFrom(threads, await run(workers.slice(0, 1), n), await run(workers, n)));
    return median(ratios);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

// Two workers take turns on word 0 of a SharedArrayBuffer: each spins on Atomics.load until the
// other has written its number, then writes the next. The first stops after `trips` round trips or
// `ms` milliseconds, whichever comes first (on a machine whose two threads share one core a round
// trip takes a scheduler time slice), writes -1 for the other and posts the mean ns of a round trip.
const PING_PONG = `
const { parentPort, workerData: { sab, trips, ms, first } } = require('node:worker_threads');
const a = new Int32Array(sab);
parentPort.postMessage('ready');
while (Atomics.load(a, 1) === 0);
const t0 = performance.now();
let done = 0;
if (first) {
  while (done < trips && (done % 1024 !== 0 || performance.now() - t0 < ms)) {
    Atomics.store(a, 0, 2 * done + 1);
    while (Atomics.load(a, 0) !== 2 * done + 2);
    ++done;
  }
  Atomics.store(a, 0, -1);
  parentPort.postMessage(((performance.now() - t0) * 1e6) / done);
} else {
  for (let v; (v = Atomics.load(a, 0)) !== -1;)
    if (v % 2 === 1) Atomics.store(a, 0, v + 1);
  parentPort.postMessage(0);
}`;

/** Above this many ns a round trip (lineRoundTrip), capacityReport warns. */
export const SLOW_ROUND_TRIP_NS = 350;

/**
 * Nanoseconds for a cache line to go from one thread to another and back (two worker threads
 * taking turns on one SharedArrayBuffer word; the median of `rounds` runs of `trips` round trips,
 * each cut short after about `ms` milliseconds).
 */
export async function lineRoundTrip({ trips = 100_000, rounds = 5, ms = 200 } = {}) {
  const once = async () => {
    const sab = new SharedArrayBuffer(64);
    const workers = [true, false].map((first) => new Worker(PING_PONG, { eval: true, workerData: { sab, trips, ms, first } }));
    try {
      const next = () => Promise.all(workers.map((w) => new Promise((res, rej) => {
        w.once('message', res);
        w.once('error', rej);
      })));
      await next();  // both spin on the start word
      const done = next();
      Atomics.store(new Int32Array(sab), 1, 1);
      return (await done)[0];
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  };
  const ns = [];
  for (let r = 0; r < rounds; ++r) ns.push(await once());
  return median(ns);
}

/**
 * The `cores` line a benchmark prints before its timings (capacityReport's, at the end, has both
 * measurements): `before` from machineCapacity, `tripNs` from lineRoundTrip.
 */
export function capacityStartLine(threads, before, tripNs) {
  return `${threads} threads ran a busy loop at ${before.toFixed(2)}x one thread's rate; a cache line went between two ` +
    `threads and back in ${Math.round(tripNs)} ns (worker_threads, no engine; measured again at the end)`;
}

/**
 * The line the benchmarks print, and a warning when the machine gave less than 90% of `threads`
 * or (given lineRoundTrip's ns before and after) moved data between threads slowly.
 */
export function capacityReport(threads, before, after, trips = { before: null, after: null }) {
  const fmt = (x) => (x == null ? '-' : `${x.toFixed(2)}x`);
  const ns = (x) => (x == null ? '-' : `${Math.round(x)} ns`);
  const timed = trips.before != null || trips.after != null;
  const line = `${threads} threads ran a busy loop (worker_threads, no engine) at ${fmt(before)} one thread's rate before the timings, ${fmt(after)} after` +
    (timed ? `; a cache line went from one thread to another and back in ${ns(trips.before)} / ${ns(trips.after)}` : '');
  const low = [before, after].some((x) => x != null && x < 0.9 * threads);
  const slow = [trips.before, trips.after].some((x) => x != null && x > SLOW_ROUND_TRIP_NS);
  const warnings = [];
  if (low) warnings.push(`the machine did not give ${threads} threads ${threads} cores' worth during this run (${fmt(before)} / ${fmt(after)})`);
  if (slow) warnings.push(`data moved slowly between the cores during this run (a cache line's round trip ${ns(trips.before)} / ${ns(trips.after)}, above ${SLOW_ROUND_TRIP_NS} ns), which costs every graph split over threads`);
  return {
    values: { threads, before, after, ...(timed ? { roundTripNs: { before: trips.before, after: trips.after } } : {}) },
    line,
    warning: warnings.length ? `${warnings.join('; ')}: its ${threads}-thread rows measure the machine, not the code; run again` : null,
  };
}

/**
 * What the benchmarks do around their timings at `threads` threads: measure the machine now
 * (`startLine`, the line to print first) and again when `end()` is called, which returns
 * capacityReport's { values, line, warning }. At one thread nothing is measured: `startLine` is
 * null and `end()` returns null. `loop` and `trip` are machineCapacity's and lineRoundTrip's
 * options (their defaults unless given).
 */
export async function capacityWatch(threads, { loop = {}, trip = {} } = {}) {
  if (threads <= 1) return { startLine: null, end: async () => null };
  const before = await machineCapacity(threads, loop);
  const tripBefore = await lineRoundTrip(trip);
  return {
    startLine: capacityStartLine(threads, before, tripBefore),
    end: async () => capacityReport(threads, before, await machineCapacity(threads, loop),
      { before: tripBefore, after: await lineRoundTrip(trip) }),
  };
}
