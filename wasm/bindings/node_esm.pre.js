// SPDX-License-Identifier: Apache-2.0
// --pre-js of the threaded variant (rungs_core_mt.js; wasm/CMakeLists.txt). Its Node code paths
// (Emscripten 3.1.6: worker_threads for the pthreads, fs for output, os for the core count) call
// require() for Node's built-in modules and read __dirname, which an ES module does not have. In
// a pthread worker (rungs_core_mt.worker.cjs, CommonJS) worker.js has put its require on the
// global; on Node's main thread the built-ins come from process.getBuiltinModule (Node >= 20.16;
// wasm/npm/index.js loads the single-threaded variant where it is missing). __dirname only
// prefixes files the module would load, and it loads none (the wasm is embedded; index.js
// locates the worker script). In browsers both stay unused. (No import.meta here: this
// Emscripten's JS optimizer cannot print it.)
var require = globalThis.require ||
  (typeof process == 'object' && typeof process.getBuiltinModule == 'function'
    ? function(id) { return process.getBuiltinModule(id); } : undefined);
var __dirname = '';
