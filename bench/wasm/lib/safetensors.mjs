// SPDX-License-Identifier: Apache-2.0
// A safetensors reader for the bundled models (docs/model-format.md, "The weights file"): F32,
// BF16 and F16 tensors, converted to Float32Array exactly as rungs' reader does. It checks only
// what a malformed file would otherwise turn into wrong numbers; rungs' own reader is the
// validating one.

function f16ToF32(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;  // zero and subnormals
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function decode(dtype, bytes, count, where) {
  const out = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'F32') {
    for (let i = 0; i < count; ++i) out[i] = view.getFloat32(4 * i, true);
  } else if (dtype === 'BF16') {
    const u32 = new Uint32Array(out.buffer);  // bf16 is the high half of an f32
    for (let i = 0; i < count; ++i) u32[i] = view.getUint16(2 * i, true) << 16;
  } else if (dtype === 'F16') {
    for (let i = 0; i < count; ++i) out[i] = f16ToF32(view.getUint16(2 * i, true));
  } else {
    throw new Error(`${where}: dtype ${dtype} is not F32, BF16 or F16`);
  }
  return out;
}

const dtypeBytes = { F32: 4, BF16: 2, F16: 2 };

/** bytes (Uint8Array) -> Map name -> {shape, dtype, data: Float32Array}. */
export function readSafetensors(bytes, source = 'safetensors') {
  if (bytes.byteLength < 8) throw new Error(`${source}: shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (8 + headerLen > bytes.byteLength) throw new Error(`${source}: header length ${headerLen} runs past the file`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLen)));
  const data = bytes.subarray(8 + headerLen);
  const tensors = new Map();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const count = t.shape.reduce((a, b) => a * b, 1);
    const [begin, end] = t.data_offsets;
    const where = `${source}: tensor '${name}'`;
    if (end - begin !== count * (dtypeBytes[t.dtype] ?? NaN) || end > data.byteLength)
      throw new Error(`${where}: data_offsets [${begin}, ${end}] do not hold ${t.dtype} ${JSON.stringify(t.shape)}`);
    tensors.set(name, { shape: t.shape, dtype: t.dtype, data: decode(t.dtype, data.subarray(begin, end), count, where) });
  }
  return tensors;
}
