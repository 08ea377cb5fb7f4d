// SPDX-License-Identifier: Apache-2.0
// bench/native/onnx-models.mjs: the committed ONNX encoders (tests/models/onnx/, exported from
// PyTorch by scripts/export-onnx-models.py) in both engines from the SAME .onnx file: rungs loads
// it through its ONNX frontend (rungs::load_model(path, LoadOptions), the add-on's loadModel) and
// onnxruntime-node opens it as it is. run.mjs times them next to the bundled models.
//
// Inputs by name, as a tokenizer makes them: input_ids in [1, 1000), attention_mask of ones,
// token_type_ids 0 on the first half and 1 on the second. rungs takes them as Float32Array (ids
// are exact in f32), ORT as int64 tensors. Every output of both engines is compared by name.
import { join } from 'node:path';

export const ONNX_MODELS = ['bert_post_ln', 'sentence_pre_ln', 'distilbert_classifier'];

/** The model in rungs (handle + layouts) and its file for ORT. */
export function loadOnnx(rungs, repo, name) {
  const path = join(repo, 'tests/models/onnx', `${name}.onnx`);
  const handle = rungs.loadModel(path, {});
  const info = rungs.modelInfo(handle);
  if (info.bucketDim !== 'seq') throw new Error(`${name}: rungs buckets '${info.bucketDim}', expected 'seq'`);
  return { name, path, handle, info };
}

/** {names, f32: [Float32Array], feeds: {name: ort.Tensor int64 [1, len]}} for one request. */
export function onnxInputs(ort, m, len, seed) {
  const names = [], f32 = [], feeds = {};
  for (const { name } of m.info.inputs) {
    let v;
    if (name === 'input_ids') v = Array.from({ length: len }, (_, t) => 1 + ((seed * 131 + t * 7919) % 999));
    else if (name === 'attention_mask') v = new Array(len).fill(1);
    else if (name === 'token_type_ids') v = Array.from({ length: len }, (_, t) => (t < len >> 1 ? 0 : 1));
    else throw new Error(`${m.name}: no generator for input '${name}'`);
    names.push(name);
    f32.push(Float32Array.from(v));
    feeds[name] = new ort.Tensor('int64', BigInt64Array.from(v, BigInt), [1, len]);
  }
  return { names, f32, feeds };
}

/** An ORT session on the file: at a static extent (free dims overridden) or dynamic (extent null). */
export function ortSession(ort, options, m, extent) {
  const o = { ...options };
  if (extent != null) o.freeDimensionOverrides = { batch: 1, seq: extent };
  return ort.InferenceSession.create(m.path, o);
}

/** rungs' outputs (in the model's order) against ORT's (by name): the worst relative difference. */
export function checkOutputs(check, what, m, mine, theirs) {
  if (mine.length !== m.info.outputs.length) throw new Error(`${what}: rungs gave ${mine.length} outputs, the model declares ${m.info.outputs.length}`);
  let worst = 0;
  m.info.outputs.forEach(({ name }, i) => (worst = Math.max(worst, check(`${what}, output ${name}`, mine[i], theirs[name].data))));
  return worst;
}
