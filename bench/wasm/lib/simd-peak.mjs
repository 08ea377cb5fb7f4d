// SPDX-License-Identifier: Apache-2.0
// What one thread computes with WebAssembly SIMD128 on this machine, measured in the process whose
// kernels it is set against. SIMD128 has no fused multiply-add: a product's accumulation is an
// f32x4.mul and an f32x4.add, in every matmul tile (rungs', tfjs', ORT's), and the machine's rate
// of those two instructions bounds all of them. The loop runs `chains` independent recurrences
// c = c * a + b (8 flops per chain and iteration), which V8 can neither hoist nor fold.
//
// Each recurrence waits for its own last result, so with few chains the loop measures latency:
// on the Zen 5 VM of docs/results-kernels.md an iteration took 1.75 / 1.84 / 1.90 ns with 8 / 10 /
// 12 chains (36.5 / 43.5 / 50.5 GFLOP/s), nearly constant. At 12 chains it does 12.6 multiplies
// and adds a nanosecond, the rate rungs' matmul tile reaches with no recurrence in its products
// (12.2 in the same process): the instruction rate, not the latency, binds there. More chains do
// not fit: x64 has 16 vector registers, V8 keeps one, and 12 chains, a, b and a product's
// temporary take the other 15. The figure is the best of 8, 10 and 12 chains; read it as the most
// SIMD128 multiply-add work V8 code was seen to do here, not as a hardware peak.
import wabtFactory from 'wabt';

import { median } from './timing.mjs';

export const PEAK_CHAINS = [8, 10, 12];
const FLOPS_PER_CHAIN = 8;  // one f32x4.mul and one f32x4.add: 4 lanes x 2

/** The text of a module exporting peak(iterations) -> f32 with `chains` recurrences (1..12). */
export function peakWat(chains) {
  if (!Number.isInteger(chains) || chains < 1 || chains > 12) throw new RangeError(`peakWat: chains must be an integer in 1..12, got ${chains}`);
  const c = Array.from({ length: chains }, (_, i) => `$c${i}`);
  const sum = c.slice(1).reduce((acc, x) => `(f32x4.add ${acc} (local.get ${x}))`, `(local.get ${c[0]})`);
  return `(module
  (func (export "peak") (param $n i32) (result f32)
    (local $a v128) (local $b v128) ${c.map((x) => `(local ${x} v128)`).join(' ')}
    (local.set $a (v128.const f32x4 0.999 0.999 0.999 0.999))
    (local.set $b (v128.const f32x4 0.001 0.001 0.001 0.001))
    ${c.map((x, i) => `(local.set ${x} (f32x4.splat (f32.const ${i + 1})))`).join('\n    ')}
    (loop $l
      ${c.map((x) => `(local.set ${x} (f32x4.add (f32x4.mul (local.get ${x}) (local.get $a)) (local.get $b)))`).join('\n      ')}
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (f32x4.extract_lane 0 ${sum})))`;
}

let wabt = null;

/** The loop for `chains` chains, assembled and instantiated: a function (iterations >= 1) -> f32. */
export async function peakLoop(chains) {
  wabt ??= await wabtFactory();
  const mod = wabt.parseWat(`peak${chains}.wat`, peakWat(chains), { simd: true });
  try {
    const { instance } = await WebAssembly.instantiate(mod.toBinary({}).buffer);
    return instance.exports.peak;
  } finally {
    mod.destroy();
  }
}

/** GFLOP/s from `iterations` of a `chains`-chain loop that took `ms`. */
export function peakRate(chains, iterations, ms) {
  if (!(ms > 0)) throw new RangeError(`peakRate: expected a positive time, got ${ms}`);
  return (iterations * chains * FLOPS_PER_CHAIN) / ms / 1e6;
}

/**
 * One thread's best SIMD128 multiply-add rate, GFLOP/s: for each chain count the median of `rounds`
 * timings of about `ms` each (after calibration, which also gets the loop to V8's optimizing tier),
 * and the best of those.
 */
export async function simd128Peak({ ms = 30, rounds = 5 } = {}) {
  let best = 0;
  for (const chains of PEAK_CHAINS) {
    const peak = await peakLoop(chains);
    const time = (n) => {
      const t0 = performance.now();
      const y = peak(n);
      const dt = performance.now() - t0;
      if (!Number.isFinite(y)) throw new Error(`simd128Peak: the ${chains}-chain loop returned ${y}`);
      return dt;
    };
    let n = 1 << 14;
    while (time(n) < ms / 4) n *= 4;
    n = Math.max(1, Math.round((n * ms) / time(n)));
    const rates = [];
    for (let r = 0; r < rounds; ++r) rates.push(peakRate(chains, n, time(n)));
    best = Math.max(best, median(rates));
  }
  return best;
}
