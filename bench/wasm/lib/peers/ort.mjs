// SPDX-License-Identifier: Apache-2.0
// onnxruntime-web, wasm execution provider, numThreads 1 or --threads (no proxy worker). The same functions as
// rungs are built as ONNX graphs here (lib/onnx.mjs), weights as initializers, and ORT's own graph
// optimisations are left on (level 'all': it fuses MatMul+Add, the Erf GELU pattern, ...).
// Standard ONNX opset 17 ops only (no com.microsoft contrib ops in the graph: ORT may fuse into them).
import * as ort from 'onnxruntime-web';

import * as graphs from './ort-graphs.mjs';
import { OnnxGraph } from '../onnx.mjs';

export const name = 'onnxruntime-web';

const sessionOptions = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
// The module and the options every session here uses, for the ONNX files' section (lib/onnx-files.mjs).
export { ort, sessionOptions };

// wasmPaths: where a page serves onnxruntime-web's dist folder (its .wasm and loader); Node finds them itself.
export async function init(threads = 1, { wasmPaths } = {}) {
  if (wasmPaths) ort.env.wasm.wasmPaths = wasmPaths;
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  // Instantiate the runtime once so that later session times are compile times only.
  const g = new OnnxGraph('probe');
  g.output('y', g.node('Relu', [g.input('x', [1])]), [1]);
  await ort.InferenceSession.create(g.toBytes(), sessionOptions);
  return `onnxruntime-web ${ort.env.versions.web}, wasm EP, numThreads ${ort.env.wasm.numThreads}`;
}

/** C = A B for A [n, n] per call (an input), B [n, n] fixed (an initializer). */
export const matmul = (n, B) => graphs.matmul(ort, sessionOptions, n, B);

/** A session for a bundled model at `extent`, or with the bucket dim symbolic (extent null). */
export const model = (m, extent, shapesFor) => graphs.model(ort, sessionOptions, m, extent, shapesFor);
