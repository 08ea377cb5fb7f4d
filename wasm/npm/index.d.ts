// SPDX-License-Identifier: Apache-2.0
/// <reference lib="esnext.disposable" />
// Types of the rungs npm package. They describe wasm/bindings/register.cpp and the wrappers in
// index.js: keep the three in step (wasm/test/types/ type-checks an example against this file).
// ES module only: from CommonJS, `const rungs = await import('rungs')` (require() throws, saying so).
//
// Names mirror the C++ API (docs/api.md in the rungs repository) in camelCase. Values cross as Float32Array
// (copied in and out: a view into the wasm heap would go stale when memory grows); keys, extents
// and row counts are plain numbers (integers up to 2^53); `null` stands for C++ std::nullopt.

/** Handle to a node of one Graph or HirModule. Only meaningful with the builder that made it. */
export interface Value {
  readonly id: number;
}

/** Dimensions, outermost first. */
export type Shape = number[];

/** An Embind enum value. */
export interface EnumValue {
  readonly value: number;
}

/** Cpu: SIMD kernels (SIMD128 in wasm). Reference: plain scalar loops, the correctness oracle. */
export declare const Device: {
  readonly Cpu: EnumValue;
  readonly Reference: EnumValue;
};
export type DeviceValue = EnumValue;

/** The activation a HirModule block applies. */
export declare const Activation: {
  readonly None: EnumValue;
  readonly Relu: EnumValue;
  readonly Gelu: EnumValue;
  readonly GeluTanh: EnumValue;
  readonly Silu: EnumValue;
  readonly Tanh: EnumValue;
  readonly Sigmoid: EnumValue;
};

/** How params are stored (math accumulates in f32): C++ PrecisionPolicy::f32() and friends. */
export type PrecisionPolicy = 'f32' | 'bf16_weights' | 'f16_weights';
export declare const PrecisionPolicy: {
  f32(): PrecisionPolicy;
  bf16Weights(): PrecisionPolicy;
  f16Weights(): PrecisionPolicy;
};

export type ErrorCode =
  | 'InvalidArgument'
  | 'ShapeMismatch'
  | 'UnknownName'
  | 'MissingInput'
  | 'ParamNotSet'
  | 'OutOfRange'
  | 'Unsupported'
  | 'ParseError'
  | 'Internal'
  | 'ArenaLimit';

/**
 * Every rungs call that fails throws a plain JS `Error` whose message is the C++ message (it names
 * the input, op or param at fault) with `code` set to the rungs ErrorCode name. The module and
 * every object stay usable after an error. An argument of the wrong kind (an enum that is not one
 * of its values, a handle of another class, a string where a number or boolean goes, a missing
 * argument) is a `TypeError` with `code`
 * 'InvalidArgument', naming the call, the argument and what it takes; so is a call on (or with) an
 * object after its delete().
 */
export interface RungsError extends Error {
  code: ErrorCode;
}

/**
 * Objects backed by C++ memory: call delete() (or declare them with `using`) when done. Handles
 * the program forgets are also freed when garbage-collected, but at no predictable time.
 */
interface Deletable {
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

export interface AttentionOptions {
  /** q, k, v are [B, S, heads*head_dim]; k, v may have another S. Default 1. */
  heads?: number;
  /** Query i sees keys j <= i + (Sk - Sq). Default false. */
  causal?: boolean;
  /** [B, Sk] keep mask: >= 0.5 keeps the key. */
  keyMask?: Value | null;
  /** Default 1/sqrt(head_dim). */
  scale?: number | null;
}

/** A primitive-op graph with static shapes and f32 values. */
export declare class Graph implements Deletable {
  constructor();
  /** A Graph from Graph.toJson() text (Error ParseError on malformed text). */
  static fromJson(text: string): Graph;
  input(name: string, shape: Shape): Value;
  param(name: string, shape: Shape): Value;
  constant(data: Float32Array, shape: Shape): Value;
  matmul(a: Value, b: Value): Value;
  add(a: Value, b: Value): Value;
  sub(a: Value, b: Value): Value;
  mul(a: Value, b: Value): Value;
  div(a: Value, b: Value): Value;
  maximum(a: Value, b: Value): Value;
  minimum(a: Value, b: Value): Value;
  /** std::pow per element (pow(NaN, 0) is 1), numpy broadcasting. */
  pow(x: Value, y: Value): Value;
  /** Comparisons: 1 where true, 0 where false (false for NaN), numpy broadcasting. */
  equal(a: Value, b: Value): Value;
  less(a: Value, b: Value): Value;
  greater(a: Value, b: Value): Value;
  lessEqual(a: Value, b: Value): Value;
  greaterEqual(a: Value, b: Value): Value;
  /** cond != 0 ? a : b, all three broadcast. */
  where(cond: Value, a: Value, b: Value): Value;
  relu(x: Value): Value;
  gelu(x: Value): Value;
  geluTanh(x: Value): Value;
  silu(x: Value): Value;
  sigmoid(x: Value): Value;
  tanh(x: Value): Value;
  exp(x: Value): Value;
  log(x: Value): Value;
  sqrt(x: Value): Value;
  rsqrt(x: Value): Value;
  neg(x: Value): Value;
  abs(x: Value): Value;
  erf(x: Value): Value;
  sin(x: Value): Value;
  cos(x: Value): Value;
  /** x == 0 ? 1 : 0 */
  logicalNot(x: Value): Value;
  softmax(x: Value, axis?: number): Value;
  layerNorm(x: Value, gamma: Value, beta: Value, eps?: number): Value;
  rmsNorm(x: Value, gamma: Value, eps?: number): Value;
  sum(x: Value, axes: number[], keepDims?: boolean): Value;
  mean(x: Value, axes: number[], keepDims?: boolean): Value;
  max(x: Value, axes: number[], keepDims?: boolean): Value;
  reshape(x: Value, shape: Shape): Value;
  transpose(x: Value, perm: number[]): Value;
  slice(x: Value, axis: number, start: number, length: number): Value;
  concat(xs: Value[], axis: number): Value;
  gather(table: Value, indices: Value): Value;
  attention(q: Value, k: Value, v: Value, options?: AttentionOptions): Value;
  /** Outputs keep the order of these calls. */
  output(name: string, v: Value): void;
  shape(v: Value): Shape;
  nodeCount(): number;
  inputs(): NamedShape[];
  outputs(): NamedShape[];
  toText(): string;
  toJson(): string;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

export interface NamedShape {
  name: string;
  shape: Shape;
}

/** The block-level builder; lowers to a Graph and names its own params. */
export declare class HirModule implements Deletable {
  constructor();
  input(name: string, shape: Shape): Value;
  /** Params name.weight [in, out] and name.bias [out]. Defaults: Activation.None, bias true. */
  linear(x: Value, name: string, outFeatures: number, act?: EnumValue, bias?: boolean): Value;
  layerNorm(x: Value, name: string, eps?: number): Value;
  rmsNorm(x: Value, name: string, eps?: number): Value;
  selfAttention(x: Value, name: string, heads: number, keyMask?: Value | null, causal?: boolean): Value;
  mlp(x: Value, name: string, hidden: number, act?: EnumValue): Value;
  embedding(ids: Value, name: string, vocab: number, dim: number): Value;
  meanPool(x: Value, mask?: Value | null): Value;
  add(a: Value, b: Value): Value;
  output(name: string, v: Value): void;
  shape(v: Value): Shape;
  lower(): Graph;
  /** Every param it created, in creation order. */
  params(): NamedShape[];
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

export interface CompileOptions {
  /** false: one kernel per primitive op. Default true. */
  fusion?: boolean;
  /** Ignored in wasm (single-threaded). */
  threads?: number;
  /** Default: the Session's (or the cache's) policy, else 'f32'. */
  policy?: PrecisionPolicy | null;
  /** Keep the IR text after each pass that changed it (report().passes[i].irAfter). */
  dumpPasses?: boolean;
  /** Refuse (ArenaLimit, before allocating) a compile whose arena would exceed this. */
  maxArenaBytes?: number | null;
}

export interface PassReport {
  name: string;
  ms: number;
  nodesBefore: number;
  nodesAfter: number;
  changed: boolean;
  irAfter: string;
}

export interface KernelReport {
  /** The IR op, e.g. "fused_matmul". */
  op: string;
  /** The kernel that runs it, e.g. "gemm[wasm]+bias+gelu". */
  kernel: string;
  shape: Shape;
  /**
   * On more than one thread, the row segment the kernel runs in (0, 1, ...), or -1: a stretch of
   * row-local kernels that each thread runs whole on its own rows.
   */
  rowSegment: number;
}

/** One kernel's share of a run (CompiledGraph.profile). */
export interface KernelProfile {
  op: string;
  kernel: string;
  shape: Shape;
  /** Mean wall time per run. */
  ms: number;
  /** Per run: multiply-adds count 2 (0 for kernels that are not products or attention). */
  flops: number;
  /** Per run: each input and the output counted once. */
  bytes: number;
}

export interface CompileReport {
  /** "wasm" (SIMD128) or "scalar" (Device.Reference). */
  isa: string;
  device: string;
  policy: string;
  threads: number;
  passes: PassReport[];
  kernels: KernelReport[];
  arenaBytes: number;
  intermediateBytes: number;
  paramBytes: number;
  compileMs: number;
  /** CompileReport::to_text(): the readable summary the CLI prints. */
  text: string;
}

/**
 * A graph compiled for one device. Made by Session.compile; the cache hands out graphs it owns
 * (deleting such a handle releases the handle, not the cache's graph).
 */
export declare class CompiledGraph implements Deletable {
  private constructor();
  /** One Float32Array per output, in declared order. Inputs are copied in once each. */
  run(inputs: Record<string, InputArray>): Float32Array[];
  /**
   * As run, writing into `outputs` (one Float32Array per output, in declared order, each of the
   * output's element count) and returning it: no array is allocated per call. An output array
   * may be one of the inputs.
   */
  runInto(inputs: Record<string, InputArray>, outputs: Float32Array[]): Float32Array[];
  setParam(name: string, data: Float32Array): void;
  inputNames(): string[];
  outputNames(): string[];
  inputShape(name: string): Shape;
  outputShape(name: string): Shape;
  paramNames(): string[];
  paramShape(name: string): Shape;
  paramIsSet(name: string): boolean;
  report(): CompileReport;
  /**
   * Runs the graph `repetitions` times (after one warm-up run) on `inputs` and times every kernel:
   * one entry per kernel in run order, with its mean ms per run and the work it does (flops for
   * products and attention, else 0; bytes of its inputs and output), to set against the machine's
   * peak. Repetitions in [1, 100000].
   */
  profile(inputs: Record<string, InputArray>, repetitions?: number): KernelProfile[];
  /** Active extent (docs/active-extent.md): can this graph compute only the real rows? */
  prepareActiveRows(extent: number): boolean;
  activeRowsSupported(): boolean;
  activeRowsReason(): string;
  runRows(inputs: Record<string, InputArray>, rows: number): Float32Array[];
  elementsComputed(): number;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

export declare class Session implements Deletable {
  constructor(device: DeviceValue);
  withPolicy(policy: PrecisionPolicy): Session;
  compile(graph: Graph, options?: CompileOptions): CompiledGraph;
  compileHir(module: HirModule, options?: CompileOptions): CompiledGraph;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

/** A half-open key range [start, end): the bucket compiles at upper = end - 1. */
export interface Range {
  start: number;
  end: number;
}

export interface BucketEntry {
  /** The extent the bucket's graph was compiled for (range.end - 1). */
  upper: number;
  /** Owned by the cache; stays valid while this handle lives, even after cache.delete(). */
  graph: CompiledGraph;
}

/** build(upper) for getOrCompile / runPadded: a new Graph; the cache deletes it after compiling. */
export type GraphBuild = (upper: number) => Graph;
/** build(upper) for getOrCompileHir: a new HirModule; the cache deletes it after compiling. */
export type HirBuild = (upper: number) => HirModule;
/** Params as plain object or Map of name to values. */
export type ParamMap = Record<string, Float32Array> | Map<string, Float32Array>;
export type GraphWithParamsBuild = (upper: number) => [Graph, ParamMap];
export type HirWithParamsBuild = (upper: number) => [HirModule, ParamMap];
/** Any build the cache takes; a Model builds itself at `upper` in C++ (no weights copied via JS). */
export type AnyBuild = GraphBuild | HirBuild | GraphWithParamsBuild | HirWithParamsBuild | Model;

/**
 * A run input's values: Float32Array, or integers (BigInt64Array, Int32Array) or booleans
 * (Uint8Array, 0 false, else true) converted exactly to f32; an integer past 2^24 in magnitude
 * throws an InvalidArgument error naming the input and the value.
 */
export type InputArray = Float32Array | BigInt64Array | Int32Array | Uint8Array;

export interface PaddedInput {
  name: string;
  /** [rows, inner] row-major. */
  data: InputArray;
  inner: number;
}

export interface CacheRunInput {
  name: string;
  data: InputArray;
  /** null or absent: passed through unpadded. */
  rowInner?: number | null;
}

export interface PaddedRun {
  upper: number;
  outputs: Float32Array[];
  /** 'active': only the actual rows were computed (active extent); 'padded': the whole bucket. */
  mode: 'padded' | 'active';
}

/** The counters a bucket keeps and the cache sums over its buckets into its totals. */
export interface SummedCounters {
  hits: number;
  compiles: number;
  failedCompiles: number;
  compileMs: number;
  runs: number;
  paddedRuns: number;
  activeRuns: number;
  actualRows: number;
  paddedRows: number;
  computedRows: number;
  runMs: number;
  overheadMs: number;
  elementsComputed: number;
  arenaBytes: number;
}

export interface BucketStats extends SummedCounters {
  range: Range;
  upper: number;
  compiled: boolean;
  /** null until the bucket was prepared for active extent. */
  activeSupported: boolean | null;
  activeReason: string;
  /** When active extent is supported: '' if active runs equal padded ones on the real rows, else
   * the node where padding reaches them (a model without a mask); active runs are then exact. */
  activeDiffersFromPadding: string;
  paramBytes: number;
}

export interface CacheStats extends SummedCounters {
  buckets: BucketStats[];
  outOfRange: number;
  paramBytesSummed: number;
  weightBytes: number;
  distinctWeightCopies: number;
  /** paddedRows / actualRows (1 with no rows). */
  waste: number;
  /** computedRows / actualRows (1 with no rows). */
  computeWaste: number;
}

/**
 * Compile at max, run at less: one CompiledGraph per bucket of a ladder of key ranges, compiled
 * lazily at the bucket's upper extent. A key outside every bucket gives null and never calls build.
 * An exception thrown by build propagates unchanged and leaves the bucket uncompiled.
 */
export declare class BucketedCompileCache implements Deletable {
  constructor(device: DeviceValue, buckets: Range[]);
  static withPolicy(device: DeviceValue, buckets: Range[], policy: PrecisionPolicy | null): BucketedCompileCache;
  static powerOfTwoLadder(device: DeviceValue, min: number, max: number): BucketedCompileCache;
  static powerOfTwoLadderWithPolicy(
    device: DeviceValue, min: number, max: number, policy: PrecisionPolicy | null): BucketedCompileCache;

  getOrCompile(key: number, build: GraphBuild): BucketEntry | null;
  getOrCompileWithOptions(key: number, build: GraphBuild, options: CompileOptions): BucketEntry | null;
  getOrCompileHir(key: number, build: HirBuild): BucketEntry | null;
  getOrCompileHirWithOptions(key: number, build: HirBuild, options: CompileOptions): BucketEntry | null;
  ensureGraphWithParams(key: number, build: GraphWithParamsBuild, options?: CompileOptions): BucketEntry | null;
  ensureHirWithParams(key: number, build: HirWithParamsBuild | Model, options?: CompileOptions): BucketEntry | null;

  bucketFor(key: number): number | null;
  buckets(): Range[];
  compiledCount(): number;
  totalBuckets(): number;

  /**
   * Pads each input to `upper` rows, runs the bucket's graph, slices output i to actualRows rows
   * of outputInners[i] values (0, or i past the list: unsliced). null out of range (no build).
   * build may also return [Graph|HirModule, ParamMap] (params uploaded on first compile), or be
   * a Model. Every input holds exactly actualRows rows (its values / inner): ShapeMismatch
   * otherwise.
   */
  runPadded(key: number, actualRows: number, build: AnyBuild, inputs: PaddedInput[], outputInners?: number[]): PaddedRun | null;
  runPaddedMixed(key: number, actualRows: number, build: AnyBuild, inputs: CacheRunInput[], outputInners?: number[]): PaddedRun | null;

  /** Active extent: run only the real rows where the graph allows it (docs/active-extent.md). */
  setActiveExtent(on: boolean): BucketedCompileCache;
  activeExtent(): boolean;
  stats(): CacheStats;
  /** CacheStats::to_json(), the same text the CLI writes. */
  statsJson(): string;
  device(): DeviceValue;
  policy(): PrecisionPolicy | null;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

/** data as [actual, inner] -> upper*inner values, zeros appended. */
export declare function padRows(data: Float32Array, inner: number, upper: number): Float32Array;
/** The first actual*inner values of data. */
export declare function sliceRows(data: Float32Array, inner: number, actual: number): Float32Array;

/** Ladders (rungs::ladder): bucket lists covering [1, max]. */
export declare const ladder: {
  readonly head: number[];
  validate(buckets: Range[], who?: string): void;
  powerOfTwo(min: number, max: number, head?: boolean): Range[];
  geometric(min: number, max: number, ratio: number, head?: boolean): Range[];
  linear(min: number, max: number, step: number, head?: boolean): Range[];
  fromExtents(extents: number[], head?: boolean): Range[];
  withHead(ladder: Range[], head?: number[]): Range[];
  /** The ladder with at most maxBuckets buckets minimising padded rows over observedKeys. */
  optimal(observedKeys: number[] | Uint32Array, maxBuckets: number): Range[];
  expectedWaste(buckets: Range[], observedKeys: number[] | Uint32Array): number;
  paddedRows(buckets: Range[], observedKeys: number[] | Uint32Array): number;
  /** Reproducible log-normal request lengths, clipped to [1, max]. */
  lognormalTrace(median: number, count: number, max: number, seed: number, sigma?: number): number[];
};

export interface ModelInput {
  name: string;
  shape: Shape;
}

/** How an input lies along the bucket dim (Model.inputLayouts). */
export interface InputLayout {
  name: string;
  shape: Shape;
  /** The shape changes with the extent. */
  followsBucket: boolean;
  /** Values per row when padded by appending rows; null when not padded by rows. */
  rowValues: number | null;
  /** As the file declares it (JSON models: always float32); values are passed as numbers. */
  dtype: 'float32' | 'int64' | 'int32' | 'bool';
  /** What it feeds: token ids, a keep mask (1 keeps a row), or plain values. */
  role: 'ids' | 'mask' | 'values';
}

export interface ModelParam {
  name: string;
  shape: Shape;
  dtype: 'F32' | 'BF16' | 'F16';
}

/** A model description (docs/model-format.md) with its weights, loaded from bytes. */
export declare class Model implements Deletable {
  private constructor();
  /** A description without weights. */
  static parse(jsonText: string, source?: string): Model;
  name(): string;
  /** The symbolic bucket dimension ("seq"), or "" for a fully static model. */
  bucketDim(): string;
  description(): string;
  inputs(extent: number): ModelInput[];
  outputNames(): string[];
  /** Every input's layout along the bucket dim at `extent`. */
  inputLayouts(extent: number): InputLayout[];
  /** runPadded*'s outputInners: each output's values per row, 0 for one returned whole. */
  outputInners(): number[];
  /** Reproducible inputs for `rows` rows (ids in range, masks of ones, values in [-1, 1]). */
  syntheticInputs(rows: number, seed?: number): Float32Array[];
  params(): ModelParam[];
  paramCount(): number;
  hasWeights(): boolean;
  /** The module at `extent` and its weights: what ensureHirWithParams / runPadded build returns. */
  build(extent: number): [HirModule, Record<string, Float32Array>];
  buildModule(extent: number): HirModule;
  toJson(weightsFile?: string): string;
  /** The weights as safetensors bytes. */
  weightsBytes(dtype?: 'F32' | 'BF16' | 'F16'): Uint8Array;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

/**
 * Universal Sentence Encoder Lite's tokenizer (SentencePiece-style unigram), ids equal to
 * @energetic-ai/embeddings' (docs/text.md). Invalid text never throws: it is tokenized as
 * TextDecoder would decode it.
 */
export declare class UnigramTokenizer implements Deletable {
  private constructor();
  /** From the text of a vocab.json ([[piece, score], ...]); `source` names it in errors. */
  static parse(vocabJson: string, source?: string): UnigramTokenizer;
  encode(text: string): Int32Array;
  piece(id: number): string;
  vocabSize(): number;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

/** Settings of BERT's basic tokenizer and WordPiece (C++ WordPieceOptions). */
export interface WordPieceOptions {
  cleanText?: boolean;
  handleChineseChars?: boolean;
  lowercase?: boolean;
  /** Unset: as `lowercase`. */
  stripAccents?: boolean | null;
  unkToken?: string;
  clsToken?: string;
  sepToken?: string;
  continuingSubwordPrefix?: string;
  maxInputCharsPerWord?: number;
}

export interface Encoding {
  ids: Int32Array;
  tokens: string[];
  /** 0 for the first text (with [CLS] and its [SEP]), 1 for the pair. */
  tokenTypeIds: Int32Array;
  attentionMask: Int32Array;
}

/** BERT's WordPiece tokenizer from a vocab.txt or a HuggingFace tokenizer.json (docs/text.md). */
export declare class WordPieceTokenizer implements Deletable {
  private constructor();
  static parseVocabTxt(vocabTxt: string, options?: WordPieceOptions | null, source?: string): WordPieceTokenizer;
  static parseTokenizerJson(tokenizerJson: string, source?: string): WordPieceTokenizer;
  /** The word pieces, without special tokens. */
  tokenize(text: string): string[];
  /** [CLS] text [SEP] (or the bare pieces). */
  encode(text: string, addSpecialTokens?: boolean): Encoding;
  /** [CLS] text [SEP] pair [SEP] (or the bare pieces of both). */
  encodePair(text: string, pair: string, addSpecialTokens?: boolean): Encoding;
  tokenToId(token: string): number | null;
  idToToken(id: number): string;
  vocabSize(): number;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

/** A model from its JSON text and its .safetensors bytes (browsers have no files). */
export declare function loadModel(jsonText: string | Uint8Array, safetensors: Uint8Array, source?: string): Model;

/** Options of loadOnnx (docs/onnx.md, "Options"). */
export interface OnnxLoadOptions {
  /** The symbolic dim the cache buckets; default: the only symbol left after `fix`. */
  bucketDim?: string;
  /** Values for the other symbols, e.g. {batch: 1} (a batch-like symbol defaults to 1). */
  fix?: Record<string, number>;
  /** External-data tensors by their `location` (a browser has no files beside the model). */
  externalData?: Record<string, Uint8Array | ArrayBuffer>;
  /** Names the model in error messages (default "model"). */
  name?: string;
}

/** An ONNX model file from its bytes: a Model like loadModel's, bucketed on its symbolic dim. */
export declare function loadOnnx(bytes: Uint8Array | ArrayBuffer, options?: OnnxLoadOptions): Model;

/**
 * A TF.js graph model (docs/tfjs.md) from model.json's text (or bytes) and its weight shards in
 * the order its weightsManifest lists them; `name` prefixes error messages (default "model").
 */
export declare function loadTfjs(modelJson: string | Uint8Array, shards: Uint8Array[], name?: string): Model;
/** Node only: model.json's path; its shards are read from beside it. */
export declare function loadTfjsFile(modelJsonPath: string): Promise<Model>;
/**
 * loadTfjsUrl's rejection when a fetch fails: a response that is not OK (a 404 on model.json: no
 * model there) or no response at all (then `cause` is fetch's own error).
 */
export interface FetchError extends RungsError {
  code: 'InvalidArgument';
  /** The HTTP status of the response; absent when there was none. */
  status?: number;
  /** The URL fetched: model.json's or a shard's. */
  url: string;
}

/**
 * Browser or Node (fetch): model.json's URL; its shards are fetched from beside it, with
 * onProgress(loadedBytes, totalBytes) over the bytes of model.json and every shard. A fetch that
 * fails, or a response that is not OK, rejects with a FetchError.
 */
export declare function loadTfjsUrl(modelJsonUrl: string | URL,
    onProgress?: (loadedBytes: number, totalBytes: number) => void): Promise<Model>;

export interface TextEmbedderOptions {
  /** Default ladder.powerOfTwo(1, 128) (USE Lite clips at 128 tokens). */
  ladder?: Range[];
  /** Default Device.Cpu. */
  device?: DeviceValue;
  /** Default true. */
  activeExtent?: boolean;
  /**
   * Default 0 (off). A text of more tokens runs its first maxTokens ids (`tokens` still counts them
   * all): only for a model that clips its input at that length itself, such as USE Lite at 128,
   * where it gives the same embedding without compiling a bucket past it.
   */
  maxTokens?: number;
}

export interface TextEmbedding {
  text: string;
  /** Token ids of the text. */
  tokens: number;
  /** The extent it ran at: its bucket's upper, or its own length in mode 'exact'. */
  bucket: number;
  /**
   * How the cache ran it: 'padded' (its bucket's graph, inputs padded; exact for a model with a
   * padding mask), 'active' (only its rows) or 'exact' (at its own length: a model without a mask,
   * such as USE Lite, that the cache would have padded).
   */
  mode: 'padded' | 'active' | 'exact';
  embedding: Float32Array;
}

/**
 * Texts to embeddings (docs/tfjs.md, "TextEmbedder"): a text model (one input of token ids, at
 * most one padding mask), its tokenizer and a bucketed compile cache. It keeps its own copy of the
 * model (the Model may be deleted after). Errors name the text by position (from 1): one without
 * tokens is 'InvalidArgument', one past the ladder 'OutOfRange'; texts are checked before any run.
 */
export declare class TextEmbedder implements Deletable {
  constructor(model: Model, tokenizer: UnigramTokenizer, options?: TextEmbedderOptions);
  /** One vector per text. */
  embed(texts: string[]): Float32Array[];
  embedDetailed(texts: string[]): TextEmbedding[];
  /** The tokenizer only, no model run. */
  tokenCounts(texts: string[]): number[];
  /** The underlying cache's stats. */
  stats(): CacheStats;
  buckets(): Range[];
  /** Whether a text ran in mode 'exact' (the model has no padding mask). */
  usedExactFallback(): boolean;
  /** The model has a padding mask: padded runs are exact. */
  hasMask(): boolean;
  /** Values of one embedding. */
  width(): number;
  delete(): void;
  isDeleted(): boolean;
  [Symbol.dispose](): void;
}

/** The cosine of two vectors of the same length (0 when one is all zeros). */
export declare function cosineSimilarity(a: Float32Array, b: Float32Array): number;

/** The rungs library version, "MAJOR.MINOR.PATCH". */
export declare function version(): string;

/** The instruction set Device.Cpu kernels dispatch to: "wasm" (SIMD128) in this build. */
export declare function cpuIsa(): string;

/** Bytes the wasm heap holds now (the linear memory size) and bytes malloc has handed out. */
export declare function heapStats(): { heapBytes: number; allocatedBytes: number };

/**
 * Which WebAssembly variant loaded: "threads" (Node, and cross-origin isolated pages and workers)
 * or "single" (elsewhere), and the most threads a graph runs on: CompileOptions.threads 0 means
 * this many, a larger count is capped to it (the compile report says how many ran).
 */
export declare function threading(): { variant: 'threads' | 'single'; maxThreads: number };
