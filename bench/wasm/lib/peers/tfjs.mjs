// SPDX-License-Identifier: Apache-2.0
// @tensorflow/tfjs-core on @tensorflow/tfjs-backend-wasm, one thread, the non-threaded SIMD
// binary. tfjs runs ops eagerly, so one runner serves every input shape (exact shapes); weights
// are uploaded once as kept tensors. Matmuls with a bias use tf.fused.matMul (XNNPACK fully
// connected with the bias fused); GELU is composed from Erf (the wasm backend fuses no GELU).
import * as tf from '@tensorflow/tfjs-core';
import { getThreadsCount, setThreadsCount, setWasmPaths, version_wasm } from '@tensorflow/tfjs-backend-wasm';

import { lowerModel } from '../model.mjs';

export const name = 'tfjs-wasm';

// threads > 1: the threaded SIMD binary. Its loader starts its pthread workers from a blob: URL,
// which Node's worker_threads refuse (ERR_WORKER_PATH): in Node init throws at once, and
// bench/wasm/run.mjs leaves tfjs out of the row and says so; in a cross-origin isolated page
// (bench/wasm/browser.mjs --only peers) it runs. wasmPaths: where a page serves the .wasm files.
export async function init(threads = 1, { wasmPaths } = {}) {
  if (wasmPaths) setWasmPaths(wasmPaths);
  if (threads > 1 && typeof process === 'object') {
    throw new Error('its threaded binary does not start in Node (pthread workers from blob: URLs, which worker_threads refuse)');
  }
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', threads > 1);
  setThreadsCount(threads);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend did not initialise');
  await tf.ready();
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  if (!simd) throw new Error('tfjs: the wasm backend is not using its SIMD binary');
  return `@tensorflow/tfjs-backend-wasm ${version_wasm}, SIMD, threads ${getThreadsCount()} (${threads > 1 ? 'threaded' : 'non-threaded'} binary)`;
}

// The values of a tidy's result tensor, then the tensor freed. (Reading inside tf.tidy would make
// tidy walk the returned Float32Array element by element looking for tensors: ~250 ms at 512^2.)
function readOut(t) {
  const d = t.dataSync();
  t.dispose();
  return d;
}

/** C = A B for A [n, n] per call, B [n, n] fixed (uploaded once). */
export function matmul(n, B) {
  const b = tf.keep(tf.tensor2d(B, [n, n]));
  return {
    run: (A) => readOut(tf.tidy(() => tf.matMul(tf.tensor2d(A, [n, n]), b))),
    dispose: () => b.dispose(),
  };
}

function activation(x, act) {
  switch (act) {
    case 'none': return x;
    case 'relu': return tf.relu(x);
    case 'gelu': return tf.mul(tf.mul(x, 0.5), tf.add(tf.erf(tf.mul(x, Math.SQRT1_2)), 1));
    case 'gelu_tanh': {
      const u = tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), 0.7978845608028654);
      return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(u), 1));
    }
    case 'silu': return tf.mul(x, tf.sigmoid(x));
    case 'tanh': return tf.tanh(x);
    case 'sigmoid': return tf.sigmoid(x);
    default: throw new Error(`tfjs: activation '${act}' is not implemented`);
  }
}

function makePeer(params) {
  return {
    param: (n) => {
      const p = params.get(n);
      if (!p) throw new Error(`tfjs: no weight '${n}'`);
      return p;
    },
    activation,
    linear(x, w, bias) {
      const s = x.shape;
      const x2 = s.length === 2 ? x : tf.reshape(x, [-1, s[s.length - 1]]);
      const y = tf.fused.matMul({ a: x2, b: w, bias: bias ?? undefined });
      return s.length === 2 ? y : tf.reshape(y, [...s.slice(0, -1), w.shape[1]]);
    },
    layerNorm(x, gamma, beta, eps) {
      const { mean, variance } = tf.moments(x, -1, true);
      return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps))), gamma), beta);
    },
    attention(q, k, v, heads, mask) {
      const [B, S, W] = q.shape;
      const hd = W / heads;
      const split = (t) => tf.transpose(tf.reshape(t, [B, S, heads, hd]), [0, 2, 1, 3]);  // [B, H, S, hd]
      let scores = tf.mul(tf.matMul(split(q), split(k), false, true), 1 / Math.sqrt(hd));
      if (mask) {
        // Keys with mask < 0.5 get -1e30: exp underflows to exactly 0, as the reference drops them.
        const drop = tf.mul(tf.cast(tf.less(mask, 0.5), 'float32'), -1e30);
        scores = tf.add(scores, tf.reshape(drop, [B, 1, 1, S]));
      }
      const o = tf.matMul(tf.softmax(scores, -1), split(v));  // [B, H, S, hd]
      return tf.reshape(tf.transpose(o, [0, 2, 1, 3]), [B, S, W]);
    },
    gather(table, ids) {
      return tf.gather(table, tf.cast(tf.round(ids), 'int32'));
    },
    meanPool(x, mask) {
      if (!mask) return tf.mean(x, 1);
      const total = tf.sum(tf.mul(x, tf.expandDims(mask, 2)), 1);
      const count = tf.maximum(tf.sum(mask, 1, true), 1e-6);
      return tf.div(total, count);
    },
    add: (a, b) => tf.add(a, b),
  };
}

/**
 * A runner for a bundled model at any extent: run({name: Float32Array}) -> Float32Array[].
 * `shapesFor(inputs)` gives each input's shape for the data handed in.
 */
export function model(m, shapesFor) {
  const t0 = performance.now();
  const params = new Map();
  for (const [n, p] of m.params) params.set(n, tf.keep(tf.tensor(p.data, p.shape)));
  const peer = makePeer(params);
  const setupMs = performance.now() - t0;
  return {
    setupMs,
    run(inputs) {
      const ys = tf.tidy(() => {
        const shapes = shapesFor(inputs);
        const vals = new Map(Object.entries(inputs).map(([n, d]) => [n, tf.tensor(d, shapes[n])]));
        return lowerModel(m.spec, peer, vals);
      });
      return ys.map(readOut);
    },
    dispose() {
      for (const t of params.values()) t.dispose();
    },
  };
}
