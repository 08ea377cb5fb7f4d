// SPDX-License-Identifier: Apache-2.0
// node --test bench/wasm/test: the drivers' number formats (lib/table.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { cut, fixed, ratio, table } from '../lib/table.mjs';

test('ratio is cut to two decimals, never rounded up past a goal', () => {
  assert.equal(ratio(1.2996), '1.29x');
  assert.equal(ratio(1.3), '1.30x');
  assert.equal(ratio(0.998), '0.99x');
  assert.equal(ratio(1.699), '1.69x');
  assert.equal(ratio(0.29), '0.29x', 'a float product just under the step stays on it');
  assert.equal(ratio(2), '2.00x');
  assert.equal(ratio(null), '-');
  assert.equal(ratio(NaN), '-');
});

test('cut to d decimals; fixed still rounds (times are not judged against goals)', () => {
  assert.equal(cut(24.96, 1), '24.9');
  assert.equal(cut(25, 1), '25.0');
  assert.equal(cut(0.07, 2), '0.07');
  assert.equal(fixed(24.96), '25.0');
  assert.equal(fixed(null), '-');
});

test('table: number columns right-aligned (their header too), text left-aligned, a rule under the header', () => {
  assert.equal(table(['case', 'ms', 'vs'], [['a', '1.5', ratio(1.2996)], ['long name', '12.25', ratio(2)]]),
    ['case          ms     vs', '---------  -----  -----', 'a            1.5  1.29x', 'long name  12.25  2.00x'].join('\n'));
});
