/**
 * The terminal table of a simulate run: the verdict first (which variant
 * wins each KEP measurement per scenario, report-verdict.ts), then one block
 * per scenario, one row per variant, the KEP's four measurements plus
 * force-closes, 410s, re-lists, throughput and main-thread catch-up share.
 */
import { fmt } from './svg.js';
import { headline, type SimReport } from './report.js';
import { simVerdicts, verdictCells, verdictHeaders, verdictKeys } from './report-verdict.js';

/** The verdict rows as aligned text. */
function renderVerdict(report: SimReport): string {
  const vs = simVerdicts(report);
  if (vs.length === 0) return '';
  const keys = verdictKeys(vs);
  const rows = [verdictHeaders(keys), ...vs.map((v) => verdictCells(v, keys))];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = ['verdict: which variant wins each KEP measurement, per scenario (this run)'];
  for (const r of rows)
    lines.push(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  return lines.join('\n') + '\n';
}

const COLUMNS: [string, number][] = [
  ['variant', 30],
  ['healthy p99/max ms', 19],
  ['slow p99 ms', 11],
  ['enc/ev', 7],
  ['resync p50/p99 s', 17],
  ['recover p50/p99 s', 17],
  ['served≤ passes', 15],
  ['main % mod/real', 16],
  ['f-close', 8],
  ['410', 6],
  ['relist', 7],
  ['in/s', 7],
  ['out/s', 8],
  ['run s', 6],
];

function opt(v: number | null, digits = 2): string {
  return v === null ? '-' : v === 0 ? '0' : v < 0.01 ? v.toExponential(0) : v.toFixed(digits);
}

function pct(v: number): string {
  return v === 0 ? '0' : v < 0.001 ? '<0.1' : (v * 100).toFixed(1);
}

export function renderTable(report: SimReport): string {
  const lines: string[] = [];
  const labelWidth = Math.max(
    COLUMNS[0]![1],
    ...report.runs.flatMap((r) => r.results.map((x) => x.variant.label.length + 1)),
  );
  const widths = COLUMNS.map(([, w], i) => (i === 0 ? labelWidth : w));
  const verdict = renderVerdict(report);
  if (verdict !== '') lines.push(verdict.trimEnd());
  for (const run of report.runs) {
    lines.push('');
    lines.push(
      `${run.name}  (${run.durationS} s + ${run.drainS} s drain; writes ${run.writeRates}; ${run.watchers.map((w) => `${w.count} ${w.name}`).join(', ')})`,
    );
    lines.push(COLUMNS.map(([h], i) => h.padEnd(widths[i]!)).join(' '));
    for (const r of run.results) {
      const h = headline(r);
      const served =
        h.firstServedMax === null
          ? '-'
          : `${h.firstServedMax}/${h.firstServedNextToLaggardsMax ?? '-'}/${h.serviceGapMax ?? '-'}`;
      const cells = [
        h.variant,
        `${fmt(h.healthyP99)}/${fmt(h.healthyMax)}`,
        fmt(h.slowP99),
        h.encPerEvent.toFixed(3),
        `${opt(h.resyncP50)}/${opt(h.resyncP99)}`,
        `${opt(h.recoveryP50)}/${opt(h.recoveryP99)}`,
        served,
        `${pct(h.mainShareModelled)}/${pct(h.mainShareReal)}`,
        String(h.forceCloses),
        String(h.expired410),
        String(h.relists),
        fmt(h.eventsInPerS),
        fmt(h.pushesOutPerS),
        h.runS.toFixed(1),
      ];
      lines.push(cells.map((c, i) => c.padEnd(widths[i]!)).join(' '));
    }
  }
  lines.push('');
  lines.push(
    'served≤ passes: worst passes-with-room until first served / same for watchers that stalled next to long-standing laggards / worst gap between services.',
  );
  lines.push(
    'main %: catch-up share of the main thread (modelled virtual time / real wall time). resync: stall end -> synced; recover: stall end -> backlog drained.',
  );
  return lines.join('\n') + '\n';
}
