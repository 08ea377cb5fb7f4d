// SPDX-License-Identifier: Apache-2.0
// Results as files: JSON (everything: settings, lengths, each scheme's ladder, final stats(),
// repetition totals and latency percentiles) and CSV (one row per scheme). Pure functions of the
// run the page shows; main.js downloads them.

/** Mean and sample standard deviation (n - 1; 0 for one value) of a list, or nulls when empty. */
export function meanSd(xs) {
  if (!xs || xs.length === 0) return { mean: null, sd: null };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, sd };
}

/** "p50 0.84 · p90 1.2 · p99 31.5 ms" style text for a latency object, with a formatter. */
export function latencyText(latency, fmt) {
  if (!latency || latency.p50 == null) return '—';
  return `p50 ${fmt(latency.p50)} · p90 ${fmt(latency.p90)} · p99 ${fmt(latency.p99)}`;
}

/** One scheme of a run as a plain object (what both exports write). */
function schemeRecord(run, i) {
  const s = run.schemes[i];
  const r = run.results[i];
  const st = r && r.final ? r.stats : null;
  const { mean, sd } = meanSd(r && r.final ? r.repTotals : null);
  return {
    scheme: s.letter,
    label: s.label,
    spec: s.spec,
    error: s.error ?? null,
    ranges: s.ranges,
    expectedWaste: s.expectedWaste ?? null,
    finished: !!(r && r.final),
    refused: r ? r.refused : null,
    totalMs: r && r.final ? r.totalMs : null,
    repetitions: run.repetitions,
    repTotalsMs: r && r.final ? r.repTotals : null,
    totalMeanMs: mean,
    totalSdMs: sd,
    latencyMs: r && r.final ? r.latency : null,
    stats: st,
  };
}

/** The whole run as a JSON text. `meta` adds { version, isa, url, settings }. */
export function exportJson(run, meta) {
  return `${JSON.stringify({
    format: 'rungs-demo-results',
    version: 1,
    ...meta,
    status: run.status,
    model: run.model,
    activeExtent: run.active,
    repetitions: run.repetitions,
    lengths: run.lengths,
    schemes: run.schemes.map((_, i) => schemeRecord(run, i)),
  }, null, 2)}\n`;
}

export const CSV_COLUMNS = [
  'scheme', 'label', 'buckets', 'requests', 'refused', 'compiles', 'cache_hits', 'actual_rows', 'padded_rows',
  'waste', 'compile_ms', 'total_ms', 'repetitions', 'total_mean_ms', 'total_sd_ms', 'p50_ms', 'p90_ms',
  'p99_ms', 'arena_bytes', 'weight_bytes', 'error',
];

/** RFC 4180 quoting: fields with a comma, quote, CR or LF (or edge spaces) are quoted, quotes doubled. */
export function csvField(v) {
  if (v === null || v === undefined) return '';
  const text = String(v);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One row per scheme, CRLF line ends (RFC 4180). */
export function exportCsv(run) {
  const rows = run.schemes.map((_, i) => {
    const x = schemeRecord(run, i);
    const st = x.stats;
    return [
      x.scheme, x.label, x.ranges ? x.ranges.length : null, st ? st.runs : null, x.refused, st ? st.compiles : null,
      st ? st.hits : null, st ? st.actualRows : null, st ? st.paddedRows : null, st ? st.waste : null,
      st ? st.compileMs : null, x.totalMs, x.repetitions, x.totalMeanMs, x.totalSdMs,
      x.latencyMs ? x.latencyMs.p50 : null, x.latencyMs ? x.latencyMs.p90 : null, x.latencyMs ? x.latencyMs.p99 : null,
      st ? st.arenaBytes : null, st ? st.weightBytes : null, x.error,
    ];
  });
  return [CSV_COLUMNS, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}
