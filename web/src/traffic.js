// SPDX-License-Identifier: Apache-2.0
// Traffic: the request lengths (keys) a run sends through the cache. Presets are generated with a
// seed (the log-normal ones by the library's own ladder.lognormalTrace, so the CLI's
// `rungs trace lognormal` prints the same lengths); pasted lengths and pasted text are parsed here,
// and every token that cannot be a request is reported, never silently dropped.
//
// Pure functions; `lognormalTrace` is passed in so this file needs no wasm (the worker passes the
// module's ladder.lognormalTrace).

/** The longest request the demo accepts (a bigger bucket would make the browser compile for long). */
export const LENGTH_LIMIT = 2048;
/** The most requests one run takes. */
export const COUNT_LIMIT = 20000;

export const PRESETS = {
  lognormal: 'Chat-like (log-normal)',
  uniform: 'Uniform',
  bimodal: 'Bimodal (short chat + long documents)',
  lengths: 'Pasted lengths',
  text: 'Pasted text (a sentence is a request)',
};

// mulberry32: a tiny seeded generator, enough for reproducible demo traffic.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function checkInt(name, v, lo, hi) {
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw new RangeError(`${name} must be a whole number from ${lo} to ${hi}, got ${Number.isNaN(v) ? 'nothing' : v}`);
  }
}

/**
 * Lengths of a preset. spec: { kind, count, max, seed, median, sigma }.
 * Throws RangeError (shown on the page) for a parameter out of range.
 */
export function presetLengths(spec, lognormalTrace) {
  const { kind, count, max, seed } = spec;
  checkInt('Requests', count, 1, COUNT_LIMIT);
  checkInt('Longest request', max, 1, LENGTH_LIMIT);
  checkInt('Seed', seed, 0, 2 ** 31 - 1);
  if (kind === 'uniform') {
    const r = rng(seed);
    return Array.from({ length: count }, () => 1 + Math.floor(r() * max));
  }
  if (kind === 'lognormal') {
    const median = spec.median ?? 24;
    const sigma = spec.sigma ?? 0.8;
    if (!(median >= 1 && median <= max)) throw new RangeError(`Median must be from 1 to the longest request (${max}), got ${median}`);
    if (!(sigma > 0 && sigma <= 3)) throw new RangeError(`Sigma must be above 0 and at most 3, got ${sigma}`);
    return Array.from(lognormalTrace(median, count, max, seed, sigma));
  }
  if (kind === 'bimodal') {
    // 70% short chat turns around 12 tokens, 30% long documents around 60% of the longest request.
    const short = lognormalTrace(Math.min(12, max), count, max, seed, 0.5);
    const long = lognormalTrace(Math.max(1, Math.round(max * 0.6)), count, max, seed + 1, 0.25);
    const r = rng(seed ^ 0x9e3779b9);
    return Array.from({ length: count }, (_, i) => (r() < 0.7 ? short[i] : long[i]));
  }
  throw new RangeError(`unknown traffic preset '${kind}'`);
}

/**
 * Pasted lengths: whole numbers separated by spaces, commas, semicolons or new lines.
 * Returns { lengths, problems } where problems lists every token that is not a length from 1 to
 * LENGTH_LIMIT: { token, reason }.
 */
export function parseLengths(text) {
  const lengths = [];
  const problems = [];
  for (const token of String(text).split(/[\s,;]+/)) {
    if (token === '') continue;
    if (!/^[+-]?\d+(\.\d+)?$/.test(token)) {
      problems.push({ token, reason: 'not a number' });
      continue;
    }
    const n = Number(token);
    if (!Number.isInteger(n)) problems.push({ token, reason: 'not a whole number' });
    else if (n < 1) problems.push({ token, reason: 'below 1' });
    else if (n > LENGTH_LIMIT) problems.push({ token, reason: `above the demo's limit of ${LENGTH_LIMIT}` });
    else lengths.push(n);
  }
  if (lengths.length > COUNT_LIMIT) {
    problems.push({ token: `${lengths.length - COUNT_LIMIT} more`, reason: `past the first ${COUNT_LIMIT} requests` });
    lengths.length = COUNT_LIMIT;
  }
  return { lengths, problems };
}

/**
 * Pasted text: each sentence (ended by . ! ? or a blank line) becomes one request whose length is
 * its word count. Returns { lengths, problems } like parseLengths.
 */
export function textLengths(text) {
  const lengths = [];
  const problems = [];
  const sentences = String(text)
    .split(/(?<=[.!?])\s+|\n\s*\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const s of sentences) {
    const words = s.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
    if (words === 0) continue;
    if (words > LENGTH_LIMIT) {
      problems.push({ token: `${s.slice(0, 24)}…`, reason: `${words} words, above the demo's limit of ${LENGTH_LIMIT}` });
      continue;
    }
    lengths.push(words);
  }
  if (lengths.length > COUNT_LIMIT) lengths.length = COUNT_LIMIT;
  return { lengths, problems };
}

/** { lengths, problems } for any traffic spec; a bad preset parameter becomes a problem too. */
export function makeTraffic(spec, lognormalTrace) {
  if (spec.kind === 'lengths' || spec.kind === 'text') {
    const out = spec.kind === 'lengths' ? parseLengths(spec.text ?? '') : textLengths(spec.text ?? '');
    // An empty (or whitespace-only) box has no bad token to name: say what is missing.
    if (out.lengths.length === 0 && out.problems.length === 0) {
      out.problems.push({
        token: '',
        reason: spec.kind === 'lengths'
          ? 'The box is empty: paste request lengths (whole numbers from 1 to 2048), e.g. 12 40 7 128'
          : 'The box has no sentence with words in it: paste some text, each sentence becomes a request',
      });
    }
    return out;
  }
  try {
    return { lengths: presetLengths(spec, lognormalTrace), problems: [] };
  } catch (e) {
    if (!(e instanceof RangeError) && !(e instanceof Error && e.code)) throw e;
    return { lengths: [], problems: [{ token: '', reason: e.message }] };
  }
}

/** A short human summary of problems: "3 ignored: 0 (below 1), abc (not a number), …". */
export function describeProblems(problems, shown = 6) {
  if (problems.length === 0) return '';
  const items = problems.slice(0, shown).map((p) => (p.token ? `${p.token} (${p.reason})` : p.reason));
  const more = problems.length > shown ? `, and ${problems.length - shown} more` : '';
  return `${items.join(', ')}${more}`;
}
