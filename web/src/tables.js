// SPDX-License-Identifier: Apache-2.0
// The result tables' HTML, built from plain data with no page state: the compare table (one row
// a scheme), the bucket table and its selector, and the selected bucket's report. main.js puts
// the strings into the page; web/test/tables.test.mjs checks them in Node.
import { fmtBytes, fmtInt, fmtMs, fmtX } from './format.js';
import { meanSd } from './export.js';

/** Text safe inside HTML elements and double- or single-quoted attributes. */
export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

/** A bucket's keys: "7" for one length, "5–8" for [5, 9). */
export const rangeText = (r) => (r.end - r.start === 1 ? `${r.start}` : `${r.start}–${r.end - 1}`);

/** One compare-table row per scheme of a run (`run.schemes`, `run.results`). */
export function compareRows(run) {
  if (!run) return [];
  return run.schemes.map((s, i) => {
    const r = run.results[i];
    const st = r && r.stats;
    const fin = r && r.final;
    const totals = fin ? meanSd(r.repTotals) : null;
    return {
      i, letter: s.letter, label: s.label, color: s.color, error: s.error,
      buckets: s.ranges ? s.ranges.length : null,
      compiles: st ? st.compiles : null,
      refused: r ? r.refused : null,
      actualRows: st ? st.actualRows : null,
      paddedRows: st ? st.paddedRows : null,
      waste: st ? st.waste : null,
      computeWaste: st ? st.computeWaste : null,
      compileMs: st ? st.compileMs : null,
      totalMs: fin ? r.totalMs : null,
      arena: st ? st.arenaBytes : null,
      weights: st ? st.weightBytes : null,
      memory: st ? st.arenaBytes + st.weightBytes : null,
      totalMean: totals ? totals.mean : null,
      totalSd: totals ? totals.sd : null,
      p50: fin && r.latency ? r.latency.p50 : null,
      p90: fin && r.latency ? r.latency.p90 : null,
      p99: fin && r.latency ? r.latency.p99 : null,
      final: !!fin,
    };
  });
}

/**
 * The compare table's head and body for `rows` (compareRows). Columns: "Computed" only with
 * active extent (it equals the waste otherwise), "Refused" only when a scheme refused requests,
 * the mean and sd of the totals only with more than one repetition. A cell not measured yet
 * shows "…"; every cell carries data-field and data-value (the raw number) for tests and export.
 */
export function compareTable(rows, { active, repetitions, selected }) {
  const refused = rows.some((r) => r.refused > 0);
  const cols = [
    ['compiles', 'Compiled', (v, r) => `${fmtInt(v)} / ${fmtInt(r.buckets)}`],
    ...(refused ? [['refused', 'Refused', fmtInt]] : []),
    ['actualRows', 'Real rows', fmtInt], ['paddedRows', 'Padded rows', fmtInt], ['waste', 'Waste', fmtX],
    ...(active ? [['computeWaste', 'Computed', fmtX]] : []),
    ['compileMs', 'Compile', fmtMs], ['totalMs', repetitions > 1 ? 'Total (1st)' : 'Total', fmtMs],
    ...(repetitions > 1 ? [['totalMean', `Total, mean ± sd of ${repetitions}`, (v, r) => `${fmtMs(v)} ± ${fmtMs(r.totalSd)}`]] : []),
    ['p50', 'p50', fmtMs], ['p90', 'p90', fmtMs], ['p99', 'p99', fmtMs],
    ['memory', 'Memory', fmtBytes],
  ];
  const head = `<tr><th scope="col">Scheme</th>${cols.map(([, h]) => `<th scope="col">${h}</th>`).join('')}</tr>`;
  const name = (r) => `<td class="scheme-name" title="${escapeHtml(r.label)}"><span class="swatch" style="background:${r.color}"></span>${r.letter} · ${escapeHtml(r.label)}</td>`;
  const cell = (r, [field, , f]) => {
    const v = r[field];
    const title = field === 'memory' && v != null ? ` title="arena ${fmtBytes(r.arena)} + weights ${fmtBytes(r.weights)}"`
      : /^p\d\d$/.test(field) ? ` title="${field} of the per-request latency (runPadded) over every request of every repetition"` : '';
    return `<td data-field="${field}" data-value="${v == null ? '' : v}"${title}>${v == null ? '…' : f(v, r)}</td>`;
  };
  const body = rows.map((r) => (r.error
    ? `<tr data-scheme="${r.i}">${name(r)}<td colspan="${cols.length}" class="muted" style="text-align:left">invalid: ${escapeHtml(r.error)}</td></tr>`
    : `<tr data-scheme="${r.i}" class="${r.i === selected ? 'selected' : ''}">${name(r)}${cols.map((c) => cell(r, c)).join('')}</tr>`)).join('');
  return { head, body };
}

/** The bucket selector's options: every bucket, with its requests once it ran. */
export function bucketOptions(ranges, buckets) {
  return ranges.map((r, i) => {
    const b = buckets && buckets[i];
    return `<option value="${i}">${rangeText(r)} → ${r.end - 1}${b ? ` · ${fmtInt(b.runs)} requests${b.compiled ? '' : ' · not compiled'}` : ''}</option>`;
  }).join('');
}

/** The bucket to show when the user picked none: the busiest so far, else the first; -1 for none. */
export function defaultBucket(ranges, buckets) {
  if (!ranges.length) return -1;
  let best = 0;
  if (buckets) buckets.forEach((b, i) => { if (b.runs > buckets[best].runs) best = i; });
  return best;
}

/** The bucket table's body: one row a bucket, "not run yet" before its stats exist. */
export function bucketTableRows(ranges, buckets, selected) {
  const cell = (v, f, field) => `<td data-field="${field}" data-value="${v}">${f(v)}</td>`;
  return ranges.map((r, i) => {
    const b = buckets && buckets[i];
    if (!b) return `<tr data-bucket="${i}"><td>${rangeText(r)}</td><td>${r.end - 1}</td><td colspan="9" class="muted" style="text-align:left">not run yet</td></tr>`;
    return `<tr data-bucket="${i}" class="${i === selected ? 'selected' : ''}"><td data-field="range">${rangeText(r)}</td>${cell(b.upper, fmtInt, 'upper')}` +
      cell(b.runs, fmtInt, 'runs') + cell(b.hits, fmtInt, 'hits') + cell(b.compiles, fmtInt, 'compiles') +
      cell(b.actualRows, fmtInt, 'actualRows') + cell(b.paddedRows, fmtInt, 'paddedRows') +
      `<td data-field="waste">${b.actualRows ? fmtX(b.paddedRows / b.actualRows) : '—'}</td>` +
      cell(b.compileMs, fmtMs, 'compileMs') + cell(b.runMs, fmtMs, 'runMs') + cell(b.arenaBytes, fmtBytes, 'arenaBytes') + '</tr>';
  }).join('');
}

/**
 * The report of bucket `range` (its stats `bucket` or null, its compiled graph's `report` or
 * null): facts, the fused kernels by kind and the passes. `schemeError` explains a missing range.
 */
export function bucketReport(range, bucket, report, schemeError) {
  if (!range) return `<p class="empty">${schemeError ? 'The scheme is invalid.' : 'No bucket selected.'}</p>`;
  const b = bucket;
  const facts = [
    ['Keys', `${rangeText(range)} (${fmtInt(range.end - range.start)} lengths)`],
    ['Compiles at', `${fmtInt(range.end - 1)} rows`],
  ];
  if (b) {
    facts.push(
      ['Requests', `${fmtInt(b.runs)} (${fmtInt(b.hits)} cache hits, ${fmtInt(b.compiles)} compile)`],
      ['Rows', `${fmtInt(b.actualRows)} real → ${fmtInt(b.paddedRows)} padded${b.actualRows ? ` (${fmtX(b.paddedRows / b.actualRows)})` : ''}`],
      ['Computed rows', `${fmtInt(b.computedRows)}${b.activeRuns ? ` (${fmtInt(b.activeRuns)} active-extent runs)` : ''}`],
      ['Compile', b.compiled ? fmtMs(b.compileMs) : 'not compiled: no request needed it'],
      ['Run', b.runs ? `${fmtMs(b.runMs)} total · ${fmtMs(b.runMs / b.runs)} per request` : '—'],
      ['Arena', b.compiled ? fmtBytes(b.arenaBytes) : '—'],
      ['Params', b.compiled ? fmtBytes(b.paramBytes) : '—'],
    );
    if (b.activeSupported !== null) facts.push(['Active extent', b.activeSupported ? 'supported' : `not supported: ${b.activeReason}`]);
  } else {
    facts.push(['Status', 'not run yet']);
  }
  const dl = `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v)}</dd>`).join('')}</dl>`;
  // Two columns: the facts with the kernels, and the passes (one column on narrow screens).
  if (!report) {
    const why = b && b.compiled
      ? 'The compiled graph\'s report (passes, fused kernels) appears when this scheme finishes.'
      : 'Nothing compiled here yet: a bucket compiles the first time a request needs it.';
    return `<div class="stack">${dl}</div><div><p class="empty">${why}</p></div>`;
  }
  const counts = new Map();
  for (const k of report.kernels) counts.set(k.kernel, (counts.get(k.kernel) ?? 0) + 1);
  const kernels = [...counts.entries()].sort((x, y) => y[1] - x[1]);
  const kernelList = `<div><h3>Fused kernels (${report.kernels.length} nodes, ${kernels.length} kinds)</h3><ul class="kernels">` +
    kernels.map(([k, n]) => `<li><span>${escapeHtml(k)}</span><span>×${n}</span></li>`).join('') + '</ul></div>';
  const passes = `<div><h3>Passes (compile ${fmtMs(report.compileMs)}, arena ${fmtBytes(report.arenaBytes)}, intermediates ${fmtBytes(report.intermediateBytes)})</h3>` +
    '<div class="table-wrap"><table class="passes"><thead><tr><th scope="col">Pass</th><th scope="col">Nodes</th><th scope="col">Time</th></tr></thead><tbody>' +
    report.passes.map((p) => `<tr><td>${escapeHtml(p.name)}</td><td class="${p.changed ? 'changed' : ''}">${p.nodesBefore} → ${p.nodesAfter}</td><td>${fmtMs(p.ms)}</td></tr>`).join('') +
    '</tbody></table></div></div>';
  return `<div class="stack">${dl}${kernelList}</div>${passes}`;
}
