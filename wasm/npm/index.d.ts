// Types of the rungs npm package. They describe wasm/bindings/register.cpp: keep them in step.

/** Handle to a node of one Graph. Only meaningful with the Graph that made it. */
export interface Value {
  readonly id: number;
}

/** Dimensions, outermost first. */
export type Shape = number[];

/** An Embind enum value. */
export interface DeviceValue {
  readonly value: number;
}

/** Cpu: SIMD kernels (SIMD128 in wasm). Reference: plain scalar loops, the correctness oracle. */
export declare const Device: {
  readonly Cpu: DeviceValue;
  readonly Reference: DeviceValue;
};

/**
 * Every rungs call that fails throws a plain JS `Error` whose message is the C++ message (it names
 * the input, op or param at fault) with `code` set to the rungs ErrorCode name.
 */
export interface RungsError extends Error {
  code:
    | 'InvalidArgument'
    | 'ShapeMismatch'
    | 'UnknownName'
    | 'MissingInput'
    | 'ParamNotSet'
    | 'OutOfRange'
    | 'Unsupported'
    | 'ParseError'
    | 'Internal';
}

/** Objects backed by C++ memory: call delete() when done (the garbage collector will not). */
interface Deletable {
  delete(): void;
  isDeleted(): boolean;
}

/** A primitive-op graph with static shapes and f32 values. */
export declare class Graph implements Deletable {
  constructor();
  input(name: string, shape: Shape): Value;
  param(name: string, shape: Shape): Value;
  relu(x: Value): Value;
  /** Outputs keep the order of these calls. */
  output(name: string, v: Value): void;
  shape(v: Value): Shape;
  nodeCount(): number;
  toText(): string;
  delete(): void;
  isDeleted(): boolean;
}

export interface CompileReport {
  /** "wasm", "scalar", ... */
  isa: string;
  device: string;
  threads: number;
  arenaBytes: number;
  compileMs: number;
}

/** A graph compiled for one device. Made by Session.compile. */
export declare class CompiledGraph implements Deletable {
  private constructor();
  /** One Float32Array per output, in declared order. Inputs are copied. */
  run(inputs: Record<string, Float32Array>): Float32Array[];
  setParam(name: string, data: Float32Array): void;
  inputNames(): string[];
  outputNames(): string[];
  inputShape(name: string): Shape;
  outputShape(name: string): Shape;
  report(): CompileReport;
  delete(): void;
  isDeleted(): boolean;
}

export declare class Session implements Deletable {
  constructor(device: DeviceValue);
  compile(graph: Graph): CompiledGraph;
  delete(): void;
  isDeleted(): boolean;
}

/** The rungs library version, "MAJOR.MINOR.PATCH". */
export declare function version(): string;

/** The instruction set Device.Cpu kernels dispatch to: "wasm" (SIMD128) in this build. */
export declare function cpuIsa(): string;
