// SPDX-License-Identifier: Apache-2.0
// Import this module first in a benchmark's entry script: it runs the script again, the same
// arguments and Node options, in a child process whose glibc keeps the memory it frees
// (MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_THRESHOLD_ at 1 GiB), and exits with the child's status.
// A caller who set MALLOC_TRIM_THRESHOLD_ gets the script as is, in this process.
//
// Why: every engine measured here returns each output as a new array. With glibc's defaults the
// memory the collector frees goes back to the kernel and a new array's pages fault in again, a
// cost of the allocator's state, not of any engine, and one that grew with a second thread in the
// process: on a 2-vCPU VM (Node 20, the threaded npm package, matmul 512 through run()) two
// threads ran at 40-51 GFLOP/s, below one thread's 44-50, and at 80-82 with both variables set
// (either one alone: no change). docs/performance.md, "Fresh output arrays in Node".
import { spawnSync } from 'node:child_process';

if (process.env.MALLOC_TRIM_THRESHOLD_ === undefined) {
  const keep = String(1 << 30);
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, MALLOC_TRIM_THRESHOLD_: keep, MALLOC_MMAP_THRESHOLD_: keep } });
  process.exit(child.status ?? 1);
}
