// rungs for JavaScript: the Embind module, instantiated once when this module is imported.
// Node 20 and browsers load the same file (the wasm is embedded; see wasm/CMakeLists.txt).
import createRungsModule from './rungs_core.js';

const wasm = await createRungsModule();

/** The rungs library version, "MAJOR.MINOR.PATCH". */
export function version() {
  return wasm.version();
}

/** The instruction set Device.Cpu kernels dispatch to: "wasm" (SIMD128) in this build. */
export function cpuIsa() {
  return wasm.cpuIsa();
}

export const { Graph, Session, CompiledGraph, Device } = wasm;
