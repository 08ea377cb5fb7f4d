// SPDX-License-Identifier: Apache-2.0
// The own-model box's "Fix" field, in Node: "name=value" pairs separated by commas or spaces fix
// symbolic dims; anything else is refused with the part that is wrong.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFix } from '../src/onnx-file.js';

test('Fix pairs parse into whole numbers by name', () => {
  assert.deepEqual(parseFix(''), {});
  assert.deepEqual(parseFix('  '), {});
  assert.deepEqual(parseFix('batch=1'), { batch: 1 });
  assert.deepEqual(parseFix('batch=1, heads=4  seq=128'), { batch: 1, heads: 4, seq: 128 });
});

test('Fix refuses a part that is not name=whole number, and names it', () => {
  assert.throws(() => parseFix('batch'), /Fix: 'batch' is not name=value/);
  assert.throws(() => parseFix('batch=1,seq=x'), /Fix: 'seq=x' is not name=value/);
  assert.throws(() => parseFix('batch=-1'), /Fix: 'batch=-1'/);
  assert.throws(() => parseFix('=3'), /Fix: '=3'/);
});
