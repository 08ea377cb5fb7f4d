// SPDX-License-Identifier: Apache-2.0
// The "real text" mode's half of the Web Worker (worker.js hands it the 'text-*' messages): loads
// Universal Sentence Encoder Lite (a TF.js graph model, its shards and vocab.json, served by the
// demo under models/use-lite/), tokenizes the page's sentences with the package's
// UnigramTokenizer, places each in the chosen ladder's bucket and embeds them with a TextEmbedder
// built on that ladder. Protocol (docs/web.md, "Real text"):
//
//   page -> worker
//     { type: 'text-load', baseUrl }                  vocab.json first, then model.json + shards
//     { type: 'text-run', textId, texts, scheme, embed }   tokens, buckets and waste; with embed (and
//                                                      the model loaded) the embeddings too
//   worker -> page
//     { type: 'text-tokenizer', vocabSize } | { type: 'text-error', stage, message, missing }
//     { type: 'text-progress', loaded, total }        bytes of model.json + shards
//     { type: 'text-loaded', ms, bytes }
//     { type: 'text-tokens', textId, tokens, ranges, buckets, extents, waste, error, field }
//     { type: 'text-embedded', textId, rows, similarity, heads, stats, ms } | { type: 'text-embed-error', textId, message }
import { TextEmbedder, UnigramTokenizer, cosineSimilarity, ladder, loadTfjsUrl } from 'rungs';
import { buildLadder, bucketOf } from './schemes.js';

const text = {
  tokenizer: null,
  model: null,
  embedder: null,
  embedderKey: '',  // the ladder the embedder was built on (JSON of its ranges)
  loading: false,
};

function describe(e) {
  if (e && e.code) return `${e.message} (${e.code})`;
  return e && e.message ? e.message : String(e);
}

// What the page needs to say when the model package is not installed: a 404 on vocab.json,
// model.json or a shard.
class Missing extends Error {}

async function fetchText(url) {
  const r = await fetch(url);
  if (r.status === 404) throw new Missing(`${url}: not found (HTTP 404)`);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.text();
}

async function load(msg, post) {
  if (text.loading || text.model) return;
  text.loading = true;
  let stage = 'vocab';
  try {
    const vocabUrl = new URL('vocab.json', msg.baseUrl).href;
    text.tokenizer = UnigramTokenizer.parse(await fetchText(vocabUrl), 'vocab.json');
    post({ type: 'text-tokenizer', vocabSize: text.tokenizer.vocabSize() });
    stage = 'model';
    const modelUrl = new URL('model.json', msg.baseUrl).href;
    const t0 = performance.now();
    let lastPost = 0;
    let bytes = 0;
    try {
      text.model = await loadTfjsUrl(modelUrl, (loaded, total) => {
        bytes = total;
        const now = performance.now();
        if (now - lastPost > 50 || loaded === total) {
          lastPost = now;
          post({ type: 'text-progress', loaded, total });
        }
      });
    } catch (e) {
      // A 404 (model.json or a shard): the package is not installed, which the page says as such.
      if (e.status === 404) throw new Missing(`${e.url}: not found (HTTP 404)`);
      throw e;
    }
    post({ type: 'text-loaded', ms: performance.now() - t0, bytes });
  } catch (e) {
    post({ type: 'text-error', stage, message: describe(e), missing: e instanceof Missing });
  } finally {
    text.loading = false;
  }
}

// The TextEmbedder for these ranges: one per ladder (a new ladder starts a fresh cache).
function embedderFor(ranges) {
  const key = JSON.stringify(ranges);
  if (text.embedder && text.embedderKey === key) return text.embedder;
  if (text.embedder) text.embedder.delete();
  text.embedder = new TextEmbedder(text.model, text.tokenizer, { ladder: ranges });
  text.embedderKey = key;
  return text.embedder;
}

function run(msg, post) {
  const { textId, texts, scheme } = msg;
  if (!text.tokenizer) {
    post({ type: 'text-tokens', textId, tokens: null, error: 'the vocabulary is not loaded yet' });
    return;
  }
  const tokens = texts.map((t) => text.tokenizer.encode(t).length);
  let ranges;
  try {
    ranges = buildLadder(scheme, ladder, tokens.filter((n) => n > 0));
  } catch (e) {
    post({ type: 'text-tokens', textId, tokens, ranges: null, error: describe(e), field: e && e.field ? e.field : null });
    return;
  }
  const buckets = tokens.map((n) => bucketOf(ranges, n));
  const extents = buckets.map((b) => (b >= 0 ? ranges[b].end - 1 : null));
  const covered = tokens.filter((n, i) => buckets[i] >= 0);
  const waste = covered.length ? ladder.expectedWaste(ranges, covered) : null;
  post({ type: 'text-tokens', textId, tokens, ranges, buckets, extents, waste, error: null });

  if (!text.model || !msg.embed) return;
  // Only the texts the ladder holds are embedded (the cache refuses the others).
  const idx = texts.map((_, i) => i).filter((i) => buckets[i] >= 0);
  if (idx.length === 0) {
    post({ type: 'text-embedded', textId, rows: [], similarity: [], heads: [], stats: null, ms: 0 });
    return;
  }
  try {
    const embedder = embedderFor(ranges);
    const t0 = performance.now();
    const detailed = embedder.embedDetailed(idx.map((i) => texts[i]));
    const ms = performance.now() - t0;
    const vectors = detailed.map((d) => d.embedding);
    const similarity = vectors.map((a) => vectors.map((b) => cosineSimilarity(a, b)));
    post({
      type: 'text-embedded',
      textId,
      rows: detailed.map((d, j) => ({ index: idx[j], tokens: d.tokens, bucket: d.bucket, mode: d.mode })),
      similarity,
      heads: vectors.map((v) => Array.from(v.subarray(0, 8))),
      width: vectors[0].length,
      stats: embedder.stats(),
      ms,
    });
  } catch (e) {
    post({ type: 'text-embed-error', textId, message: describe(e) });
  }
}

/** Handles a 'text-*' message; returns false for any other. */
export function onTextMessage(msg, post) {
  if (msg.type === 'text-load') {
    load(msg, post);
    return true;
  }
  if (msg.type === 'text-run') {
    run(msg, post);
    return true;
  }
  return false;
}
