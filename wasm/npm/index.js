// SPDX-License-Identifier: Apache-2.0
// rungs for JavaScript: the Embind module (wasm/bindings), instantiated once when this module is
// imported, with a thin layer that makes it behave like a JS library:
//  - errors: the C++ side catches every exception and records it; each bound call here throws it
//    as a JS Error with the C++ message (in this package's names: inPackageTerms) and `code`
//    (nothing is thrown through wasm frames);
//  - optional arguments get the C++ defaults (Embind itself wants every argument);
//  - build callbacks are guarded: an exception a build throws is held while the cache unwinds
//    normally, then rethrown unchanged;
//  - every class gets [Symbol.dispose] (for `using`), and `ladder` groups the ladder functions;
//  - arguments Embind would take on trust are checked first: enums (Device, Activation) must be
//    one of their values, handles (Graph, HirModule) the right class and not deleted, and a call
//    on a deleted object is a coded error. What Embind itself refuses (a missing argument, a
//    value of the wrong type) is rethrown with the function's name and a `code`.
// Node 20 and browsers load the same files: the JS, and its wasm beside it (see wasm/CMakeLists.txt).
// The module is an ES module with top-level await: from CommonJS load it with
// `const rungs = await import('rungs')` (README.md, "CommonJS").
//
// The package is three ES modules: module.js (instantiation and the variant), calls.js (the
// wrapping of bound calls) and this one, the public API.
import {
  R, argChecks, argumentError, boolArg, checked, deletedError, describeValue, deviceArg, handleArg, isHandle,
  retitled, withDefaults, wrapClass,
} from './calls.js';
import { isNode, maxThreads, variant, wasm } from './module.js';

export const Graph = wrapClass('Graph');
export const HirModule = wrapClass('HirModule');
export const Session = wrapClass('Session');
export const CompiledGraph = wrapClass('CompiledGraph');

// CompiledGraph.run's fast path. When the inputs are exactly the graph's inputs, each a
// Float32Array of its compiled size, the checks happen here in JS and the C++ side (_runStaged,
// wasm/bindings/graph_adapters.cpp) copies each input once into the run's workspace and each
// output once out of it, with nothing else crossing between JS and wasm. Anything else (other
// typed arrays, a wrong size, a missing or unknown name) takes the general path, whose
// conversions and error messages are the C++ ones.
{
  const proto = wasm.CompiledGraph.prototype;
  const general = proto.run;
  const staged = proto._runStaged;
  delete proto._runStaged;
  const plans = new WeakMap();  // handle -> {names, sizes}, fixed once compiled
  const plan = (compiled) => {
    let p = plans.get(compiled);
    if (!p) {
      const names = compiled.inputNames();
      p = { names, sizes: names.map((n) => compiled.inputShape(n).reduce((a, b) => a * b, 1)) };
      plans.set(compiled, p);
    }
    return p;
  };
  const plainInputs = (compiled, inputs) => {
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) return null;
    if (!isHandle(compiled) || compiled.isDeleted()) return null;
    const { names, sizes } = plan(compiled);
    if (Object.keys(inputs).length !== names.length) return null;
    const ordered = new Array(names.length);
    for (let k = 0; k < names.length; ++k) {
      const v = Object.hasOwn(inputs, names[k]) ? inputs[names[k]] : undefined;
      if (!(v instanceof Float32Array) || v.length !== sizes[k]) return null;
      ordered[k] = v;
    }
    return ordered;
  };
  proto.run = function run(...args) {
    const ordered = args.length === 1 ? plainInputs(this, args[0]) : null;
    if (!ordered) return general.apply(this, args);
    wasm.rungsStagedIn = ordered;
    wasm.rungsStagedOut = [];
    try {
      staged.call(this);
      return wasm.rungsStagedOut;
    } finally {
      wasm.rungsStagedIn = null;
      wasm.rungsStagedOut = null;
    }
  };
  Object.defineProperty(proto.run, 'name', { value: 'CompiledGraph.run' });

  // runInto: run's results written into the caller's arrays, one Float32Array per output in
  // declared order, each exactly the output's size. Nothing is allocated per call: a fresh
  // output array costs a page fault per 4 KiB on first write (1 MiB of output took 1.5 to 3 ms
  // on a 2-vCPU VM, longer than the 512^3 matmul that filled it on two threads).
  const outPlans = new WeakMap();  // handle -> {names, sizes} of the outputs
  proto.runInto = function runInto(inputs, outputs) {
    if (isHandle(this) && this.isDeleted()) throw deletedError('CompiledGraph.runInto', this);
    let p = outPlans.get(this);
    if (!p) {
      const names = this.outputNames();
      p = { names, sizes: names.map((n) => this.outputShape(n).reduce((a, b) => a * b, 1)) };
      outPlans.set(this, p);
    }
    if (!Array.isArray(outputs) || outputs.length !== p.names.length) {
      throw argumentError(`CompiledGraph.runInto: outputs must be an array of ${p.names.length} Float32Array(s), one per output ` +
        `(${p.names.join(', ')}), got ${Array.isArray(outputs) ? `an array of ${outputs.length}` : describeValue(outputs)}`);
    }
    p.names.forEach((name, j) => {
      const o = outputs[j];
      if (!(o instanceof Float32Array) || o.length !== p.sizes[j]) {
        throw argumentError(`CompiledGraph.runInto: outputs[${j}] (output '${name}') must be a Float32Array of ${p.sizes[j]} values, ` +
          `got ${o instanceof Float32Array ? `one of ${o.length}` : describeValue(o)}`);
      }
    });
    const ordered = plainInputs(this, inputs);
    try {
      if (!ordered) {
        // Other input types take run's general path (its conversions and messages), then a copy.
        general.call(this, inputs).forEach((y, j) => outputs[j].set(y));
        return outputs;
      }
      wasm.rungsStagedIn = ordered;
      wasm.rungsStagedInto = outputs;
      staged.call(this);
      return outputs;
    } catch (e) {
      throw retitled(e, 'CompiledGraph.run', 'CompiledGraph.runInto');
    } finally {
      wasm.rungsStagedIn = null;
      wasm.rungsStagedInto = null;
    }
  };
}
export const Model = wrapClass('Model');
export const BucketedCompileCache = wrapClass('BucketedCompileCache');
export const UnigramTokenizer = wrapClass('UnigramTokenizer');
export const WordPieceTokenizer = wrapClass('WordPieceTokenizer');
// The loaders' optional arguments (docs/text.md): the source names the text in error messages.
UnigramTokenizer.parse = withDefaults(UnigramTokenizer.parse, 'UnigramTokenizer.parse', [R, 'vocab.json']);
Model.parse = withDefaults(Model.parse, 'Model.parse', [R, 'model.json']); // index.d.ts: source?
WordPieceTokenizer.parseVocabTxt = withDefaults(WordPieceTokenizer.parseVocabTxt, 'WordPieceTokenizer.parseVocabTxt',
  [R, null, 'vocab.txt']);
WordPieceTokenizer.parseTokenizerJson = withDefaults(WordPieceTokenizer.parseTokenizerJson,
  'WordPieceTokenizer.parseTokenizerJson', [R, 'tokenizer.json']);
export const { Device, Activation } = wasm;

// Session.withPolicy returns the session, as in C++.
{
  const withPolicy = wasm.Session.prototype.withPolicy;
  wasm.Session.prototype.withPolicy = function (policy) {
    withPolicy.call(this, policy);
    return this;
  };
}

/** PrecisionPolicy.f32() and friends: the policy names the bindings take. */
export const PrecisionPolicy = Object.freeze({
  f32: () => 'f32',
  bf16Weights: () => 'bf16_weights',
  f16Weights: () => 'f16_weights',
});

// ---- the cache: build callbacks ------------------------------------------------------------

// Returns [fn, state]: fn never throws; a throw is kept in state.error for the caller to rethrow
// once the C++ call has returned (the cache then leaves the bucket uncompiled).
function guardBuild(build, who) {
  if (build instanceof wasm.Model) return [build, { error: null }];
  if (typeof build !== 'function') {
    throw argumentError(`${who}: build must be a function (upper) => Graph | HirModule | [.., params], or a Model, got ${describeValue(build)}`);
  }
  const state = { error: null };
  const fn = (upper) => {
    try {
      return build(upper);
    } catch (e) {
      state.error = e;
      return undefined;
    }
  };
  return [fn, state];
}

function withBuild(raw, who, buildIndex, defaults) {
  const call = withDefaults(raw, who, defaults);
  const wrapped = function (...args) {
    const [fn, state] = guardBuild(args[buildIndex], who);
    args[buildIndex] = fn;
    try {
      return call.apply(this, args);
    } catch (e) {
      throw state.error ?? e;
    }
  };
  Object.defineProperty(wrapped, 'name', { value: who });
  return wrapped;
}

{
  const p = wasm.BucketedCompileCache.prototype;
  const getOrCompile = withBuild(p._getOrCompile, 'BucketedCompileCache.getOrCompile', 1, [R, R, null]);
  const ensure = withBuild(p._ensureWithParams, 'BucketedCompileCache.ensureWithParams', 1, [R, R, null]);
  p.getOrCompile = function (key, build) {
    return getOrCompile.call(this, key, build);
  };
  p.getOrCompileWithOptions = getOrCompile;
  p.getOrCompileHir = p.getOrCompile;
  p.getOrCompileHirWithOptions = getOrCompile;
  p.ensureGraphWithParams = ensure;
  p.ensureHirWithParams = ensure;
  // runPadded's fast path, as CompiledGraph.run's: when the key and actualRows are whole numbers,
  // every input is {name, data: Float32Array, inner: whole number} and outputInners whole numbers,
  // the values go to C++ staged (Module.rungsStagedIn, copied once each, no Embind object reads)
  // and the outputs come back as Float32Arrays (Module.rungsStagedOut). A tiny graph's call went
  // from 19 to 8 us. Anything else takes the general path, whose conversions and messages are the
  // C++ ones; the two paths run the same checks on what reaches C++.
  const runPaddedGeneral = withBuild(p._runPadded, 'BucketedCompileCache.runPadded', 2, [R, R, R, R, []]);
  const runPaddedStaged = p._runPaddedStaged;
  delete p._runPaddedStaged;
  const whole = (x) => Number.isSafeInteger(x) && x >= 0;
  const stagedSpec = (key, actualRows, inputs, outputInners) => {
    if (!whole(key) || !whole(actualRows) || !Array.isArray(inputs) || !Array.isArray(outputInners)) return null;
    const data = new Array(inputs.length);
    const numbers = [inputs.length];
    let names = '';
    for (let k = 0; k < inputs.length; ++k) {
      const x = inputs[k];
      if (x === null || typeof x !== 'object' || typeof x.name !== 'string' || x.name.includes('\0') ||
          !(x.data instanceof Float32Array) || !whole(x.inner)) return null;
      names += `${x.name}\0`;
      data[k] = x.data;
      numbers.push(x.data.length, x.inner);
    }
    numbers.push(outputInners.length);
    for (const i of outputInners) {
      if (!whole(i)) return null;
      numbers.push(i);
    }
    return { data, names, numbers };
  };
  p.runPadded = function runPadded(key, actualRows, build, inputs, outputInners = []) {
    const spec = arguments.length >= 4 && arguments.length <= 5 && isHandle(this) && !this.isDeleted()
      ? stagedSpec(key, actualRows, inputs, outputInners) : null;
    if (!spec) return runPaddedGeneral.apply(this, arguments);
    const [fn, state] = guardBuild(build, 'BucketedCompileCache.runPadded');
    wasm.rungsStagedIn = spec.data;
    wasm.rungsStagedOut = [];
    try {
      const code = runPaddedStaged.call(this, key, actualRows, fn, spec.names, spec.numbers);
      if (code < 0) return null;
      return { upper: Math.floor(code / 2), outputs: wasm.rungsStagedOut, mode: code % 2 ? 'active' : 'padded' };
    } catch (e) {
      throw state.error ?? e;
    } finally {
      wasm.rungsStagedIn = null;
      wasm.rungsStagedOut = null;
    }
  };
  p.runPaddedMixed = withBuild(p._runPaddedMixed, 'BucketedCompileCache.runPaddedMixed', 2, [R, R, R, R, []]);
  const setActiveExtent = p.setActiveExtent;
  p.setActiveExtent = function (on) {
    if (typeof on !== 'boolean') throw argumentError(`BucketedCompileCache.setActiveExtent: on must be a boolean, got ${describeValue(on)}`);
    setActiveExtent.call(this, on);
    return this;
  };
}

// ---- free functions ------------------------------------------------------------------------

const fn = (name, defaults) => {
  const f = checked(wasm[name], name.replace(/^_ladder(.)/, (_, c) => `ladder.${c.toLowerCase()}`));
  return defaults ? withDefaults(f, f.name, defaults) : f;
};

/** Bucket ladders (rungs::ladder). */
export const ladder = Object.freeze({
  head: Object.freeze(wasm._ladderHead()),
  validate: fn('_ladderValidate', [R, 'ladder']),
  powerOfTwo: fn('_ladderPowerOfTwo', [R, R, false]),
  geometric: fn('_ladderGeometric', [R, R, R, false]),
  linear: fn('_ladderLinear', [R, R, R, false]),
  fromExtents: fn('_ladderFromExtents', [R, false]),
  withHead: fn('_ladderWithHead', [R, null]),
  optimal: fn('_ladderOptimal', [R, R]),
  expectedWaste: fn('_ladderExpectedWaste', [R, R]),
  paddedRows: fn('_ladderPaddedRows', [R, R]),
  lognormalTrace: fn('_ladderLognormalTrace', [R, R, R, R, 1.0]),
});

export const padRows = fn('padRows', [R, R, R]);
export const sliceRows = fn('sliceRows', [R, R, R]);
export const loadModel = fn('loadModel', [R, R, 'model']);

const loadOnnxCore = checked(wasm._loadOnnx, 'loadOnnx');
const onnxOptionNames = ['bucketDim', 'fix', 'externalData', 'name'];
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) &&
  !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);
const asBytes = (who, what, v) => {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  throw argumentError(`${who}: ${what} must be a Uint8Array or an ArrayBuffer, got ${describeValue(v)}`);
};

/**
 * An ONNX model file (docs/onnx.md) from its bytes: the same Model as loadModel gives for a
 * bundled model. options: { bucketDim: 'seq', fix: { batch: 1 }, externalData: { 'w.bin': bytes },
 * name: 'model' (prefixes error messages) }, every field optional.
 */
export function loadOnnx(bytes, options = {}) {
  const who = 'loadOnnx';
  const data = asBytes(who, 'bytes (the .onnx file)', bytes);
  if (options === undefined || options === null) options = {};
  if (!isPlainObject(options)) {
    throw argumentError(`${who}: options must be an object {bucketDim, fix, externalData, name}, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!onnxOptionNames.includes(key)) {
      throw argumentError(`${who}: unknown option '${key}' (the options are ${onnxOptionNames.join(', ')})`);
    }
  }
  const { bucketDim = '', fix = {}, externalData = {}, name = 'model' } = options;
  if (typeof bucketDim !== 'string') {
    throw argumentError(`${who}: options.bucketDim must be a string (a symbolic dim of the model), got ${describeValue(bucketDim)}`);
  }
  if (typeof name !== 'string') throw argumentError(`${who}: options.name must be a string, got ${describeValue(name)}`);
  if (!isPlainObject(fix)) {
    throw argumentError(`${who}: options.fix must be an object {symbol: value}, e.g. {batch: 1}, got ${describeValue(fix)}`);
  }
  const fixPairs = Object.entries(fix).map(([symbol, value]) => {
    if (!Number.isSafeInteger(value)) {
      throw argumentError(`${who}: options.fix.${symbol} must be a whole number, got ${describeValue(value)}`);
    }
    return [symbol, value];
  });
  if (!isPlainObject(externalData)) {
    throw argumentError(`${who}: options.externalData must be an object {location: Uint8Array}, got ${describeValue(externalData)}`);
  }
  const externalPairs = Object.entries(externalData).map(([location, value]) =>
    [location, asBytes(who, `options.externalData['${location}']`, value)]);
  return loadOnnxCore(data, { bucketDim, fix: fixPairs, externalData: externalPairs }, name);
}

// ---- text models: TF.js graph models and TextEmbedder (docs/tfjs.md) -----------------------

/**
 * A TF.js graph model (docs/tfjs.md) from model.json's text (or bytes) and its weight shards in
 * the order its weightsManifest lists them; `name` prefixes error messages.
 */
export const loadTfjs = fn('loadTfjs', [R, R, 'model']);

// The shard paths of a model.json's weightsManifest, in order (relative to model.json).
function manifestPaths(who, text) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    const error = new Error(`${who}: model.json is not JSON: ${e.message}`);
    error.code = 'ParseError';
    throw error;
  }
  const manifest = json?.weightsManifest;
  if (!Array.isArray(manifest)) return []; // loadTfjs names what is missing
  return manifest.flatMap((group) => (Array.isArray(group?.paths) ? group.paths : []));
}

const textEmbedderOptionNames = ['ladder', 'device', 'activeExtent', 'maxTokens'];
function textEmbedderOptions(options) {
  const who = 'new TextEmbedder';
  if (options === undefined || options === null) options = {};
  if (!isPlainObject(options)) {
    throw argumentError(`${who}: options must be an object {ladder, device, activeExtent, maxTokens}, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!textEmbedderOptionNames.includes(key)) {
      throw argumentError(`${who}: unknown option '${key}' (the options are ${textEmbedderOptionNames.join(', ')})`);
    }
  }
  const { ladder: buckets = null, device = wasm.Device.Cpu, activeExtent = true, maxTokens = 0 } = options;
  if (buckets !== null && !Array.isArray(buckets)) {
    throw argumentError(`${who}: options.ladder must be an array of {start, end} (e.g. ladder.powerOfTwo(1, 128)), got ${describeValue(buckets)}`);
  }
  deviceArg(`${who}: options.device`, device);
  boolArg('options.activeExtent')(who, activeExtent);
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 0) {
    throw argumentError(`${who}: options.maxTokens must be a whole number >= 0 (0: no clip), got ${describeValue(maxTokens)}`);
  }
  return { ladder: buckets, device, activeExtent, maxTokens };
}

argChecks.TextEmbedder = [
  handleArg(['Model'], 'model'),
  handleArg(['UnigramTokenizer'], 'tokenizer', { WordPieceTokenizer: 'TextEmbedder takes a UnigramTokenizer (vocab.json)' }),
];
const TextEmbedderClass = wrapClass('TextEmbedder');
/**
 * Texts to embeddings: a text model (one input of token ids, optionally a padding mask), its
 * tokenizer and a bucketed compile cache (rungs/embedder.hpp). The embedder keeps its own copy of
 * the model: the Model may be deleted after.
 */
export const TextEmbedder = new Proxy(TextEmbedderClass, {
  construct(target, args) {
    if (args.length > 3) throw argumentError(`new TextEmbedder: expected at most 3 arguments, got ${args.length}`);
    return new target(args[0], args[1], textEmbedderOptions(args[2]));
  },
});

/** The cosine of two vectors of the same length (0 when one is all zeros). */
export function cosineSimilarity(a, b) {
  const who = 'cosineSimilarity';
  for (const [what, v] of [['a', a], ['b', b]]) {
    if (!(v instanceof Float32Array) && !(v instanceof Float64Array) && !Array.isArray(v)) {
      throw argumentError(`${who}: ${what} must be a Float32Array (an embedding), got ${describeValue(v)}`);
    }
  }
  if (a.length !== b.length) throw argumentError(`${who}: a has ${a.length} values and b ${b.length}; they must have as many`);
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}

/**
 * Node only: a TF.js graph model from the path of its model.json, its shards read from beside it
 * in the order its weightsManifest lists them.
 */
export async function loadTfjsFile(modelJsonPath) {
  const who = 'loadTfjsFile';
  if (!isNode || typeof process.getBuiltinModule !== 'function') {
    throw new Error(`${who}: reads files, which needs Node >= 20.16; in a browser use loadTfjsUrl`);
  }
  if (typeof modelJsonPath !== 'string') throw argumentError(`${who}: modelJsonPath must be a string, got ${describeValue(modelJsonPath)}`);
  const fs = process.getBuiltinModule('fs/promises');
  const path = process.getBuiltinModule('path');
  const read = async (file, what) => {
    try {
      return await fs.readFile(file);
    } catch (e) {
      const error = new Error(`${who}: cannot read ${what} '${file}': ${e.message}`);
      error.code = 'InvalidArgument';
      throw error;
    }
  };
  const text = (await read(modelJsonPath, 'the model')).toString('utf8');
  const dir = path.dirname(modelJsonPath);
  const shards = [];
  for (const p of manifestPaths(who, text)) {
    const file = await read(path.join(dir, decodeURIComponent(p)), 'the weight shard');
    shards.push(new Uint8Array(file.buffer, file.byteOffset, file.byteLength));
  }
  return loadTfjs(text, shards, path.basename(modelJsonPath));
}

/**
 * Browser or Node (fetch): a TF.js graph model from the URL of its model.json, its shards fetched
 * from beside it. onProgress(loadedBytes, totalBytes) follows the bytes of model.json and every
 * shard (totalBytes grows as the responses' sizes become known; it is final once every shard's
 * response has started).
 */
export async function loadTfjsUrl(modelJsonUrl, onProgress) {
  const who = 'loadTfjsUrl';
  if (typeof modelJsonUrl !== 'string' && !(modelJsonUrl instanceof URL)) {
    throw argumentError(`${who}: modelJsonUrl must be a string or a URL, got ${describeValue(modelJsonUrl)}`);
  }
  if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function') {
    throw argumentError(`${who}: onProgress must be a function (loadedBytes, totalBytes) => void, got ${describeValue(onProgress)}`);
  }
  const base = new URL(modelJsonUrl, globalThis.location?.href);
  let loaded = 0;
  let total = 0;
  const report = () => onProgress?.(loaded, total);
  const open = async (url) => {
    let response;
    try {
      response = await fetch(url);
    } catch (e) {
      // No response at all (no server, a refused connection, CORS): fetch's own TypeError says
      // "fetch failed" or "Failed to fetch" without the URL.
      const error = new Error(`${who}: fetching '${url}' failed: ${e?.cause?.message ?? e?.message ?? e}`, { cause: e });
      error.code = 'InvalidArgument';
      error.url = String(url);
      throw error;
    }
    if (!response.ok) {
      const error = new Error(`${who}: fetching '${url}' failed: HTTP ${response.status} ${response.statusText}`);
      error.code = 'InvalidArgument';
      error.status = response.status;  // a caller can tell a missing model (404) from other failures
      error.url = String(url);
      throw error;
    }
    total += Number(response.headers.get('content-length')) || 0;
    return response;
  };
  // Reads a body chunk by chunk, reporting progress; a body without a length adds as it comes.
  const readBody = async (response) => {
    const known = Number(response.headers.get('content-length')) || 0;
    const chunks = [];
    let size = 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      loaded += value.byteLength;
      if (size > known) total += Math.min(value.byteLength, size - known); // no or a compressed length
      report();
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  };
  const jsonBytes = await readBody(await open(base));
  const text = new TextDecoder().decode(jsonBytes);
  const responses = await Promise.all(manifestPaths(who, text).map((p) => open(new URL(p, base))));
  report();
  const shards = await Promise.all(responses.map(readBody));
  return loadTfjs(text, shards, decodeURIComponent(base.pathname.split('/').pop() || 'model.json'));
}

/** The rungs library version, "MAJOR.MINOR.PATCH". */
export const version = () => wasm.version();

/** The instruction set Device.Cpu kernels dispatch to: "wasm" (SIMD128) in this build. */
export const cpuIsa = fn('cpuIsa');

/** Bytes of the wasm linear memory and bytes malloc has handed out (for leak checks). */
export const heapStats = () => wasm.heapStats();
// Which module variant loaded ('threads' or 'single') and the most threads a graph runs on
// (CompileOptions.threads 0 means this many).
export const threading = () => ({ variant, maxThreads });
