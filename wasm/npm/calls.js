// SPDX-License-Identifier: Apache-2.0
// rungs for JavaScript, part 2 of 3: how a bound call behaves like a JS library's (index.js's
// first five points): arguments checked before any C++ runs, optional arguments defaulted, the
// error the C++ side recorded thrown as a coded JS Error in the package's names, every class given
// [Symbol.dispose]. index.js wraps each class and free function with these.
import { wasm } from './module.js';

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
const cppWords = /\b(?:set_param|max_arena_bytes|actual_rows|observed_keys|prepare_active_rows|load_model)\b/g;
// Advice naming a C++ call the package has no method for: a Model from Model.parse gets weights
// only by loading it again with them (C++ Model::set_weights).
const cppAdvice = [
  [/\bload the model with load_model or call set_weights\b/g, 'load it with its weights: loadModel(json, weights)'],
  [/\bcall set_weights first\b/g, 'load it with its weights first: loadModel(json, weights)'],
];
const inJsWords = (text) => cppAdvice.reduce((t, [from, to]) => t.replace(from, to), text).replace(cppWords, camelCase);
function inPackageTerms(message, who) {
  const m = /^(?:[A-Za-z]\w*::)*([a-z]\w*): /.exec(message);
  if (m && (camelCase(m[1]) === who.slice(who.lastIndexOf('.') + 1) || cppPrefixOf[who] === m[1])) {
    message = `${who}: ${message.slice(m[0].length)}`;
  }
  return message.split(/((?<!\w)'[^']*'|"[^"]*")/).map((part, i) => (i % 2 ? part : inJsWords(part))).join('');
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
const publicName = { 'CompiledGraph._runStaged': 'CompiledGraph.run', 'BucketedCompileCache._runPaddedStaged': 'BucketedCompileCache.runPadded' };

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

export {
  R, argChecks, argumentError, boolArg, checked, deletedError, describeValue, deviceArg, handleArg, isHandle,
  retitled, withDefaults, wrapClass,
};
