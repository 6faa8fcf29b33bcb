/**
 * Plain-text tables for the terminal (also reused as markdown in the README
 * of a run): right-aligned numbers, a header rule, and compact number
 * formatting (3 significant digits, k/M suffixes for large counts).
 */

export type Cell = string | number;

/** A number to about 3 significant digits; large values get k/M. */
export function fmt(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return '-';
  const a = Math.abs(x);
  if (a >= 1e7) return `${(x / 1e6).toFixed(a >= 1e8 ? 0 : 1)}M`;
  if (a >= 1e5) return `${(x / 1e3).toFixed(a >= 1e6 ? 0 : 1)}k`;
  if (a >= 100 || x === 0 || Number.isInteger(x)) return x.toFixed(0);
  return x.toPrecision(digits);
}

/** A table as aligned text lines (markdown pipe format). */
export function renderTable(headers: string[], rows: Cell[][]): string {
  const text = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const line = (cells: string[]): string =>
    '| ' + cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, i) => (numeric[i] ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|';
  return [line(headers), rule, ...text.map(line)].join('\n');
}

/** Print a titled table to stdout. */
export function printTable(title: string, headers: string[], rows: Cell[][]): void {
  console.log(`\n### ${title}\n`);
  console.log(rows.length === 0 ? '(no rows)' : renderTable(headers, rows));
}
