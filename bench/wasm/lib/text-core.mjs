// SPDX-License-Identifier: Apache-2.0
// The USE Lite text benchmark (issue #18) without anything environment-specific, so Node
// (bench/wasm/run.mjs --only text) and the Chromium page (bench/wasm/browser.mjs --only text) run
// the same passes: @energetic-ai/embeddings on tfjs-backend-wasm against rungs' TextEmbedder, over
// the same lines, at the same thread count, outputs checked line by line.
//
// Passes, in this order, each over every line:
//   tfjs per sentence   model.embed(line) for each line (the model loaded before; not timed here)
//   tfjs batched        model.embed(lines[i .. i + batch]) for each batch
//   rungs               a fresh TextEmbedder (pow2 ladder 1..128, active extent on), then
//                       embed([line]) for each line: tokenization and every compile included
//   rungs steady        the same embedder again over every line (its buckets compiled)
//   rungs batched       a fresh TextEmbedder, then embed(lines[i .. i + batch]) for each batch
// The ratio compares the rungs pass with the FASTER of the two tfjs passes.

/** The equality asked for: every line within this max abs difference and above this cosine. */
export const TOLERANCE = { maxAbs: 1e-4, minCosine: 0.99999 };
export const BATCH = 16;

export class TextMismatch extends Error {}

export function cosine(a, b) {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}

/**
 * Compares two lists of embeddings line by line: {maxAbs, minCosine, worstAbsLine, worstCosLine}.
 * A length difference (of the lists or of one vector) is an Error.
 */
export function compare(ours, theirs) {
  if (ours.length !== theirs.length) throw new TextMismatch(`${ours.length} embeddings vs ${theirs.length}`);
  let maxAbs = 0, minCosine = 1, worstAbsLine = -1, worstCosLine = -1;
  for (let k = 0; k < ours.length; ++k) {
    const a = ours[k], b = theirs[k];
    if (a.length !== b.length) throw new TextMismatch(`line ${k + 1}: ${a.length} values vs ${b.length}`);
    let d = 0;
    for (let i = 0; i < a.length; ++i) d = Math.max(d, Math.abs(a[i] - b[i]));
    if (!(d <= maxAbs)) {
      maxAbs = d;
      worstAbsLine = k;
    }
    const c = cosine(a, b);
    if (!(c >= minCosine)) {
      minCosine = c;
      worstCosLine = k;
    }
  }
  return { maxAbs, minCosine, worstAbsLine, worstCosLine };
}

/** Throws TextMismatch unless `diff` (from compare) is within TOLERANCE. */
export function checkEqual(what, diff, lines) {
  const bad = [];
  if (!(diff.maxAbs <= TOLERANCE.maxAbs))
    bad.push(`max abs difference ${diff.maxAbs.toExponential(2)} > ${TOLERANCE.maxAbs} at line ${diff.worstAbsLine + 1} (${JSON.stringify(lines[diff.worstAbsLine])})`);
  if (!(diff.minCosine >= TOLERANCE.minCosine))
    bad.push(`cosine ${diff.minCosine.toFixed(7)} < ${TOLERANCE.minCosine} at line ${diff.worstCosLine + 1} (${JSON.stringify(lines[diff.worstCosLine])})`);
  if (bad.length) throw new TextMismatch(`${what}: ${bad.join('; ')}`);
}

/**
 * The lines of the corpus: the distinct non-empty lines (trimmed) of the given texts, in order.
 * `limit` keeps the first `limit`; `spread` instead keeps `spread` lines evenly spaced over all.
 */
export function corpusLines(texts, { limit = 0, spread = 0 } = {}) {
  const seen = new Set();
  const lines = [];
  for (const t of texts)
    for (const raw of t.split('\n')) {
      const line = raw.trim();
      if (line && !seen.has(line)) {
        seen.add(line);
        lines.push(line);
      }
    }
  if (spread > 0 && spread < lines.length) return Array.from({ length: spread }, (_, i) => lines[Math.floor((i * lines.length) / spread)]);
  return limit > 0 ? lines.slice(0, limit) : lines;
}

const batches = (lines, n) => Array.from({ length: Math.ceil(lines.length / n) }, (_, i) => lines.slice(i * n, (i + 1) * n));

/**
 * Runs the passes. tfjs: {info, threads, embed(texts) -> Promise<Float32Array[]>, tokenCount(text)};
 * rungs: {info, threads, make() -> TextEmbedder}; clock() starts a stopwatch whose call gives
 * {wall, cpu} ms (cpu null where there is no process clock); progress(text) reports.
 * Returns the row the tables print; throws TextMismatch when the embeddings differ.
 */
export async function runTextBench({ lines, batch = BATCH, tfjs, rungs, clock, progress = () => {} }) {
  const row = { lines: lines.length, batch, tfjsThreads: tfjs?.threads ?? null, rungsThreads: rungs?.threads ?? null };
  let theirs = null, theirsBatched = null;
  if (tfjs) {
    row.tokens = lines.reduce((s, l) => s + tfjs.tokenCount(l), 0);
    progress(`tfjs per sentence, ${lines.length} lines`);
    let stop = clock();
    theirs = [];
    for (const l of lines) theirs.push((await tfjs.embed([l]))[0]);
    row.tfjsPerSentence = stop();
    progress(`tfjs in batches of ${batch}`);
    stop = clock();
    theirsBatched = [];
    for (const b of batches(lines, batch)) theirsBatched.push(...(await tfjs.embed(b)));
    row.tfjsBatched = stop();
    row.tfjsBatchedVsPerSentence = compare(theirsBatched, theirs);
  }
  if (rungs) {
    progress(`rungs: fresh TextEmbedder, per sentence (compiles included)`);
    let stop = clock();
    const emb = rungs.make();
    const ours = [];
    try {
      for (const l of lines) ours.push(emb.embed([l])[0]);
      row.rungs = stop();
      const st = emb.stats();
      row.rungsStats = { compiles: st.compiles, compileMs: st.compileMs, runs: st.runs, activeRuns: st.activeRuns, waste: st.waste, computeWaste: st.computeWaste };
      // A model without a padding mask runs texts the cache would pad at their exact length, in a
      // second cache (TextEmbedder.exactStats where the package has it): its compiles count too.
      if (typeof emb.usedExactFallback === 'function') row.rungsStats.exactFallback = emb.usedExactFallback();
      const ex = typeof emb.exactStats === 'function' ? emb.exactStats() : null;
      if (ex) {
        row.rungsStats.exactCompiles = ex.compiles;
        row.rungsStats.exactRuns = ex.runs;
        row.rungsStats.compiles += ex.compiles;
        row.rungsStats.compileMs += ex.compileMs;
      }
      const counts = emb.tokenCounts(lines);
      row.rungsTokens = counts.reduce((a, b) => a + b, 0);
      progress('rungs steady (the same embedder again)');
      stop = clock();
      for (const l of lines) emb.embed([l]);
      row.rungsSteady = stop();
    } finally {
      emb.delete();
    }
    progress(`rungs: fresh TextEmbedder, batches of ${batch}`);
    stop = clock();
    const emb2 = rungs.make();
    const oursBatched = [];
    try {
      for (const b of batches(lines, batch)) oursBatched.push(...emb2.embed(b));
      row.rungsBatched = stop();
    } finally {
      emb2.delete();
    }
    row.rungsBatchedVsPerSentence = compare(oursBatched, ours);
    checkEqual('rungs in batches vs rungs per sentence', row.rungsBatchedVsPerSentence, lines);
    if (row.tokens == null) row.tokens = row.rungsTokens;
    if (theirs) {
      if (row.rungsTokens !== row.tokens) throw new TextMismatch(`token counts differ: rungs ${row.rungsTokens}, tfjs ${row.tokens}`);
      row.diff = compare(ours, theirs);
      row.diffBatched = compare(oursBatched, theirsBatched);
      checkEqual('rungs vs tfjs, per sentence', row.diff, lines);
      const faster = Math.min(row.tfjsPerSentence.wall, row.tfjsBatched.wall);
      row.fasterTfjs = row.tfjsPerSentence.wall <= row.tfjsBatched.wall ? 'per sentence' : 'batched';
      row.ratio = faster / row.rungs.wall;
      row.ratioSteady = faster / row.rungsSteady.wall;
      if (row.rungs.cpu != null) row.ratioCpu = Math.min(row.tfjsPerSentence.cpu, row.tfjsBatched.cpu) / row.rungs.cpu;
    }
  }
  return row;
}

/** The table's header and one row's cells (lib/table.mjs formats them). */
export const TEXT_HEADER = ['env', 'threads', 'lines', 'tokens', 'tfjs per sentence ms', `tfjs batched ms`, 'rungs ms', 'rungs steady ms',
  'rungs batched ms', 'compiles', 'vs faster tfjs', 'steady vs tfjs', 'max abs diff', 'min cosine'];
export function textCells(env, r, { fixed, ratio, sci }) {
  const ms = (t) => (t ? fixed(t.wall, 0) : '-');
  const th = r.tfjsThreads === r.rungsThreads || r.tfjsThreads == null ? `${r.rungsThreads}` : `${r.rungsThreads} (tfjs ${r.tfjsThreads})`;
  return [env, th, r.lines, r.tokens ?? '-', ms(r.tfjsPerSentence), ms(r.tfjsBatched), ms(r.rungs), ms(r.rungsSteady), ms(r.rungsBatched),
    r.rungsStats?.compiles ?? '-', ratio(r.ratio), ratio(r.ratioSteady), r.diff ? sci(r.diff.maxAbs) : '-', r.diff ? r.diff.minCosine.toFixed(7) : '-'];
}
