// SPDX-License-Identifier: Apache-2.0
// WordPiece ids from tokenizers.js (@huggingface/tokenizers 0.2.0, HuggingFace's pure-JS port of
// its tokenizers) for tests/text/texts.json, pairs of them and the lines of a licence text, with
// the small hand-written tests/text/wordpiece/vocab.txt (no real BERT vocabulary can be had here)
// under three BertNormalizer settings. Writes the tokenizer.json of each setting beside vocab.txt
// and the ids, one JSON object a line:
//
//   node tests/text/reference/wordpiece_reference.mjs > tests/text/wordpiece_reference.jsonl
//   node tests/text/reference/wordpiece_reference.mjs --check tests/text/wordpiece_reference.jsonl
//
// --check exits 1 when a committed file is not what the reference makes, and 77 (ctest's skip)
// when the package is not installed. tests/text/wordpiece_test.cpp compares
// rungs::text::WordPieceTokenizer (from vocab.txt and from tokenizer.json) with the committed ids.
//
// Known differences of tokenizers.js from BERT (and rungs), kept out of texts.json: it does not
// put spaces around CJK ideographs outside the BMP (it walks UTF-16 units), and it keeps
// unassigned code points, which BERT's text cleaning drops.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));
let Tokenizer;
try {
  ({ Tokenizer } = require('@huggingface/tokenizers'));
} catch (e) {
  console.error(`wordpiece_reference: @huggingface/tokenizers is not installed in ${here} (bash scripts/setup): ${e.message}`);
  process.exit(77);
}

const dir = join(here, '..', 'wordpiece');
const vocabLines = readFileSync(join(dir, 'vocab.txt'), 'utf8').split('\n').filter((l) => l !== '');
const vocab = Object.fromEntries(vocabLines.map((t, i) => [t, i]));
const special = (id, type_id) => ({ SpecialToken: { id, type_id } });
const sequence = (id, type_id) => ({ Sequence: { id, type_id } });
const template = {
  type: 'TemplateProcessing',
  single: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0)],
  pair: [special('[CLS]', 0), sequence('A', 0), special('[SEP]', 0), sequence('B', 1), special('[SEP]', 1)],
  special_tokens: {
    '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
    '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
  },
};
const bertProcessing = { type: 'BertProcessing', sep: ['[SEP]', vocab['[SEP]']], cls: ['[CLS]', vocab['[CLS]']] };
const configs = {
  uncased: { lowercase: true, strip_accents: null, post: template },
  cased: { lowercase: false, strip_accents: null, post: bertProcessing },
  uncased_accents: { lowercase: true, strip_accents: false, post: template },
};
const tokenizerJson = (c) => ({
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: [],
  normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: c.strip_accents, lowercase: c.lowercase },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: c.post,
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
});

const texts = JSON.parse(readFileSync(join(here, '..', 'texts.json'), 'utf8'));
if (existsSync('/usr/share/common-licenses/Artistic')) {
  texts.push(...readFileSync('/usr/share/common-licenses/Artistic', 'utf8').split('\n'));
}
const cases = texts.map((text) => ({ text }));
for (let i = 0; i + 1 < 49; ++i) if (texts[i] !== '' && texts[i + 1] !== '') cases.push({ text: texts[i], pair: texts[i + 1] });

const files = new Map();
const lines = [];
for (const [name, c] of Object.entries(configs)) {
  const json = tokenizerJson(c);
  files.set(join(dir, `${name}.tokenizer.json`), JSON.stringify(json, null, 1) + '\n');
  const tok = new Tokenizer(json, {});
  for (const { text, pair } of cases) {
    const e = tok.encode(text, { text_pair: pair ?? null, return_token_type_ids: true });
    const row = { config: name, text };
    if (pair !== undefined) row.pair = pair;
    lines.push(JSON.stringify({ ...row, ids: e.ids, type_ids: e.token_type_ids }));
  }
}
const made = lines.join('\n') + '\n';
const check = process.argv.indexOf('--check');
if (check < 0) {
  for (const [path, text] of files) writeFileSync(path, text);
  process.stdout.write(made);
} else {
  files.set(process.argv[check + 1], made);
  for (const [path, text] of files) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
      console.error(`wordpiece_reference: ${path} is not what the reference makes: regenerate it`);
      process.exit(1);
    }
  }
  console.log(`wordpiece_reference: ${files.size} files match the reference (${lines.length} encodings)`);
}
