// SPDX-License-Identifier: Apache-2.0
// The settings panel's words and choices as plain data, with no page state: where a scheme's error
// goes (beside its field or under the editor), the hint under the scheme editor, the traffic
// summary and the ignored entries, which traffic fields show, the repetitions check, and the
// schemes the Add and Quick compare buttons make. main.js writes these into the page and the
// state; web/test/editor.test.mjs checks them in Node.
import { fmtInt, fmtX } from './format.js';
import { DEFAULT_SCHEME } from './schemes.js';
import { describeProblems } from './traffic.js';
import { MAX_REPETITIONS } from './url.js';

/**
 * Where the selected scheme's error goes: `field` (one of `fields`) when the planner named a field
 * the page has an input for, else `schemeError` (the library's own refusal, under the editor).
 * `lad`: the plan's ladder of the scheme, or null before a plan.
 */
export function schemeErrorPlace(lad, fields) {
  if (!lad || !lad.error) return { field: null, fieldError: '', schemeError: '' };
  if (lad.field && fields.includes(lad.field)) return { field: lad.field, fieldError: lad.error, schemeError: '' };
  return { field: null, fieldError: '', schemeError: lad.error };
}

const plural = (n, word) => `${fmtInt(n)} ${word}${n === 1 ? '' : 's'}`;

/** The line under the scheme editor: its buckets, its predicted waste, and the requests it refuses. */
export function schemeHint(lad, requests) {
  if (!lad || !lad.ranges) return '';
  const parts = [`${plural(lad.ranges.length, 'bucket')} over lengths 1–${lad.maxKey}`];
  if (lad.expectedWaste != null) parts.push(`predicted waste ${fmtX(lad.expectedWaste)} for this traffic`);
  let hint = `${parts.join(' · ')}.`;
  const outside = requests - lad.covered;
  if (outside > 0) hint += ` ${fmtInt(outside)} of ${fmtInt(requests)} requests are longer than ${lad.maxKey}: the cache will refuse them.`;
  return hint;
}

/** The traffic's ignored entries (a lone message without a token, such as "no lengths", stands alone). */
export function problemsText(problems) {
  if (!problems.length) return '';
  const lone = problems.length === 1 && !problems[0].token;
  return `${lone ? '' : `Ignored ${problems.length} ${problems.length === 1 ? 'entry' : 'entries'}: `}${describeProblems(problems)}`;
}

/** "N requests · lengths a–b · median m · p90 p" for the planned lengths ('' for none). */
export function trafficSummary(lengths) {
  if (!lengths.length) return '';
  const sorted = [...lengths].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return `${plural(lengths.length, 'request')} · lengths ${sorted[0]}–${sorted[sorted.length - 1]} · median ${q(0.5)} · p90 ${q(0.9)}`;
}

/**
 * Which traffic fields a traffic kind shows: `shown(group)` for the groups the page marks with
 * data-traffic ('pasted', 'lognormal', anything else: the generated kinds' fields), and the label
 * of the pasted text box.
 */
export function trafficFields(kind) {
  const pasted = kind === 'lengths' || kind === 'text';
  return {
    shown: (group) => (group === 'pasted' ? pasted : group === 'lognormal' ? kind === 'lognormal' : !pasted),
    textLabel: kind === 'text' ? 'Text (each sentence is a request of its word count)' : 'Lengths (spaces, commas or new lines)',
  };
}

/** The repetitions field's message: '' when `n` is a whole number from 1 to MAX_REPETITIONS. */
export function repetitionsError(n) {
  return Number.isInteger(n) && n >= 1 && n <= MAX_REPETITIONS ? '' : `Repetitions must be a whole number from 1 to ${MAX_REPETITIONS}`;
}

/** The scheme Add appends: the first kind of a fixed order that no scheme uses yet (pow2 when all are). */
export function addedScheme(schemes) {
  const taken = new Set(schemes.map((s) => s.kind));
  const kind = ['one', 'optimal', 'geometric', 'linear', 'pow2'].find((k) => !taken.has(k)) ?? 'pow2';
  return { ...DEFAULT_SCHEME, kind };
}

/**
 * Quick compare's three schemes: powers of two and one bucket up to the traffic's maximum (the
 * default maximum for pasted traffic, which has none), and the optimal ladder of 6 buckets.
 */
export function quickSchemes(traffic) {
  const max = traffic.kind === 'lengths' || traffic.kind === 'text' ? DEFAULT_SCHEME.max : traffic.max;
  return [
    { ...DEFAULT_SCHEME, kind: 'pow2', max },
    { ...DEFAULT_SCHEME, kind: 'optimal', budget: 6 },
    { ...DEFAULT_SCHEME, kind: 'one', max },
  ];
}
