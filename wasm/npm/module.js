// SPDX-License-Identifier: Apache-2.0
// rungs for JavaScript, part 1 of 3: the Embind module (wasm/bindings), instantiated once, when the
// package is first imported (index.js re-exports what users see; calls.js wraps the bound calls).
//
// Two variants of the module ship (wasm/CMakeLists.txt); this picks one at load time:
//  - rungs_core_mt.js, with threads (pthreads on Web Workers / worker_threads), where memory can
//    be shared with a worker: in Node (>= 20.16: process.getBuiltinModule), and in pages and
//    workers that are cross-origin isolated (COOP + COEP; a page that is not can still create a
//    shared WebAssembly.Memory but cannot post it to a worker, so SharedArrayBuffer is not enough);
//  - rungs_core.js, single-threaded, everywhere else, and where the machine has one core.
// CompileOptions.threads then counts up to threading().maxThreads; the report says how many ran.
// In Node, RUNGS_WASM_VARIANT=single (or =threads) forces one (the tests run both).
const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
const MAX_THREADS = 8; // backends/thread_pool.hpp, ThreadPool::kMaxWasmThreads

// The core count the module itself sees (Emscripten's emscripten_num_logical_cores).
function hardwareThreads() {
  if (isNode) return process.getBuiltinModule?.('os')?.cpus().length || 1;
  return globalThis.navigator?.hardwareConcurrency || 1;
}

function chooseVariant() {
  const forced = isNode ? process.env.RUNGS_WASM_VARIANT : undefined;
  if (forced !== undefined && forced !== 'single' && forced !== 'threads') {
    throw new Error(`RUNGS_WASM_VARIANT must be 'single' or 'threads', got '${forced}'`);
  }
  const canShare = typeof SharedArrayBuffer === 'function' &&
    (isNode ? typeof process.getBuiltinModule === 'function' : globalThis.crossOriginIsolated === true);
  if (forced === 'threads' && !canShare) throw new Error('RUNGS_WASM_VARIANT=threads: this Node cannot share memory with a worker (Node >= 20.16 can)');
  if (forced) return forced;
  return canShare && hardwareThreads() > 1 ? 'threads' : 'single';
}

// Where each variant's wasm is, beside this file. Written as `new URL('./x', import.meta.url)`
// with a literal name so that bundlers (Vite, webpack 5) copy the file as an asset and rewrite the
// URL. Node's fetch cannot read a file: URL and the single variant has no Node loader, so in Node
// the bytes are read here and passed as Module.wasmBinary; elsewhere the module fetches the URL
// (Module.locateFile) and compiles it streaming.
const wasmUrls = {
  single: new URL('./rungs_core.wasm', import.meta.url),
  threads: new URL('./rungs_core_mt.wasm', import.meta.url),
};

async function wasmOptions(variant) {
  const url = wasmUrls[variant];
  if (!isNode) {
    return { locateFile: (path, prefix) => (path.endsWith('.wasm') ? url.href : prefix + path) };
  }
  // A specifier in a variable: bundlers leave this Node-only import alone.
  const fsName = 'node:fs/promises';
  const { readFile } = await import(/* @vite-ignore */ fsName);
  return { wasmBinary: await readFile(url) };
}

// Where the threaded module finds its pthread worker script and itself (the worker imports it):
// URLs next to this file, written as `new URL('./x', import.meta.url)` so that bundlers copy the
// files as assets. In Node the worker is the .cjs copy (see wasm/CMakeLists.txt). The workers get
// the compiled wasm from this thread; they never load the .wasm file.
async function instantiate(variant) {
  if (variant === 'single') {
    const { default: create } = await import('./rungs_core.js');
    return create(await wasmOptions(variant));
  }
  const mainUrl = new URL('./rungs_core_mt.js', import.meta.url).href;
  const workerUrl = isNode
    ? process.getBuiltinModule('url').fileURLToPath(new URL('./rungs_core_mt.worker.cjs', import.meta.url))
    : new URL('./rungs_core_mt.worker.js', import.meta.url).href;
  let create;
  try {
    ({ default: create } = await import(/* @vite-ignore */ mainUrl));
  } catch (e) {
    // Node: only a missing file falls back; a browser cannot tell a missing file from others.
    if (isNode && process.getBuiltinModule('fs').existsSync(new URL(mainUrl))) throw e;
    e.rungsMissingVariant = true;
    throw e;
  }
  const { locateFile, ...wasm } = await wasmOptions(variant);
  const module = await create({
    ...wasm,
    rungsWorkers: Math.min(hardwareThreads(), MAX_THREADS) - 1,
    mainScriptUrlOrBlob: mainUrl,
    locateFile: (path, prefix) => {
      if (path.endsWith('.worker.js')) return workerUrl;
      return locateFile ? locateFile(path, prefix) : prefix + path;
    },
  });
  // Node: the workers (idle, or running the shared pool's threads, which the module starts as it
  // loads) must not keep the process alive after the program's last line.
  if (isNode) {
    for (const w of [...(module.PThread?.unusedWorkers ?? []), ...(module.PThread?.runningWorkers ?? [])]) w.unref?.();
  }
  return module;
}

let variant = chooseVariant();
let wasm;
try {
  wasm = await instantiate(variant);
} catch (e) {
  // A package built without the threaded variant (only the wasm-release preset) lacks its file.
  if (variant !== 'threads' || !e?.rungsMissingVariant) throw e;
  variant = 'single';
  wasm = await instantiate(variant);
}
const maxThreads = variant === 'threads' ? Math.min(hardwareThreads(), MAX_THREADS) : 1;

export { isNode, maxThreads, variant, wasm };
