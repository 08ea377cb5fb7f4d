// SPDX-License-Identifier: Apache-2.0
// The run's summary as plain data, with no page state: the run bar (status line, progress,
// request count), the four cards and the big waste figure of the shown scheme, and the notice
// under them. main.js writes these into the page; web/test/summary.test.mjs checks them in Node.
import { fmtBytes, fmtInt, fmtMs, fmtPct, fmtX } from './format.js';
import { latencyText } from './export.js';

/**
 * The run bar for `run` (null before the first run; `ready`: the module has loaded):
 * {status, max, value, valueText, count, stopDisabled}.
 */
export function runbarView(run, ready) {
  if (!run) {
    return { status: ready ? 'Ready: press Run' : 'Loading the WebAssembly module…', max: 1, value: 0, valueText: null, count: '', stopDisabled: true };
  }
  const n = run.lengths.length;
  const total = n * run.runnable.length * run.repetitions;
  const done = run.runnable.reduce((acc, i) => acc + (run.results[i] ? run.results[i].done : 0), 0);
  let status = '';
  if (run.status === 'running') {
    const cur = run.current >= 0 ? run.schemes[run.current] : null;
    const rep = cur ? Math.min(run.repetitions, 1 + Math.floor((run.results[run.current]?.done ?? 0) / Math.max(1, n))) : 0;
    const repNote = run.repetitions > 1 && cur ? ` (repetition ${rep} of ${run.repetitions})` : '';
    status = cur ? `Running scheme ${cur.letter} (${cur.label}) on ${run.model}${repNote}…` : `Loading ${run.model}…`;
  } else if (run.status === 'done') {
    status = `Done: ${fmtInt(n)} requests through ${run.runnable.length} ${run.runnable.length === 1 ? 'scheme' : 'schemes'} on ${run.model}` +
      (run.repetitions > 1 ? `, ${run.repetitions} times each` : '');
  } else if (run.status === 'stopped') {
    status = 'Stopped. Press Run to start again.';
  } else if (run.status === 'error') {
    status = run.message;
  }
  return {
    status, max: Math.max(1, total), value: done, valueText: `${done} of ${total} requests`,
    count: `${fmtInt(done)} / ${fmtInt(total)} requests`, stopDisabled: run.status !== 'running',
  };
}

/**
 * The hero and the cards for `view` ({scheme, result, lengths, run}): each figure as
 * {text, value} (value: the number behind the text, for tests and export; undefined: none),
 * with the line under it.
 */
export function cardsView(view) {
  const { scheme, result } = view;
  const s = result && result.stats;
  const hero = `${scheme.letter} · ${scheme.label}`;
  if (!s) {
    return {
      hero, color: scheme.color,
      waste: { text: scheme.expectedWaste != null ? fmtX(scheme.expectedWaste) : '—', value: null, muted: true },
      wasteSub: scheme.error ? 'scheme is invalid' : 'predicted from the ladder; run to measure',
      requests: { text: view.lengths.length ? fmtInt(view.lengths.length) : '—', sub: 'planned' },
      compiles: { text: scheme.ranges ? `0 / ${scheme.ranges.length}` : '—', sub: 'buckets compiled' },
      time: { text: '—', sub: '' },
      memory: { text: '—', sub: '' },
    };
  }
  const padding = s.paddedRows - s.actualRows;
  let wasteSub = `${fmtInt(s.paddedRows)} padded rows for ${fmtInt(s.actualRows)} real · ${fmtPct(s.paddedRows ? padding / s.paddedRows : 0)} padding`;
  if (view.run && view.run.active) wasteSub += ` · computed ${fmtX(s.computeWaste)}`;
  const mem = s.arenaBytes + s.weightBytes;
  return {
    hero, color: scheme.color,
    waste: { text: fmtX(s.waste), value: s.waste, muted: false },
    wasteSub,
    requests: {
      text: fmtInt(s.runs), value: s.runs,
      sub: result.refused ? `${fmtInt(result.refused)} refused (no bucket)` : `of ${fmtInt(view.lengths.length)} · ${fmtInt(s.hits)} cache hits`,
    },
    compiles: { text: `${fmtInt(s.compiles)} / ${scheme.ranges.length}`, value: s.compiles, sub: `${fmtMs(s.compileMs)} compiling` },
    time: {
      text: fmtMs(result.totalMs), value: result.totalMs,
      sub: `run ${fmtMs(s.runMs)} · compile ${fmtMs(s.compileMs)}` + (result.latency ? ` · per request ${latencyText(result.latency, fmtMs)}` : ''),
    },
    memory: { text: fmtBytes(mem), value: mem, sub: `arena ${fmtBytes(s.arenaBytes)} · weights ${fmtBytes(s.weightBytes)}` },
  };
}

/** The notice under the cards: a failed run, an invalid scheme, the requests no bucket took. */
export function noticeText(view) {
  const { result, scheme, run } = view;
  const notes = [];
  if (run && run.status === 'error') notes.push(run.message);
  if (scheme.error) notes.push(`Scheme ${scheme.letter} is invalid: ${scheme.error}`);
  if (result && result.refused > 0) {
    const keys = [...new Set(result.events.filter((e) => e.upper === null).map((e) => e.key))].sort((a, b) => a - b);
    const shownKeys = keys.slice(0, 8).join(', ') + (keys.length > 8 ? ', …' : '');
    const last = scheme.ranges[scheme.ranges.length - 1].end - 1;
    notes.push(`${fmtInt(result.refused)} ${result.refused === 1 ? 'request was' : 'requests were'} longer than the largest bucket (${last}) and refused: runPadded returned null and compiled nothing (lengths ${shownKeys}). They count in stats().outOfRange, not in the waste.`);
  }
  return notes.join(' ');
}
