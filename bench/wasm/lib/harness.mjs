// SPDX-License-Identifier: Apache-2.0
// What the benchmark drivers share (bench/wasm/run.mjs, bench/native/run.mjs): options declared
// as data, the output check every contender passes before it is timed and what a mismatch ends,
// reproducible inputs.

/**
 * optionList: [[flag, help, (options, value) => void], ...], every option taking a value.
 * Prints the usage and exits 0 on --help; exits 2 on an unknown option or a missing value.
 */
export function parseOptions(argv, optionList, defaults, usage) {
  const o = { ...defaults };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--help' || argv[i] === '-h') {
      console.log(`usage: ${usage} [options]\n\noptions:`);
      for (const [flag, help] of optionList) console.log(`  ${flag.padEnd(13)} VALUE  ${help}`);
      process.exit(0);
    }
    const opt = optionList.find(([flag]) => flag === argv[i]);
    if (!opt || i + 1 >= argv.length) {
      console.error(`run.mjs: unknown option or missing value: ${argv[i]} (try --help)`);
      process.exit(2);
    }
    opt[2](o, argv[++i]);
  }
  return o;
}

/** An output that differs between contenders: the drivers stop with exit code 1. */
export class Mismatch extends Error {}

/** Runs a driver's sections: a Mismatch ends the process with its message and exit code 1. */
export async function stopOnMismatch(sections) {
  try {
    await sections();
  } catch (e) {
    if (!(e instanceof Mismatch)) throw e;
    console.error(`\nFAILED: ${e.message}`);
    process.exit(1);
  }
}

/** Max of |a - b| / max(1, |b|); throws Mismatch past `tol` (or on a length difference). */
export function check(what, a, b, tol) {
  if (a.length !== b.length) throw new Mismatch(`${what}: ${a.length} values vs ${b.length}`);
  let worst = 0, at = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i]));
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  if (!(worst <= tol))
    throw new Mismatch(`${what}: outputs differ at [${at}]: ${a[at]} vs ${b[at]} (relative ${worst.toExponential(2)} > ${tol})`);
  return worst;
}

/** mulberry32: a reproducible stream in [0, 1). */
export function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n reproducible values in [-1, 1). */
export const uniform = (n, seed) => {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => 2 * r() - 1);
};
