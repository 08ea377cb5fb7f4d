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
/**
 * x cut to d decimals, not rounded, so that a figure judged against a goal never reads above
 * itself: a 1.2996x against a 1.3x goal shows 1.29x, MISSED (rounded, it read 1.30x, MISSED). The
 * 1e-9 keeps a value the float product puts just under a step (0.29 * 100 = 28.999...) on it.
 */
export const cut = (x, d) => (Math.floor(x * 10 ** d + 1e-9) / 10 ** d).toFixed(d);
export const ratio = (x) => (x == null || Number.isNaN(x) ? '-' : `${cut(x, 2)}x`);
export const sci = (x) => (x == null || Number.isNaN(x) ? '-' : x.toExponential(1));
