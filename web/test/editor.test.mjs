// SPDX-License-Identifier: Apache-2.0
// The settings panel's words and choices (src/editor.js), in Node: where a scheme's error goes, the
// hint under the editor with its refused requests, the traffic summary and ignored entries, the
// traffic fields each kind shows, the repetitions check, and the schemes Add and Quick compare make.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addedScheme, problemsText, quickSchemes, repetitionsError, schemeErrorPlace, schemeHint, trafficFields, trafficSummary,
} from '../src/editor.js';
import { DEFAULT_SCHEME } from '../src/schemes.js';

const fields = ['min', 'max', 'ratio', 'step', 'extents', 'budget'];

test('an error naming a field goes beside it, any other under the editor', () => {
  assert.deepEqual(schemeErrorPlace(null, fields), { field: null, fieldError: '', schemeError: '' });
  assert.deepEqual(schemeErrorPlace({ ranges: [] }, fields), { field: null, fieldError: '', schemeError: '' });
  assert.deepEqual(schemeErrorPlace({ error: 'Max must be at least min', field: 'max' }, fields),
    { field: 'max', fieldError: 'Max must be at least min', schemeError: '' });
  // A field the page has no input for, and a refusal that names none, go under the editor.
  assert.deepEqual(schemeErrorPlace({ error: 'bad seed', field: 'seed' }, fields), { field: null, fieldError: '', schemeError: 'bad seed' });
  assert.deepEqual(schemeErrorPlace({ error: 'the ladder is empty' }, fields), { field: null, fieldError: '', schemeError: 'the ladder is empty' });
});

test('the scheme hint counts buckets, predicts waste and names the requests the cache refuses', () => {
  const lad = { ranges: [{}, {}, {}], maxKey: 64, covered: 1200, expectedWaste: 1.234 };
  assert.equal(schemeHint(lad, 1200), '3 buckets over lengths 1–64 · predicted waste 1.23× for this traffic.');
  assert.equal(schemeHint(lad, 2000), '3 buckets over lengths 1–64 · predicted waste 1.23× for this traffic. ' +
    '800 of 2,000 requests are longer than 64: the cache will refuse them.');
  assert.equal(schemeHint({ ranges: [{}], maxKey: 8, covered: 5 }, 5), '1 bucket over lengths 1–8.');
  assert.equal(schemeHint({ error: 'bad' }, 5), '');
  assert.equal(schemeHint(null, 5), '');
});

test('the traffic summary gives count, range, median and p90; ignored entries are listed', () => {
  assert.equal(trafficSummary([]), '');
  assert.equal(trafficSummary([5, 1, 9, 3, 7, 2, 8, 4, 6, 10]), '10 requests · lengths 1–10 · median 6 · p90 10');
  assert.equal(trafficSummary([3]), '1 request · lengths 3–3 · median 3 · p90 3');
  assert.equal(problemsText([]), '');
  assert.equal(problemsText([{ reason: 'no lengths given' }]), 'no lengths given');
  assert.equal(problemsText([{ token: 'x', reason: 'not a number' }]), 'Ignored 1 entry: x (not a number)');
  assert.equal(problemsText([{ token: 'x', reason: 'not a number' }, { token: '0', reason: 'below 1' }]),
    'Ignored 2 entries: x (not a number), 0 (below 1)');
});

test('each traffic kind shows its own fields and label', () => {
  const groups = ['pasted', 'lognormal', 'generated'];
  const shown = (kind) => groups.filter((g) => trafficFields(kind).shown(g));
  assert.deepEqual(shown('lengths'), ['pasted']);
  assert.deepEqual(shown('text'), ['pasted']);
  assert.deepEqual(shown('lognormal'), ['lognormal', 'generated']);
  assert.deepEqual(shown('uniform'), ['generated']);
  assert.equal(trafficFields('text').textLabel, 'Text (each sentence is a request of its word count)');
  assert.equal(trafficFields('lengths').textLabel, 'Lengths (spaces, commas or new lines)');
});

test('repetitions are a whole number from 1 to 20', () => {
  for (const ok of [1, 7, 20]) assert.equal(repetitionsError(ok), '');
  for (const bad of [0, 21, 2.5, NaN, -1]) assert.equal(repetitionsError(bad), 'Repetitions must be a whole number from 1 to 20');
});

test('Add picks the first unused kind; Quick compare follows the traffic maximum', () => {
  assert.deepEqual(addedScheme([{ kind: 'pow2' }]), { ...DEFAULT_SCHEME, kind: 'one' });
  assert.equal(addedScheme([{ kind: 'one' }, { kind: 'pow2' }]).kind, 'optimal');
  assert.equal(addedScheme(['one', 'optimal', 'geometric', 'linear', 'pow2'].map((kind) => ({ kind }))).kind, 'pow2');
  const generated = quickSchemes({ kind: 'lognormal', max: 512 });
  assert.deepEqual(generated.map((s) => [s.kind, s.max]), [['pow2', 512], ['optimal', DEFAULT_SCHEME.max], ['one', 512]]);
  assert.equal(generated[1].budget, 6);
  assert.deepEqual(quickSchemes({ kind: 'lengths', max: 512 }).map((s) => s.max), [DEFAULT_SCHEME.max, DEFAULT_SCHEME.max, DEFAULT_SCHEME.max]);
  // Fresh objects: editing one scheme must not edit the defaults.
  generated[0].min = 1;
  assert.equal(DEFAULT_SCHEME.min, 8);
});
