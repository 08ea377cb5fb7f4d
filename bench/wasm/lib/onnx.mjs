// SPDX-License-Identifier: Apache-2.0
// A small builder for ONNX graphs, serialised with the onnx protobuf schema from the `onnx-proto`
// package (protobufjs), so onnxruntime-web can run the same functions as rungs without Python.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const A = onnx.AttributeProto.AttributeType;

function attribute(name, v) {
  if (Array.isArray(v)) return v.every(Number.isInteger) ? { name, type: A.INTS, ints: v } : { name, type: A.FLOATS, floats: v };
  if (Number.isInteger(v)) return { name, type: A.INT, i: v };
  if (typeof v === 'number') return { name, type: A.FLOAT, f: v };
  if (typeof v === 'string') return { name, type: A.STRING, s: new TextEncoder().encode(v) };
  throw new Error(`onnx attribute '${name}': unsupported value ${v}`);
}

function valueInfo(name, shape, elemType = FLOAT) {
  if (!shape) return { name, type: { tensorType: { elemType } } };  // shape left to inference
  const dim = shape.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}

export class OnnxGraph {
  constructor(name) {
    this.name = name;
    this.nodes = [];
    this.initializers = [];
    this.inputs = [];
    this.outputs = [];
    this.count = 0;
  }

  fresh(hint) {
    return `${hint}_${this.count++}`;
  }

  /** shape: numbers, or a string for a symbolic dim; type 'float32' (the default) or 'int64'. */
  input(name, shape, type = 'float32') {
    if (type !== 'float32' && type !== 'int64') throw new Error(`onnx input '${name}': unsupported type ${type}`);
    this.inputs.push(valueInfo(name, shape, type === 'int64' ? INT64 : FLOAT));
    return name;
  }

  /** A float initializer (a weight); returns its name. */
  weight(name, data, dims) {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.initializers.push({ name, dims, dataType: FLOAT, rawData: bytes.slice() });
    return name;
  }

  constFloat(values, dims = [values.length]) {
    return this.weight(this.fresh('const'), Float32Array.from(values), dims);
  }

  constInt64(values, dims = [values.length]) {
    const name = this.fresh('const');
    this.initializers.push({ name, dims, dataType: INT64, int64Data: values });
    return name;
  }

  /** Appends one node; returns its (first) output name. */
  node(opType, inputs, attrs = {}, outputs = 1) {
    const names = Array.from({ length: outputs }, () => this.fresh(opType.toLowerCase()));
    const attribute_ = Object.entries(attrs).map(([k, v]) => attribute(k, v));
    this.nodes.push({ opType, input: inputs, output: names, name: names[0], attribute: attribute_ });
    return names[0];
  }

  /** shape optional: ORT infers it. */
  output(name, value, shape = null) {
    this.nodes.push({ opType: 'Identity', input: [value], output: [name], name: `out_${name}` });
    this.outputs.push(valueInfo(name, shape));
  }

  /** The serialised ModelProto (IR version 8, default domain at `opset`). */
  toBytes(opset = 17) {
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: 'rungs-bench',
      opsetImport: [{ domain: '', version: opset }],
      graph: {
        name: this.name,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}
