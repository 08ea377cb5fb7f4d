// SPDX-License-Identifier: Apache-2.0
// What the machine gives N threads right now, measured with no engine in it: N worker threads
// run the same busy loop at once, against one of them alone. On a 2-vCPU VM whose vCPUs share the
// host's cores, two threads got anything from 1.0x to 2.0x one thread's rate depending on the
// minute (docs/results-threads.md); a benchmark's N-thread rows measured in a 1.0x
// minute say nothing about the code. The benchmarks print this before and after their timings.
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

/** The line the benchmarks print, and a warning when the machine gave less than 90% of `threads`. */
export function capacityReport(threads, before, after) {
  const fmt = (x) => (x == null ? '-' : `${x.toFixed(2)}x`);
  const line = `${threads} threads ran a busy loop (worker_threads, no engine) at ${fmt(before)} one thread's rate before the timings, ${fmt(after)} after`;
  const low = [before, after].some((x) => x != null && x < 0.9 * threads);
  return {
    values: { threads, before, after },
    line,
    warning: low ? `the machine did not give ${threads} threads ${threads} cores' worth during this run (${fmt(before)} / ${fmt(after)}): its ${threads}-thread rows measure the machine, not the code; run again` : null,
  };
}
