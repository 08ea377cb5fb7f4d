// SPDX-License-Identifier: Apache-2.0
// Bucket schemes: a plain description the page edits ({ kind, min, max, ... }) and the ladder it
// stands for, made by the library's own ladder functions (rungs::ladder through the npm package).
import { LENGTH_LIMIT } from './traffic.js';

export const KINDS = {
  pow2: { label: 'Power of two', params: ['min', 'max'] },
  geometric: { label: 'Geometric', params: ['min', 'max', 'ratio'] },
  linear: { label: 'Linear', params: ['min', 'max', 'step'] },
  list: { label: 'List of extents', params: ['extents'] },
  optimal: { label: 'Optimal for this traffic', params: ['budget'] },
  one: { label: 'One big bucket', params: ['max'] },
};

export const DEFAULT_SCHEME = { kind: 'pow2', min: 8, max: 256, ratio: 1.5, step: 32, extents: '16, 32, 64, 128, 256', budget: 6, head: false };

/** "pow2 8..256", "optimal ≤6", "one 256", with "+head" when the {1,2,4} head is on. */
export function schemeLabel(s) {
  const head = s.head ? ' +head' : '';
  switch (s.kind) {
    case 'pow2': return `pow2 ${s.min}–${s.max}${head}`;
    case 'geometric': return `geometric ×${s.ratio} ${s.min}–${s.max}${head}`;
    case 'linear': return `linear +${s.step} ${s.min}–${s.max}${head}`;
    case 'list': return `list ${listText(s.extents)}${head}`;
    case 'optimal': return `optimal ≤${s.budget}${head}`;
    case 'one': return `one bucket ${s.max}${head}`;
    default: return s.kind;
  }
}

// A label never throws: a list that does not parse is shown as typed (the error is shown beside
// the field, from buildLadder).
function listText(text) {
  try {
    return parseExtents(text).join(',');
  } catch {
    return String(text ?? '').trim().replace(/[\s,;]+/g, ',');
  }
}

/** A RangeError about one setting: `field` names the input it belongs beside (min, extents, ...). */
function fieldError(field, message) {
  const e = new RangeError(message);
  e.field = field;
  return e;
}

/** "16, 32 64" -> [16, 32, 64]; a token that is not a whole number throws, naming it. */
export function parseExtents(text) {
  const out = [];
  for (const token of String(text ?? '').split(/[\s,;]+/)) {
    if (token === '') continue;
    const n = Number(token);
    if (!/^\d+$/.test(token) || !Number.isSafeInteger(n)) throw fieldError('extents', `extent '${token}' is not a whole number`);
    out.push(n);
  }
  return out;
}

function need(field, name, v, lo, hi, integer = true) {
  if (typeof v !== 'number' || Number.isNaN(v) || (integer && !Number.isInteger(v)) || v < lo || v > hi) {
    throw fieldError(field, `${name} must be ${integer ? 'a whole number' : 'a number'} from ${lo} to ${hi}, got ${Number.isNaN(v) || v === undefined ? 'nothing' : v}`);
  }
}

/**
 * The ladder ([{start, end}]) of a scheme. `lengths` is the traffic (optimal fits to it).
 * Throws an Error whose message is fit for the page: the demo's own limits as RangeError, the
 * library's refusals (rungs errors, with .code) as they come.
 */
export function buildLadder(s, ladder, lengths) {
  let ranges;
  switch (s.kind) {
    case 'pow2':
    case 'geometric':
    case 'linear':
      need('min', 'Smallest extent', s.min, 1, LENGTH_LIMIT);
      need('max', 'Largest extent', s.max, 1, LENGTH_LIMIT);
      if (s.kind === 'pow2') ranges = ladder.powerOfTwo(s.min, s.max, s.head);
      if (s.kind === 'geometric') {
        need('ratio', 'Ratio', s.ratio, 1.01, 16, false);
        ranges = ladder.geometric(s.min, s.max, s.ratio, s.head);
      }
      if (s.kind === 'linear') {
        need('step', 'Step', s.step, 1, LENGTH_LIMIT);
        ranges = ladder.linear(s.min, s.max, s.step, s.head);
      }
      break;
    case 'list': {
      const extents = parseExtents(s.extents);
      if (extents.length === 0) throw fieldError('extents', 'List the extents, e.g. 16, 32, 64, 256');
      if (extents.length > 64) throw fieldError('extents', `At most 64 extents, got ${extents.length}`);
      for (const e of extents) need('extents', 'Each extent', e, 1, LENGTH_LIMIT);
      ranges = ladder.fromExtents(extents, s.head);
      break;
    }
    case 'optimal': {
      need('budget', 'Bucket budget', s.budget, 1, 32);
      if (lengths.length === 0) throw new RangeError('Optimal needs traffic to fit: there are no request lengths');
      ranges = ladder.optimal(lengths, s.budget);
      if (s.head) ranges = ladder.withHead(ranges);
      break;
    }
    case 'one':
      need('max', 'Extent', s.max, 1, LENGTH_LIMIT);
      ranges = ladder.fromExtents([s.max], s.head);
      break;
    default:
      throw new RangeError(`unknown scheme kind '${s.kind}'`);
  }
  if (ranges.length > 400) throw new RangeError(`${ranges.length} buckets is more than this page draws (400): use a bigger step or ratio`);
  return ranges;
}

/** Index of the bucket holding key, or -1 (binary search over sorted, non-overlapping ranges). */
export function bucketOf(ranges, key) {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (key < ranges[mid].start) hi = mid - 1;
    else if (key >= ranges[mid].end) lo = mid + 1;
    else return mid;
  }
  return -1;
}
