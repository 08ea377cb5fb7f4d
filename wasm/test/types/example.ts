// SPDX-License-Identifier: Apache-2.0
// A TypeScript user of the rungs package: type-checked against the shipped index.d.ts with
// `tsc --strict`, then run (wasm/test/package.test.mjs). It prints one JSON line the test checks.
import {
  BucketedCompileCache,
  Device,
  Graph,
  HirModule,
  Activation,
  Session,
  TextEmbedder,
  UnigramTokenizer,
  cosineSimilarity,
  ladder,
  loadTfjs,
  loadTfjsFile,
  loadTfjsUrl,
  padRows,
  type CacheStats,
  type FetchError,
  type Model,
  type TextEmbedding,
  type TextEmbedderOptions,
  type PaddedRun,
  type Range,
  type RungsError,
} from 'rungs';

function build(upper: number): HirModule {
  const m = new HirModule();
  const x = m.input('x', [upper, 8]);
  m.output('y', m.mlp(m.layerNorm(x, 'norm'), 'mlp', 16, Activation.Gelu));
  return m;
}

function params(): Record<string, Float32Array> {
  const probe = build(1);
  const out: Record<string, Float32Array> = {};
  for (const { name, shape } of probe.params()) {
    const n = shape.reduce((a, b) => a * b, 1);
    out[name] = Float32Array.from({ length: n }, (_, i) => Math.sin(i + name.length) * 0.1);
  }
  probe.delete();
  return out;
}

const weights = params();
const buckets: Range[] = ladder.optimal([3, 3, 5, 12, 12, 30], 3);
const cache = new BucketedCompileCache(Device.Cpu, buckets);
const uppers: number[] = [];
for (const rows of [3, 5, 12, 30, 2]) {
  const x = new Float32Array(rows * 8).fill(0.25);
  const run: PaddedRun | null = cache.runPadded(rows, rows, (upper) => [build(upper), weights], [{ name: 'x', data: x, inner: 8 }], [8]);
  if (run === null) throw new Error(`no bucket for ${rows}`);
  uppers.push(run.upper);
}
const stats: CacheStats = cache.stats();

let code = '';
try {
  cache.runPadded(1000, 1000, build, [], []);
  const g = new Graph();
  g.matmul(g.input('a', [2, 3]), g.input('b', [2, 3]));
} catch (e) {
  code = (e as RungsError).code;
}

const session = new Session(Device.Reference).withPolicy('bf16_weights');
const g = new Graph();
g.output('y', g.softmax(g.input('x', [2, 2])));
const compiled = session.compile(g, { fusion: false });
const [y] = compiled.run({ x: padRows(new Float32Array([0, 0]), 2, 2) });
compiled[Symbol.dispose]();
session.delete();
g.delete();
cache.delete();

// Sentence embeddings (type-checked only: the model's files are not here).
async function embedTexts(modelJsonPath: string, vocabJson: string, texts: string[]): Promise<number> {
  const model: Model = await loadTfjsFile(modelJsonPath);
  const tok = UnigramTokenizer.parse(vocabJson, 'vocab.json');
  const options: TextEmbedderOptions = { ladder: ladder.powerOfTwo(1, 128), device: Device.Cpu, activeExtent: true };
  const embedder = new TextEmbedder(model, tok, options);
  model.delete();
  const detailed: TextEmbedding[] = embedder.embedDetailed(texts);
  const modes: Array<'padded' | 'active' | 'exact'> = detailed.map((d) => d.mode);
  const [a, b]: Float32Array[] = embedder.embed(texts);
  const counts: number[] = embedder.tokenCounts(texts);
  const compiles: number = embedder.stats().compiles + embedder.buckets().length + counts.length + modes.length;
  embedder.delete();
  tok.delete();
  return cosineSimilarity(a, b) + compiles;
}
async function fromBytes(json: string, shards: Uint8Array[]): Promise<Model> {
  let fetched: Model;
  try {
    fetched = await loadTfjsUrl('https://example.com/model.json', (loaded: number, total: number) => {
      console.error(`${loaded} / ${total}`);
    });
  } catch (e) {
    const failed = e as FetchError;
    if (failed.status === 404) throw new Error(`no model at ${failed.url} (${failed.code})`);
    throw e;
  }
  fetched.delete();
  return loadTfjs(json, shards, 'use');
}
void [embedTexts, fromBytes];
const cos: number = cosineSimilarity(new Float32Array([1, 1]), new Float32Array([1, 0]));

console.log(JSON.stringify({ uppers, compiles: stats.compiles, waste: stats.waste, code, y: Array.from(y), cos }));
