// SPDX-License-Identifier: Apache-2.0
// Number formatting shared by the page and the charts.

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 12345 -> "12,345". */
export const fmtInt = (v) => int.format(v);

/** Waste factor: 1.40625 -> "1.41×". */
export const fmtX = (v) => (v == null || !Number.isFinite(v) ? '—' : `${v.toFixed(2)}×`);

/** Milliseconds, 3 significant figures under 100 ms, whole ms below 10 s, then seconds. */
export function fmtMs(v) {
  if (v == null || !Number.isFinite(v)) return '—';
  if (v < 1) return `${v.toFixed(2)} ms`;
  if (v < 100) return `${v.toPrecision(3)} ms`;
  if (v < 10000) return `${int.format(v)} ms`;
  return `${(v / 1000).toFixed(1)} s`;
}

/** Bytes in binary units: 1810432 -> "1.73 MiB". */
export function fmtBytes(v) {
  if (v == null || !Number.isFinite(v)) return '—';
  if (v < 1024) return `${v} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let x = v / 1024;
  let u = 0;
  while (x >= 1024 && u < units.length - 1) {
    x /= 1024;
    u++;
  }
  return `${x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0)} ${units[u]}`;
}

/** Percent: 0.2604 -> "26%". */
export const fmtPct = (v) => `${Math.round(v * 100)}%`;

/** Linear mix of two #rrggbb colours, t in [0, 1] towards b. */
export function mix(a, b, t) {
  const pa = [1, 3, 5].map((i) => parseInt(a.slice(i, i + 2), 16));
  const pb = [1, 3, 5].map((i) => parseInt(b.slice(i, i + 2), 16));
  return `#${pa.map((x, i) => Math.round(x + (pb[i] - x) * t).toString(16).padStart(2, '0')).join('')}`;
}
