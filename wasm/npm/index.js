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

// ---- argument errors -----------------------------------------------------------------------

// An argument of the wrong kind: a TypeError (as JS's own) with the rungs `code` InvalidArgument.
function argumentError(message) {
  const error = new TypeError(message);
  error.code = 'InvalidArgument';
  return error;
}

// What a JS value is, for messages: "the string 'cpu'", "the number 7", "a HirModule", ...
function describeValue(v) {
  if (v === undefined) return 'undefined (nothing)';
  if (v === null) return 'null';
  if (typeof v === 'string') return `the string '${v.length > 40 ? `${v.slice(0, 40)}...` : v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return `the ${typeof v} ${String(v)}`;
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'symbol') return 'a symbol';
  if (Array.isArray(v)) return 'an array';
  for (const E of ['Device', 'Activation']) {
    if (v instanceof wasm[E]) {
      const name = Object.keys(wasm[E]).find((k) => wasm[E][k] === v);
      return name ? `${E}.${name}` : `a forged ${E} value`;
    }
  }
  const ctor = Object.getPrototypeOf(v)?.constructor?.name;
  if (ctor && ctor !== 'Object') return `${/^[AEIOU]/i.test(ctor) ? 'an' : 'a'} ${ctor}`;
  let text;
  try {
    text = JSON.stringify(v);
  } catch {
    text = undefined;
  }
  return text && text.length <= 40 ? `the object ${text}` : 'an object';
}

const className = (obj) => Object.getPrototypeOf(obj)?.constructor?.name ?? 'object';

// An Embind enum: the argument must be one of its own values (Embind would take any object with
// a numeric `value`, and turn a string or number into its first value).
function enumArg(enumName, what) {
  const E = wasm[enumName];
  const names = Object.keys(E).filter((k) => k !== 'values' && E[k] instanceof E);
  const allowed = names.map((n) => `${enumName}.${n}`);
  const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}` : allowed[0];
  return (who, v) => {
    if (names.some((n) => E[n] === v)) return;
    throw argumentError(`${who}: ${what} must be ${list}, got ${describeValue(v)}`);
  };
}

// A handle of one class, not deleted.
function handleArg(classNames, what, hint = {}) {
  return (who, v) => {
    const ok = classNames.some((c) => v instanceof wasm[c]);
    if (!ok) {
      const got = describeValue(v);
      const extra = v !== null && typeof v === 'object' && hint[className(v)] ? ` (${hint[className(v)]})` : '';
      throw argumentError(`${who}: ${what} must be ${classNames.map((c) => `a ${c}`).join(' or ')}, got ${got}${extra}`);
    }
    if (v.isDeleted()) throw deletedError(who, v, what);
  };
}

function deletedError(who, obj, what = null) {
  const error = new Error(what
    ? `${who}: ${what} (a ${className(obj)}) was deleted: delete() was called on it, so it cannot be used any more`
    : `${who}: this ${className(obj)} was deleted: delete() was called on it, so it cannot be used any more`);
  error.code = 'InvalidArgument';
  return error;
}

// Errors Embind throws on its own while converting arguments (before any C++ runs).
function isEmbindError(e) {
  return ((wasm.BindingError && e instanceof wasm.BindingError) || e instanceof TypeError) && e.code === undefined;
}
function recodeEmbindError(e, who) {
  const error = argumentError(e.message.startsWith(who) ? e.message : `${who}: ${e.message}`);
  error.cause = e;
  return error;
}

const deviceArg = enumArg('Device', 'device');
const activationArg = enumArg('Activation', 'activation');
// A Value: a node handle {id} a builder returned (Embind would truncate 1.5 to 1 and wrap -1).
const isValue = (v) => v !== null && typeof v === 'object' && Number.isInteger(v.id) && v.id >= 0 && v.id < 2 ** 32;
const valueArg = (what, optional = false) => (who, v) => {
  if (optional && (v === null || v === undefined)) return;
  if (!isValue(v)) {
    throw argumentError(`${who}: ${what} must be a Value ({id}) returned by this builder${optional ? ' or null' : ''}, got ${describeValue(v)}`);
  }
};
const valuesArg = (what) => (who, list) => {
  if (!Array.isArray(list)) throw argumentError(`${who}: ${what} must be an array of Values, got ${describeValue(list)}`);
  list.forEach((v, i) => valueArg(`${what}[${i}]`)(who, v));
};

// Plain numbers and booleans Embind would coerce ('a' to 0, 1.5 to 1, 'no' to true).
const intArg = (what) => (who, v) => {
  if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) {
    throw argumentError(`${who}: ${what} must be a whole number, got ${describeValue(v)}`);
  }
};
const numberArg = (what) => (who, v) => {
  if (typeof v !== 'number') throw argumentError(`${who}: ${what} must be a number, got ${describeValue(v)}`);
};
const boolArg = (what) => (who, v) => {
  if (typeof v !== 'boolean') throw argumentError(`${who}: ${what} must be true or false, got ${describeValue(v)}`);
};

// Checks per call, by argument position (after defaults are filled in).
const argChecks = {
  'Session': [deviceArg],
  'BucketedCompileCache': [deviceArg],
  'BucketedCompileCache.withPolicy': [deviceArg],
  'BucketedCompileCache.powerOfTwoLadder': [deviceArg],
  'BucketedCompileCache.powerOfTwoLadderWithPolicy': [deviceArg],
  'Session.compile': [handleArg(['Graph'], 'graph', { HirModule: 'compile a HirModule with compileHir' })],
  'Session.compileHir': [handleArg(['HirModule'], 'module', { Graph: 'compile a Graph with compile' })],
  'HirModule.linear': [valueArg('x'), null, null, activationArg, boolArg('bias')],
  'HirModule.mlp': [valueArg('x'), null, null, activationArg],
  'HirModule.layerNorm': [valueArg('x'), null, numberArg('eps')],
  'HirModule.rmsNorm': [valueArg('x'), null, numberArg('eps')],
  'HirModule.selfAttention': [valueArg('x'), null, intArg('heads'), valueArg('keyMask', true), boolArg('causal')],
  'HirModule.embedding': [valueArg('ids')],
  'HirModule.meanPool': [valueArg('x'), valueArg('mask', true)],
  'HirModule.add': [valueArg('a'), valueArg('b')],
  'HirModule.output': [null, valueArg('value')],
  'HirModule.shape': [valueArg('value')],
  'Graph.softmax': [valueArg('x'), intArg('axis')],
  'Graph.layerNorm': [valueArg('x'), valueArg('gamma'), valueArg('beta'), numberArg('eps')],
  'Graph.rmsNorm': [valueArg('x'), valueArg('gamma'), numberArg('eps')],
  'Graph.reshape': [valueArg('x')],
  'Graph.transpose': [valueArg('x')],
  'Graph.slice': [valueArg('x'), intArg('axis')],
  'Graph.concat': [valuesArg('xs'), intArg('axis')],
  'Graph.attention': [valueArg('q'), valueArg('k'), valueArg('v')],
  'Graph.output': [null, valueArg('value')],
  'Graph.shape': [valueArg('value')],
};
for (const op of ['relu', 'gelu', 'geluTanh', 'silu', 'sigmoid', 'tanh', 'exp', 'log', 'sqrt', 'rsqrt', 'neg', 'abs',
  'erf', 'sin', 'cos', 'logicalNot']) {
  argChecks[`Graph.${op}`] = [valueArg('x')];
}
for (const op of ['sum', 'mean', 'max']) argChecks[`Graph.${op}`] = [valueArg('x'), null, boolArg('keepDims')];
argChecks['ladder.powerOfTwo'] = [null, null, boolArg('head')];
argChecks['ladder.linear'] = [null, null, null, boolArg('head')];
argChecks['ladder.geometric'] = [null, null, numberArg('ratio'), boolArg('head')];
argChecks['ladder.fromExtents'] = [null, boolArg('head')];
argChecks['ladder.lognormalTrace'] = [numberArg('median'), null, null, null, numberArg('sigma')];
for (const op of ['matmul', 'add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow', 'equal', 'less', 'greater',
  'lessEqual', 'greaterEqual']) {
  argChecks[`Graph.${op}`] = [valueArg('a'), valueArg('b')];
}
argChecks['Graph.gather'] = [valueArg('table'), valueArg('indices')];
argChecks['Graph.where'] = [valueArg('cond'), valueArg('a'), valueArg('b')];

// Checks the arguments given; a missing one (past the end) is left to Embind's own count check,
// which names the call and the count (constructors check every position: `new Session()`).
function checkArgs(who, args, all = false) {
  const checks = argChecks[who];
  if (checks) checks.forEach((check, i) => check && (all || i < args.length) && check(who, args[i]));
  args.forEach((a, i) => {
    if (isHandle(a) && a.isDeleted()) throw deletedError(who, a, `argument ${i + 1}`);
  });
}

// The core writes its messages in its C++ names: a leading function (`pad_rows: `,
// `ladder::optimal: `, `run_in_place: `) and a few argument and option names. Thrown here they read
// in this package's: that prefix becomes the method the caller called (`who`), and those names
// their JS spelling. A prefix that is not the called method (a model's name, a class) stays, and
// so does anything in quotes (the caller's own names).
const camelCase = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const cppPrefixOf = { 'CompiledGraph.run': 'run_in_place' };  // the fast path's C++ call
const cppWords = /\b(?:set_param|max_arena_bytes|actual_rows|observed_keys)\b/g;
function inPackageTerms(message, who) {
  const m = /^(?:[A-Za-z]\w*::)*([a-z]\w*): /.exec(message);
  if (m && (camelCase(m[1]) === who.slice(who.lastIndexOf('.') + 1) || cppPrefixOf[who] === m[1])) {
    message = `${who}: ${message.slice(m[0].length)}`;
  }
  return message.split(/((?<!\w)'[^']*'|"[^"]*")/).map((part, i) => (i % 2 ? part : part.replace(cppWords, camelCase))).join('');
}

function takeError(who = null) {
  const pending = wasm.rungsPendingError;
  if (!pending) return null;
  wasm.rungsPendingError = null;
  const error = new Error(who ? inPackageTerms(pending.message, who) : pending.message);
  error.code = pending.code;
  return error;
}

// An error `from` threw, retitled as thrown by `to` (a method that runs through another).
function retitled(error, from, to) {
  if (error instanceof Error && error.message.startsWith(`${from}: `)) error.message = `${to}: ${error.message.slice(from.length + 2)}`;
  return error;
}

function isHandle(x) {
  return x !== null && typeof x === 'object' && typeof x.delete === 'function' && typeof x.isDeleted === 'function';
}

// A bound function that throws the error the C++ side recorded (freeing whatever it returned).
function checked(fn, name) {
  const wrapped = function (...args) {
    if (isHandle(this) && this.isDeleted()) throw deletedError(name, this);
    checkArgs(name, args);
    let result;
    try {
      result = fn.apply(this, args);
    } catch (e) {
      throw isEmbindError(e) ? recodeEmbindError(e, name) : e;
    }
    const error = takeError(name);
    if (error) {
      if (isHandle(result) && !result.isDeleted()) result.delete();
      throw error;
    }
    return result;
  };
  Object.defineProperty(wrapped, 'name', { value: name });
  return wrapped;
}

// `defaults[i]` fills argument i when it is undefined; `required` arguments have none.
const required = Symbol('required');
function withDefaults(fn, name, defaults) {
  const wrapped = function (...args) {
    if (args.length > defaults.length) {
      throw argumentError(`${name}: expected at most ${defaults.length} arguments, got ${args.length}`);
    }
    const full = defaults.map((d, i) => {
      if (args[i] !== undefined) return args[i];
      if (d === required) throw argumentError(`${name}: argument ${i + 1} is required`);
      return d;
    });
    return fn.apply(this, full);
  };
  Object.defineProperty(wrapped, 'name', { value: name });
  return wrapped;
}

const R = required;
const methodDefaults = {
  Graph: {
    softmax: [R, -1],
    layerNorm: [R, R, R, 1e-5],
    rmsNorm: [R, R, 1e-6],
    sum: [R, R, false],
    mean: [R, R, false],
    max: [R, R, false],
    attention: [R, R, R, null],
  },
  HirModule: {
    linear: [R, R, R, wasm.Activation.None, true],
    layerNorm: [R, R, 1e-5],
    rmsNorm: [R, R, 1e-6],
    selfAttention: [R, R, R, null, false],
    mlp: [R, R, R, wasm.Activation.Gelu],
    meanPool: [R, null],
  },
  Session: { compile: [R, null], compileHir: [R, null] },
  CompiledGraph: { profile: [R, 20] },
  Model: { toJson: [''], weightsBytes: ['F32'], syntheticInputs: [R, 1] },
  WordPieceTokenizer: { encode: [R, true], encodePair: [R, R, true] },
};

// Internal bound methods, named in errors as the public method that calls them.
const publicName = { 'CompiledGraph._runStaged': 'CompiledGraph.run' };

const handleMethods = new Set(['constructor', 'delete', 'isDeleted', 'clone', 'deleteLater', 'isAliasOf']);

// Wraps every bound method of a class in place, adds [Symbol.dispose], and returns a Proxy of the
// class whose `new` throws a recorded constructor error (instanceof and statics still work).
function wrapClass(name) {
  const cls = wasm[name];
  const proto = cls.prototype;
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (handleMethods.has(key) || typeof proto[key] !== 'function') continue;
    let fn = checked(proto[key], publicName[`${name}.${key}`] ?? `${name}.${key.replace(/^_/, '')}`);
    const defaults = methodDefaults[name]?.[key];
    if (defaults) fn = withDefaults(fn, `${name}.${key}`, defaults);
    proto[key] = fn;
  }
  proto[Symbol.dispose] = function () {
    if (!this.isDeleted()) this.delete();
  };
  for (const key of Object.getOwnPropertyNames(cls)) {
    const desc = Object.getOwnPropertyDescriptor(cls, key);
    if (typeof desc.value === 'function' && desc.writable) cls[key] = checked(desc.value, `${name}.${key}`);
  }
  return new Proxy(cls, {
    construct(target, args) {
      checkArgs(name, args, true);
      let object;
      try {
        object = new target(...args);
      } catch (e) {
        throw isEmbindError(e) ? recodeEmbindError(e, `new ${name}`) : e;
      }
      const error = takeError();
      if (error) {
        object.delete();
        throw error;
      }
      return object;
    },
  });
}

// delete(), clone(), deleteLater() and isAliasOf() come from Embind's common base class: a call on
// a deleted object is a coded error there too (isDeleted() always answers).
{
  const base = Object.getPrototypeOf(wasm.Graph.prototype);
  for (const key of ['delete', 'clone', 'deleteLater', 'isAliasOf']) {
    const raw = base[key];
    if (typeof raw !== 'function') continue;
    base[key] = function (...args) {
      if (isHandle(this) && this.isDeleted()) throw deletedError(`${className(this)}.${key}`, this);
      return raw.apply(this, args);
    };
  }
}

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
  p.runPadded = withBuild(p._runPadded, 'BucketedCompileCache.runPadded', 2, [R, R, R, R, []]);
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
    const response = await fetch(url);
    if (!response.ok) {
      const error = new Error(`${who}: fetching '${url}' failed: HTTP ${response.status} ${response.statusText}`);
      error.code = 'InvalidArgument';
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
