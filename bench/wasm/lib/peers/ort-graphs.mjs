// SPDX-License-Identifier: Apache-2.0
// The bundled models and a square matmul as ONNX graphs (lib/onnx.mjs) run by an ONNX Runtime
// module given by the caller: onnxruntime-web here (peers/ort.mjs), onnxruntime-node in
// bench/native. Weights are initializers; standard ONNX opset 17 ops only (no com.microsoft
// contrib ops in the graph: ORT may fuse into them), and ORT's graph optimisations stay on.
import { lowerModel, inputShapes } from '../model.mjs';
import { OnnxGraph } from '../onnx.mjs';

export { OnnxGraph };

async function session(ort, sessionOptions, graph) {
  const t0 = performance.now();
  const s = await ort.InferenceSession.create(graph.toBytes(), sessionOptions);
  return { s, setupMs: performance.now() - t0 };
}

/** C = A B for A [n, n] per call (an input), B [n, n] fixed (an initializer). */
export async function matmul(ort, sessionOptions, n, B) {
  const g = new OnnxGraph(`matmul${n}`);
  g.output('c', g.node('MatMul', [g.input('a', [n, n]), g.weight('b', B, [n, n])]), [n, n]);
  const { s } = await session(ort, sessionOptions, g);
  return {
    run: async (A) => (await s.run({ a: new ort.Tensor('float32', A, [n, n]) })).c.data,
    dispose: () => s.release(),
  };
}

function makePeer(g, params, int64Inputs = new Set()) {
  const used = new Set();
  const widths = new Map();  // value name -> last dim, for the values linear() makes
  const c = (v) => g.constFloat([v], []);
  return {
    param(n) {
      const p = params.get(n);
      if (!p) throw new Error(`ort: no weight '${n}'`);
      if (!used.has(n)) g.weight(n, p.data, p.shape);
      used.add(n);
      return n;
    },
    activation(x, act) {
      switch (act) {
        case 'none': return x;
        case 'relu': return g.node('Relu', [x]);
        case 'gelu': {  // 0.5 x (1 + erf(x / sqrt 2)), the pattern ORT fuses into its exact Gelu
          const e = g.node('Erf', [g.node('Div', [x, c(Math.SQRT2)])]);
          return g.node('Mul', [g.node('Mul', [x, g.node('Add', [e, c(1)])]), c(0.5)]);
        }
        case 'gelu_tanh': {
          const x3 = g.node('Mul', [g.node('Mul', [x, x]), x]);
          const u = g.node('Mul', [g.node('Add', [x, g.node('Mul', [x3, c(0.044715)])]), c(0.7978845608028654)]);
          return g.node('Mul', [g.node('Mul', [x, c(0.5)]), g.node('Add', [g.node('Tanh', [u]), c(1)])]);
        }
        case 'silu': return g.node('Mul', [x, g.node('Sigmoid', [x])]);
        case 'tanh': return g.node('Tanh', [x]);
        case 'sigmoid': return g.node('Sigmoid', [x]);
        default: throw new Error(`ort: activation '${act}' is not implemented`);
      }
    },
    linear(x, w, bias) {
      const mm = g.node('MatMul', [x, w]);
      const y = bias ? g.node('Add', [mm, bias]) : mm;
      widths.set(y, params.get(w).shape[1]);
      return y;
    },
    layerNorm(x, gamma, beta, eps) {
      return g.node('LayerNormalization', [x, gamma, beta], { axis: -1, epsilon: eps });
    },
    attention(q, k, v, heads, mask) {
      const hd = widths.get(q) / heads;  // q, k, v come from linear()
      const split = (t, perm) =>
        g.node('Transpose', [g.node('Reshape', [t, g.constInt64([0, 0, heads, -1])])], { perm });
      const qh = split(q, [0, 2, 1, 3]);  // [B, H, S, hd]
      const kt = split(k, [0, 2, 3, 1]);  // [B, H, hd, S]
      const vh = split(v, [0, 2, 1, 3]);
      let scores = g.node('Mul', [g.node('MatMul', [qh, kt]), c(1 / Math.sqrt(hd))]);
      if (mask) {
        // Keys with mask < 0.5 get -1e30: exp underflows to exactly 0, as the reference drops them.
        const drop = g.node('Where', [g.node('Less', [mask, c(0.5)]), c(-1e30), c(0)]);
        scores = g.node('Add', [scores, g.node('Unsqueeze', [drop, g.constInt64([1, 2])])]);
      }
      const o = g.node('MatMul', [g.node('Softmax', [scores], { axis: -1 }), vh]);
      return g.node('Reshape', [g.node('Transpose', [o], { perm: [0, 2, 1, 3] }), g.constInt64([0, 0, -1])]);
    },
    gather(table, ids) {
      if (int64Inputs.has(ids)) return g.node('Gather', [table, ids], { axis: 0 });  // already integers
      return g.node('Gather', [table, g.node('Cast', [g.node('Round', [ids])], { to: 7 /* INT64 */ })], { axis: 0 });
    },
    meanPool(x, mask) {
      if (!mask) return g.node('ReduceMean', [x], { axes: [1], keepdims: 0 });
      const total = g.node('ReduceSum', [g.node('Mul', [x, g.node('Unsqueeze', [mask, g.constInt64([2])])]), g.constInt64([1])], { keepdims: 0 });
      const count = g.node('Max', [g.node('ReduceSum', [mask, g.constInt64([1])], { keepdims: 1 }), c(1e-6)]);
      return g.node('Div', [total, count]);
    },
    add: (a, b) => g.node('Add', [a, b]),
  };
}

/**
 * A bundled model as an OnnxGraph: at a fixed `extent`, or with the bucket dim left symbolic
 * (extent null). int64Inputs: inputs declared INT64 (token ids, fed to Gather as they are) instead
 * of FLOAT (then Cast(Round(ids))): the form an exporter writes, and the one rungs' ONNX frontend
 * reads (it refuses a float-to-integer Cast of a run-time value). bench/wasm/lib/onnx-files.mjs
 * hands the bytes of this graph to both rungs' loadOnnx and onnxruntime-web.
 */
export function modelGraph(m, extent, int64Inputs = []) {
  const g = new OnnxGraph(m.spec.name);
  const dim = extent ?? m.spec.bucket_dim;
  const ints = new Set(int64Inputs);
  const ins = new Map();
  for (const { name: n, shape } of inputShapes(m.spec, dim)) ins.set(n, g.input(n, shape, ints.has(n) ? 'int64' : 'float32'));
  const peer = makePeer(g, m.params, ints);
  const outs = lowerModel(m.spec, peer, ins);
  m.spec.outputs.forEach((o, i) => g.output(o.name, outs[i]));
  return g;
}

/**
 * A session for a bundled model: at a fixed `extent`, or with the bucket dim left symbolic
 * (extent null: one session runs every length at its exact shape).
 * run({name: Float32Array}) -> Promise<Float32Array[]>; `shapesFor(inputs)` gives input shapes.
 */
export async function model(ort, sessionOptions, m, extent, shapesFor) {
  const g = modelGraph(m, extent);
  const { s, setupMs } = await session(ort, sessionOptions, g);
  const outNames = m.spec.outputs.map((o) => o.name);
  return {
    setupMs,
    async run(inputs) {
      const shapes = shapesFor(inputs);
      const feeds = {};
      for (const [n, d] of Object.entries(inputs)) feeds[n] = new ort.Tensor('float32', d, shapes[n]);
      const r = await s.run(feeds);
      return outNames.map((n) => r[n].data);
    },
    dispose: () => s.release(),
  };
}
