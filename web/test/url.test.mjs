// SPDX-License-Identifier: Apache-2.0
// The settings in the URL, in Node: a round trip gives the same settings, other parameters stay,
// and anything that does not parse keeps its default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SCHEME } from '../src/schemes.js';
import { settingsFromQuery, settingsToQuery } from '../src/url.js';

const MODELS = ['mlp', 'encoder', 'classifier'];
const defaults = {
  model: 'encoder', active: false, repetitions: 1, selected: 0,
  schemes: [{ ...DEFAULT_SCHEME }, { ...DEFAULT_SCHEME, kind: 'optimal', budget: 6 }],
  traffic: { kind: 'lognormal', count: 300, max: 256, median: 24, seed: 1, lengthsText: '1 2', text: 'A b.' },
};

test('settings survive a round trip through the query, other parameters kept', () => {
  const s = {
    model: 'mlp', active: true, repetitions: 5, selected: 2,
    schemes: [{ ...DEFAULT_SCHEME, kind: 'list', extents: '16, 32, abc' }, { ...DEFAULT_SCHEME, kind: 'linear', step: 7 }, { ...DEFAULT_SCHEME, kind: 'one', max: 99 }],
    traffic: { ...defaults.traffic, kind: 'lengths', lengthsText: '5 12 0 -3 abc, 300' },
  };
  const query = settingsToQuery(s, '?autorun=0');
  assert.match(query, /^autorun=0&/);
  assert.deepEqual(settingsFromQuery(query, defaults, MODELS), s);
  // Only the pasted text the kind uses travels.
  assert.ok(!query.includes(encodeURIComponent('A b.').replace(/%20/g, '+')));
});

test('what does not parse keeps its default', () => {
  const bad = '?model=gpt&active=maybe&reps=0&sel=7&schemes=%5B%7B%22kind%22%3A%22zig%22%7D%5D&traffic=%7Bnot%20json';
  assert.deepEqual(settingsFromQuery(bad, defaults, MODELS), defaults);
  assert.deepEqual(settingsFromQuery('', defaults, MODELS), defaults);
  assert.equal(settingsFromQuery('?reps=21', defaults, MODELS).repetitions, 1);
  assert.equal(settingsFromQuery('?reps=2.5', defaults, MODELS).repetitions, 1);
  assert.equal(settingsFromQuery('?schemes=[]', defaults, MODELS).schemes, defaults.schemes);
  // A scheme missing fields gets the defaults for them.
  assert.deepEqual(settingsFromQuery('?schemes=[{"kind":"pow2","max":64}]', defaults, MODELS).schemes, [{ ...DEFAULT_SCHEME, max: 64 }]);
});
