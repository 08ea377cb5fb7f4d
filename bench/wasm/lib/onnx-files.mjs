// SPDX-License-Identifier: Apache-2.0
// ONNX files in the wasm benchmark (bench/wasm/run.mjs, --only onnx): the committed encoders of
// tests/models/onnx (exported from PyTorch by scripts/export-onnx-models.py), and the bundled
// encoder as the ONNX graph peers/ort-graphs.mjs builds for onnxruntime-web, each run by rungs'
// npm package through loadOnnx and by onnxruntime-web from the SAME bytes. tfjs cannot read ONNX.
//
// Inputs by name, as a tokenizer makes them (bench/native/onnx-models.mjs does the same):
// input_ids in [1, 1000), attention_mask of ones, token_type_ids 0 on the first half and 1 on the
// second; the bundled encoder's ids / mask likewise. rungs takes them as Float32Array (ids are
// exact in f32), ORT as the file declares them (int64 for the exports, float for the bundled one).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const COMMITTED = ['bert_post_ln', 'sentence_pre_ln', 'distilbert_classifier'];
/** 'encoder': the bundled encoder (examples/models/encoder.json) as the ONNX graph ORT runs in parts 1-2. */
export const ONNX_MODELS = [...COMMITTED, 'encoder'];

/**
 * The model's ONNX bytes: a committed file as it is; for 'encoder', modelGraph(bundled) gives the graph
 * peers/ort-graphs.mjs builds from the model's JSON and safetensors, with its ids declared int64.
 */
export function onnxBytes(repo, name, bundledGraph) {
  if (name === 'encoder') return bundledGraph().toBytes();
  return new Uint8Array(readFileSync(join(repo, 'tests/models/onnx', `${name}.onnx`)));
}

/**
 * m: {name, bytes, model (rungs Model from loadOnnx), inputNames, outputNames, inners, outInners, dtypes}.
 * Checks that rungs buckets the `seq` dim and fixes batch to 1, as both engines are fed [1, len].
 */
export function describe(r, name, bytes) {
  const model = r.loadOnnx(bytes, { name });
  if (model.bucketDim() !== 'seq') throw new Error(`${name}: rungs buckets '${model.bucketDim()}', expected 'seq'`);
  const layouts = model.inputLayouts(8);
  for (const l of layouts)
    if (!l.followsBucket || l.rowValues !== 1) throw new Error(`${name}: input ${l.name} is not one value per token: ${JSON.stringify(l)}`);
  return {
    name, bytes, model,
    inputNames: layouts.map((l) => l.name),
    dtypes: layouts.map((l) => l.dtype),
    inners: layouts.map(() => 1),
    outputNames: model.outputNames(),
    outInners: model.outputInners(),
  };
}

function values(m, name, len, seed) {
  if (name === 'input_ids' || name === 'ids') return Array.from({ length: len }, (_, t) => 1 + ((seed * 131 + t * 7919) % 999));
  if (name === 'attention_mask' || name === 'mask') return new Array(len).fill(1);
  if (name === 'token_type_ids') return Array.from({ length: len }, (_, t) => (t < len >> 1 ? 0 : 1));
  throw new Error(`${m.name}: no generator for input '${name}'`);
}

/** One request of `len` tokens: {len, f32: {name: Float32Array}, padded: [{name, data, inner}], feeds: {name: ort.Tensor}}. */
export function request(ort, m, len, seed) {
  const f32 = {}, feeds = {}, padded = [];
  m.inputNames.forEach((name, i) => {
    const v = values(m, name, len, seed);
    f32[name] = Float32Array.from(v);
    padded.push({ name, data: f32[name], inner: 1 });
    feeds[name] = m.dtypes[i] === 'int64' ? new ort.Tensor('int64', BigInt64Array.from(v, BigInt), [1, len])
      : m.dtypes[i] === 'int32' ? new ort.Tensor('int32', Int32Array.from(v), [1, len])
      : new ort.Tensor('float32', f32[name], [1, len]);
  });
  return { len, f32, padded, feeds };
}

/** rungs compiled at `extent` (Model.build, Session.compileHir with CompileOptions.threads, weights set). */
export function rungsAt(r, m, extent, threads) {
  const t0 = performance.now();
  const [hir, params] = m.model.build(extent);
  const session = new r.Session(r.Device.Cpu);
  const c = session.compileHir(hir, { threads });
  hir.delete();
  if (c.report().threads !== threads) throw new Error(`rungs: asked for ${threads} threads, the report says ${c.report().threads}`);
  for (const [n, v] of Object.entries(params)) c.setParam(n, v);
  return {
    setupMs: performance.now() - t0,
    run: (q) => c.run(q.f32),
    dispose: () => {
      c.delete();
      session.delete();
    },
  };
}

/** An onnxruntime-web session on the bytes: at a static extent (free dims overridden) or dynamic (extent null). */
export function ortSession(ort, sessionOptions, m, extent) {
  const o = { ...sessionOptions };
  if (extent != null) o.freeDimensionOverrides = { batch: 1, seq: extent };
  return ort.InferenceSession.create(m.bytes, o);
}

/** rungs' outputs (the model's order) against ORT's (by name): the worst relative difference. */
export function checkOutputs(check, what, m, mine, theirs) {
  if (mine.length !== m.outputNames.length) throw new Error(`${what}: rungs gave ${mine.length} outputs, the model declares ${m.outputNames.length}`);
  let worst = 0;
  m.outputNames.forEach((name, i) => {
    if (!theirs[name]) throw new Error(`${what}: onnxruntime-web has no output '${name}'`);
    worst = Math.max(worst, check(`${what}, output ${name}`, mine[i], theirs[name].data));
  });
  return worst;
}
