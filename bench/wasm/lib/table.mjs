// SPDX-License-Identifier: Apache-2.0
// Plain-text tables: a header row, a rule, right-aligned numbers, left-aligned text.

export function table(header, rows) {
  const cells = [header, ...rows].map((r) => r.map((c) => String(c)));
  const width = header.map((_, j) => Math.max(...cells.map((r) => (r[j] ?? '').length)));
  const numeric = header.map((_, j) => rows.every((r) => typeof r[j] === 'number' || /^[-+0-9.,x%e ]*$|^-$|^n\/a$/.test(String(r[j]))));
  const line = (r) => r.map((c, j) => (numeric[j] && j > 0 ? c.padStart(width[j]) : c.padEnd(width[j]))).join('  ').trimEnd();
  return [line(cells[0]), width.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export const fixed = (x, d = 1) => (x == null || Number.isNaN(x) ? '-' : x.toFixed(d));
export const ratio = (x) => (x == null || Number.isNaN(x) ? '-' : `${x.toFixed(2)}x`);
export const sci = (x) => (x == null || Number.isNaN(x) ? '-' : x.toExponential(1));
