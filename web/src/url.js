// SPDX-License-Identifier: Apache-2.0
// The page's settings in its URL query, so a view can be shared and a reload restores it:
// model, active (0/1), reps, sel (the scheme shown), schemes and traffic (JSON). Pure functions;
// main.js reads the query once at start and writes it (replaceState) as the settings change.
import { DEFAULT_SCHEME, KINDS } from './schemes.js';
import { PRESETS } from './traffic.js';

export const MAX_REPETITIONS = 20;
export const MAX_SCHEMES = 3;

/**
 * The settings a query holds, over `defaults` ({ model, active, repetitions, selected, schemes,
 * traffic }): each value that is missing or does not parse keeps its default. `models` lists the
 * model names the page has.
 */
export function settingsFromQuery(query, defaults, models) {
  const p = new URLSearchParams(query);
  const out = { ...defaults };
  const json = (k) => {
    try {
      return p.has(k) ? JSON.parse(p.get(k)) : null;
    } catch {
      return null;
    }
  };
  if (models.includes(p.get('model'))) out.model = p.get('model');
  if (p.get('active') === '1' || p.get('active') === '0') out.active = p.get('active') === '1';
  const reps = Number(p.get('reps'));
  if (p.has('reps') && Number.isInteger(reps) && reps >= 1 && reps <= MAX_REPETITIONS) out.repetitions = reps;
  const schemes = json('schemes');
  if (Array.isArray(schemes) && schemes.length >= 1 && schemes.length <= MAX_SCHEMES &&
      schemes.every((x) => x && typeof x === 'object' && !Array.isArray(x) && KINDS[x.kind])) {
    out.schemes = schemes.map((x) => ({ ...DEFAULT_SCHEME, ...x }));
  }
  const sel = Number(p.get('sel'));
  if (p.has('sel') && Number.isInteger(sel) && sel >= 0 && sel < out.schemes.length) out.selected = sel;
  else if (out.selected >= out.schemes.length) out.selected = 0;
  const traffic = json('traffic');
  if (traffic && typeof traffic === 'object' && PRESETS[traffic.kind]) out.traffic = { ...defaults.traffic, ...traffic };
  return out;
}

/**
 * The query for these settings, keeping other parameters of `query` (autorun). Only the pasted
 * text the traffic kind uses travels (the other box keeps its default).
 */
export function settingsToQuery(s, query = '') {
  const p = new URLSearchParams(query);
  p.set('model', s.model);
  p.set('active', s.active ? '1' : '0');
  p.set('reps', String(s.repetitions));
  p.set('sel', String(s.selected));
  p.set('schemes', JSON.stringify(s.schemes));
  const { lengthsText, text, ...rest } = s.traffic;
  const kind = s.traffic.kind;
  p.set('traffic', JSON.stringify(kind === 'lengths' ? { ...rest, lengthsText } : kind === 'text' ? { ...rest, text } : rest));
  return p.toString();
}
