// SPDX-License-Identifier: Apache-2.0
// The bundled model descriptions (docs/model-format.md) lowered onto a peer, block by block,
// the way core/hir/hir_module.cpp lowers them for rungs:
//   linear          x @ weight [in, out] + bias, then the activation
//   layer_norm      (x - mean) / sqrt(biased variance + eps) * gamma + beta over the last axis
//   self_attention  linears q, k, v; softmax(q k^T / sqrt(head_dim)) v per head, keys whose mask
//                   is < 0.5 dropped; linear o
//   mlp             linear up (activation, default exact erf GELU), linear down
//   embedding       table[round(id)] (float ids)
//   mean_pool       sum(x * mask) / max(sum(mask), 1e-6) over the sequence axis
//   add             residual
// A peer is an object with the primitive methods used below (lib/peers/*.mjs); values are
// whatever the peer uses (tensors for tfjs, value names for an ONNX graph).
// No Node modules here: headless Chromium runs this file too (bench/wasm/browser.mjs --only peers);
// model-file.mjs reads a model from disk.
import { readSafetensors } from './safetensors.mjs';

/**
 * A model from its JSON text and the bytes of its weights file (`weightsName`, for messages):
 * {spec, jsonText, weightBytes, params}.
 */
export function modelFromBytes(jsonText, weightBytes, weightsName) {
  const spec = JSON.parse(jsonText);
  return { spec, jsonText, weightBytes, params: readSafetensors(weightBytes, weightsName) };
}

/** Input shapes at `extent` (the bucket dim replaced). */
export function inputShapes(spec, extent) {
  return spec.inputs.map(({ name, shape }) => ({ name, shape: shape.map((d) => (d === spec.bucket_dim ? extent : d)) }));
}

/**
 * Lowers spec's blocks onto `peer` given `inputs` (Map name -> peer value). Returns the outputs
 * (peer values) in declared order.
 */
export function lowerModel(spec, peer, inputs) {
  const values = new Map(inputs);
  const get = (name) => {
    if (!values.has(name)) throw new Error(`${spec.name}: value '${name}' is not defined before use`);
    return values.get(name);
  };
  const param = (name) => peer.param(name);
  const linear = (x, name, act = 'none', bias = true) =>
    peer.activation(peer.linear(x, param(`${name}.weight`), bias ? param(`${name}.bias`) : null), act);

  for (const [i, b] of spec.blocks.entries()) {
    let y;
    switch (b.op) {
      case 'linear':
        y = linear(get(b.input), b.name, b.activation ?? 'none', b.bias ?? true);
        break;
      case 'layer_norm':
        y = peer.layerNorm(get(b.input), param(`${b.name}.gamma`), param(`${b.name}.beta`), b.eps ?? 1e-5);
        break;
      case 'self_attention': {
        if (b.causal) throw new Error(`${spec.name}: blocks[${i}]: causal attention is not implemented in the peers`);
        const x = get(b.input);
        const q = linear(x, `${b.name}.q`), k = linear(x, `${b.name}.k`), v = linear(x, `${b.name}.v`);
        const a = peer.attention(q, k, v, b.heads, b.mask ? get(b.mask) : null);
        y = linear(a, `${b.name}.o`);
        break;
      }
      case 'mlp': {
        const h = linear(get(b.input), `${b.name}.up`, b.activation ?? 'gelu');
        y = linear(h, `${b.name}.down`);
        break;
      }
      case 'embedding':
        y = peer.gather(param(`${b.name}.table`), get(b.input));
        break;
      case 'mean_pool':
        y = peer.meanPool(get(b.input), b.mask ? get(b.mask) : null);
        break;
      case 'add':
        y = peer.add(get(b.inputs[0]), get(b.inputs[1]));
        break;
      default:
        throw new Error(`${spec.name}: blocks[${i}]: op '${b.op}' is not implemented in the peers`);
    }
    values.set(b.out, y);
  }
  return spec.outputs.map((o) => get(o.value ?? o.name));
}
