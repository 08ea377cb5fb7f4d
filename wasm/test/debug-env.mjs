// SPDX-License-Identifier: Apache-2.0
// Preloaded (node --import) only for scripts/test's wasm-debug run of the package tests. The
// release package is built for -sENVIRONMENT=web,worker and its web loader runs in Node 20 as it
// is (wasm/CMakeLists.txt). A build with ASSERTIONS refuses an environment it was not built for,
// so the debug package also lists node; Emscripten 3.1.6's Node loader then expects CommonJS's
// `require` and `__dirname`, which an ES module does not have. Provide them.
import { createRequire } from 'node:module';

globalThis.require ??= createRequire(import.meta.url);
globalThis.__dirname ??= process.cwd();
