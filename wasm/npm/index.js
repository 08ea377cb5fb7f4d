// SPDX-License-Identifier: Apache-2.0
// rungs for JavaScript: the Embind module (wasm/bindings), instantiated once when this module is
// imported, with a thin layer that makes it behave like a JS library:
//  - errors: the C++ side catches every exception and records it; each bound call here throws it
//    as a JS Error with the C++ message and `code` (nothing is thrown through wasm frames);
//  - optional arguments get the C++ defaults (Embind itself wants every argument);
//  - build callbacks are guarded: an exception a build throws is held while the cache unwinds
//    normally, then rethrown unchanged;
//  - every class gets [Symbol.dispose] (for `using`), and `ladder` groups the ladder functions.
// Node 20 and browsers load the same file (the wasm is embedded; see wasm/CMakeLists.txt).
import createRungsModule from './rungs_core.js';

const wasm = await createRungsModule();

function takeError() {
  const pending = wasm.rungsPendingError;
  if (!pending) return null;
  wasm.rungsPendingError = null;
  const error = new Error(pending.message);
  error.code = pending.code;
  return error;
}

function isHandle(x) {
  return x !== null && typeof x === 'object' && typeof x.delete === 'function' && typeof x.isDeleted === 'function';
}

// A bound function that throws the error the C++ side recorded (freeing whatever it returned).
function checked(fn, name) {
  const wrapped = function (...args) {
    const result = fn.apply(this, args);
    const error = takeError();
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
      throw new TypeError(`${name}: expected at most ${defaults.length} arguments, got ${args.length}`);
    }
    const full = defaults.map((d, i) => {
      if (args[i] !== undefined) return args[i];
      if (d === required) throw new TypeError(`${name}: argument ${i + 1} is required`);
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
  Model: { toJson: [''], weightsBytes: ['F32'] },
};

const handleMethods = new Set(['constructor', 'delete', 'isDeleted', 'clone', 'deleteLater', 'isAliasOf']);

// Wraps every bound method of a class in place, adds [Symbol.dispose], and returns a Proxy of the
// class whose `new` throws a recorded constructor error (instanceof and statics still work).
function wrapClass(name) {
  const cls = wasm[name];
  const proto = cls.prototype;
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (handleMethods.has(key) || typeof proto[key] !== 'function') continue;
    let fn = checked(proto[key], `${name}.${key}`);
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
      const object = new target(...args);
      const error = takeError();
      if (error) {
        object.delete();
        throw error;
      }
      return object;
    },
  });
}

export const Graph = wrapClass('Graph');
export const HirModule = wrapClass('HirModule');
export const Session = wrapClass('Session');
export const CompiledGraph = wrapClass('CompiledGraph');
export const Model = wrapClass('Model');
export const BucketedCompileCache = wrapClass('BucketedCompileCache');
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
    throw new TypeError(`${who}: build must be a function (upper) => Graph | HirModule | [.., params], or a Model`);
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
    if (typeof on !== 'boolean') throw new TypeError('BucketedCompileCache.setActiveExtent: on must be a boolean');
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

/** The rungs library version, "MAJOR.MINOR.PATCH". */
export const version = () => wasm.version();

/** The instruction set Device.Cpu kernels dispatch to: "wasm" (SIMD128) in this build. */
export const cpuIsa = fn('cpuIsa');

/** Bytes of the wasm linear memory and bytes malloc has handed out (for leak checks). */
export const heapStats = () => wasm.heapStats();
