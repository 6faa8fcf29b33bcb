/**
 * The HTML report of a simulate run: one self-contained file (inline CSS and
 * SVG drawn here, no scripts, no external resources). Per scenario: the
 * headline table, latency tails per variant (healthy and slow watchers:
 * the share of deliveries slower than x, log-log, so the tail that decides
 * p99 and max is visible instead of a CDF flat at 1 past the first bucket),
 * resync and recovery time against read rate (and write rate when the
 * scenario varies it; the report-level chart compares scenarios), the
 * passes-until-served histograms (all newly unsynced watchers, and those
 * that stalled next to long-standing laggards), the main-thread catch-up
 * share, and the unsynced population over time. The page opens with the
 * verdict table (report-verdict.ts): which variant wins each KEP measurement
 * in each scenario, by what ratio, and beta against alpha.
 */
import { headline, type ScenarioRun, type SimReport } from './report.js';
import { simVerdicts, verdictCells, verdictHeaders, verdictKeys } from './report-verdict.js';
import type { SimResult } from './result.js';
import { PALETTE, barChart, escapeXml, fmt, lineChart, type Series } from './svg.js';

const UNLIMITED_X = 1e6;

const CSS = `body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-bottom:1px solid #ddd;padding-bottom:4px}
p.desc{color:#444;max-width:900px}table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{border:1px solid #eee}
svg .title{font-size:13px;font-weight:600}svg .note{font-size:11px;fill:#666}svg .tick{font-size:10px;fill:#555}
svg .label{font-size:11px;fill:#333}svg .legend{font-size:10px;fill:#333}svg .axis{stroke:#333}svg .grid{stroke:#eee}
.small{font-size:12px;color:#555}`;

export function renderHtml(report: SimReport): string {
  const parts: string[] = [];
  parts.push(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>watchcache simulate</title><style>${CSS}</style></head><body>`,
  );
  parts.push(`<h1>watchcache simulate: KEP-6268 measurements</h1>`);
  parts.push(
    `<p class="small">Command: <code>${escapeXml(report.command)}</code>${report.sweep === null ? '' : ` · sweep ${escapeXml(report.sweep.param)} = ${escapeXml(report.sweep.values.join(', '))}`}. The real engine (MemoryStore + WatchCache) runs under virtual time; latencies are virtual receipt time minus write time. Only sync passes have a modelled cost (alpha charges it to the main thread, beta to its worker); the live path's own cost is not modelled, so a healthy watcher's latency shows only the waits that passes and off mode's blocking put in front of it. Main-thread share: modelled pass time / virtual time, and measured catch-up ms / wall time of the run.</p>`,
  );
  parts.push(verdictTable(report));
  const across = writeRateAcrossScenarios(report);
  if (across !== '') parts.push(`<div class="charts">${across}</div>`);
  for (const run of report.runs) parts.push(renderScenario(run));
  parts.push('</body></html>');
  return parts.join('\n');
}

function verdictTable(report: SimReport): string {
  const vs = simVerdicts(report);
  if (vs.length === 0) return '';
  const keys = verdictKeys(vs);
  const head = verdictHeaders(keys);
  const rows = vs.map((v) => verdictCells(v, keys));
  return `<h2>Verdict: which variant wins each KEP measurement, per scenario (this run)</h2><table><tr>${head.map((x) => `<th>${escapeXml(x)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((x) => `<td>${escapeXml(x)}</td>`).join('')}</tr>`).join('')}</table>`;
}

/** Mode (or variant label) -> the color its series uses in every chart of the page. */
function labelColors(report: SimReport): Map<string, string> {
  const m = new Map<string, string>();
  for (const run of report.runs)
    run.results.forEach((r, i) => m.has(r.variant.label) || m.set(r.variant.label, color(i)));
  return m;
}

/**
 * Resync and recovery time against the write rate across the scenarios of
 * the run: a scenario writes at one rate, so the per-scenario chart has one
 * x value; across scenarios the rates differ. One point per (scenario,
 * variant): the p50 of its episodes at that write rate.
 */
function writeRateAcrossScenarios(report: SimReport): string {
  const colors = labelColors(report);
  const charts: string[] = [];
  for (const field of ['resyncMs', 'recoveryMs'] as const) {
    const byLabel = new Map<string, [number, number][]>();
    const rates = new Set<number>();
    for (const run of report.runs) {
      for (const r of run.results) {
        const byRate = new Map<number, number[]>();
        for (const e of r.episodes.records) {
          const y = e[field];
          if (y === null) continue;
          let l = byRate.get(e.writeRate);
          if (l === undefined) byRate.set(e.writeRate, (l = []));
          l.push(y);
        }
        for (const [rate, ys] of byRate) {
          ys.sort((a, b) => a - b);
          const p50 = ys[Math.min(ys.length - 1, Math.ceil(ys.length / 2) - 1)]!;
          rates.add(rate);
          let pts = byLabel.get(r.variant.label);
          if (pts === undefined) byLabel.set(r.variant.label, (pts = []));
          pts.push([rate, Math.max(p50, 1) / 1000]);
        }
      }
    }
    if (rates.size < 2) continue;
    const series: Series[] = [...byLabel].map(([label, pts]) => ({
      name: label,
      color: colors.get(label) ?? color(0),
      points: pts.sort((a, b) => a[0] - b[0]),
      kind: 'scatter',
      marker: label.startsWith('off') ? 'square' : 'circle',
    }));
    charts.push(
      lineChart({
        title: `${field === 'resyncMs' ? 'Resync' : 'Recovery'} time vs write rate, every scenario of this run`,
        note: 'one point per scenario and variant: the p50 of its stall episodes',
        x: { label: 'write rate at stall end (events/s)', log: true },
        y: { label: 'seconds (log)', log: true },
        series,
      }),
    );
  }
  return charts.join('');
}

function color(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

function renderScenario(run: ScenarioRun): string {
  const out: string[] = [];
  out.push(`<h2>${escapeXml(run.name)}</h2>`);
  if (run.description !== '') out.push(`<p class="desc">${escapeXml(run.description)}</p>`);
  out.push(
    `<p class="small">${run.durationS} s of writes (${escapeXml(run.writeRates)}) + ${run.drainS} s drain, seed ${run.seed}. Watchers: ${escapeXml(run.watchers.map((w) => `${w.count} ${w.name} (${w.selector}, read ${w.readRate}/s${w.episodes > 0 ? `, ${w.episodes} episode${w.episodes > 1 ? 's' : ''}` : ''})`).join('; '))}.</p>`,
  );
  out.push(table(run.results));
  const charts: string[] = [];
  charts.push(tailChart(run.results, 'healthy', 'Delivery latency tail: healthy watchers'));
  charts.push(tailChart(run.results, 'slow', 'Delivery latency tail: slow / stalled watchers'));
  charts.push(episodeChart(run.results, 'resyncMs', 'readRate', 'Resync time vs read rate (stall end → synced)'));
  charts.push(
    episodeChart(run.results, 'recoveryMs', 'readRate', 'Recovery time vs read rate (stall end → backlog drained)'),
  );
  // Against the write rate only when this scenario's episodes saw more than one (else: the report-level chart).
  if (distinctWriteRates(run.results) >= 2) {
    charts.push(episodeChart(run.results, 'resyncMs', 'writeRate', 'Resync time vs write rate'));
    charts.push(episodeChart(run.results, 'recoveryMs', 'writeRate', 'Recovery time vs write rate'));
  }
  charts.push(passesChart(run.results, 'firstService', 'Passes with room until first served'));
  charts.push(
    passesChart(run.results, 'firstServiceNextToLaggards', 'Passes until first served: stalled next to laggards'),
  );
  charts.push(shareChart(run.results));
  charts.push(timelineChart(run.results));
  out.push(`<div class="charts">${charts.join('')}</div>`);
  return out.join('\n');
}

function table(results: SimResult[]): string {
  const head = [
    'variant',
    'healthy p50/p99/p999/max ms',
    'slow p99 ms',
    'JSON enc / event',
    'deliveries / enc',
    'resync p50/p99 s',
    'recovery p50/p99 s',
    'episodes',
    'passes to 1st service (max all / next to laggards)',
    'max gap',
    'main-thread catch-up % (modelled / real)',
    'force-closes',
    '410s',
    're-lists',
    'events/s in',
    'pushes/s out',
  ];
  const rows = results.map((r) => {
    const h = headline(r);
    const l = r.latency.healthy;
    const o = (v: number | null): string => (v === null ? '–' : fmt(v));
    return [
      h.variant,
      `${fmt(l.p50)} / ${fmt(l.p99)} / ${fmt(l.p999)} / ${fmt(l.max)}`,
      fmt(h.slowP99),
      h.encPerEvent.toFixed(3),
      fmt(h.deliveriesPerEncoding),
      `${o(h.resyncP50)} / ${o(h.resyncP99)}`,
      `${o(h.recoveryP50)} / ${o(h.recoveryP99)}`,
      String(h.episodes),
      `${o(h.firstServedMax)} / ${o(h.firstServedNextToLaggardsMax)}`,
      o(h.serviceGapMax),
      `${(h.mainShareModelled * 100).toFixed(2)} / ${(h.mainShareReal * 100).toFixed(2)}`,
      String(h.forceCloses),
      String(h.expired410),
      String(h.relists),
      fmt(h.eventsInPerS),
      fmt(h.pushesOutPerS),
    ];
  });
  return `<table><tr>${head.map((x) => `<th>${escapeXml(x)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((x) => `<td>${escapeXml(x)}</td>`).join('')}</tr>`).join('')}</table>`;
}

function distinctWriteRates(results: SimResult[]): number {
  return new Set(results.flatMap((r) => r.episodes.records.map((e) => e.writeRate))).size;
}

/** Lowest latency drawn on the log x axis (ms); virtual time gives exact zeros. */
const TAIL_FLOOR_MS = 0.001;

/**
 * The complementary CDF: share of deliveries slower than x, both axes log.
 * A CDF of virtual-time latencies is flat at 1 right after its first bucket
 * (most deliveries wait 0 virtual ms); the tail is where the variants differ.
 */
function tailChart(results: SimResult[], cls: 'healthy' | 'slow', title: string): string {
  const series: Series[] = [];
  let minShare = 1;
  let zeros = false;
  results.forEach((r, i) => {
    const cdf = r.latency[cls].cdf;
    if (cdf.length === 0) return;
    const pts: [number, number][] = [];
    let above = 1; // share of deliveries slower than the previous x
    for (const [x, f] of cdf) {
      const X = Math.max(TAIL_FLOOR_MS, x);
      if (x < TAIL_FLOOR_MS) zeros = true;
      pts.push([X, above]);
      above = 1 - f;
      if (above <= 1e-12) break;
      pts.push([X, above]);
      if (above < minShare) minShare = above;
    }
    series.push({ name: r.variant.label, color: color(i), points: pts, kind: 'step' });
  });
  const note = `y: share of deliveries slower than x${zeros ? `; latencies of 0 virtual ms are drawn at ${TAIL_FLOOR_MS} ms` : ''}`;
  return lineChart({
    title,
    note,
    x: { label: 'delivery latency (ms, log)', log: true },
    y: { label: 'share slower than x (log)', log: true, min: Math.min(0.1, minShare), max: 1 },
    series,
  });
}

function episodeChart(
  results: SimResult[],
  field: 'resyncMs' | 'recoveryMs',
  against: 'readRate' | 'writeRate',
  title: string,
): string {
  const series: Series[] = [];
  results.forEach((r, i) => {
    const pts: [number, number][] = [];
    for (const e of r.episodes.records) {
      const y = e[field];
      if (y === null) continue;
      const x = against === 'readRate' ? (e.readRate ?? UNLIMITED_X) : e.writeRate;
      pts.push([x, Math.max(y, 1) / 1000]);
    }
    if (pts.length > 0)
      series.push({
        name: r.variant.label,
        color: color(i),
        points: pts,
        kind: 'scatter',
        marker: r.variant.mode === 'off' ? 'square' : 'circle',
      });
  });
  const x =
    against === 'readRate'
      ? {
          label: 'reader pace (events/s, log; ∞ = unlimited)',
          log: true,
          format: (v: number) => (v >= UNLIMITED_X ? '∞' : fmt(v)),
        }
      : { label: 'write rate at stall end (events/s)' };
  return lineChart({
    title,
    x,
    y: { label: 'seconds (log)', log: true },
    series,
    ...(series.length === 0 ? { note: 'no episode' } : {}),
  });
}

const PASS_BUCKETS: [string, number, number][] = [
  ['1', 1, 1],
  ['2', 2, 2],
  ['3', 3, 3],
  ['4', 4, 4],
  ['5-8', 5, 8],
  ['9-16', 9, 16],
  ['17-32', 17, 32],
  ['33-64', 33, 64],
  ['>64', 65, Infinity],
];

function passesChart(
  results: SimResult[],
  field: 'firstService' | 'firstServiceNextToLaggards',
  title: string,
): string {
  const groups = results
    .map((r, i) => {
      const pairs = r.fairness?.[field] ?? [];
      const total = pairs.reduce((s, [, c]) => s + c, 0);
      const values = PASS_BUCKETS.map(([, lo, hi]) =>
        total === 0 ? 0 : pairs.filter(([p]) => p >= lo && p <= hi).reduce((s, [, c]) => s + c, 0) / total,
      );
      return { name: `${r.variant.label} (n=${total})`, color: color(i), values, total };
    })
    .filter((g) => g.total > 0);
  return barChart({
    title,
    categories: PASS_BUCKETS.map((b) => b[0]),
    groups,
    xLabel: 'passes (with room in the channel)',
    y: { label: 'share of watchers', format: (v) => `${Math.round(v * 100)}%` },
    ...(groups.length === 0 ? { note: 'no unsynced watcher' } : {}),
  });
}

function shareChart(results: SimResult[]): string {
  return barChart({
    title: 'Main-thread time spent on catch-up',
    categories: results.map((r) => r.variant.label),
    groups: [
      { name: 'modelled (virtual)', color: PALETTE[0]!, values: results.map((r) => r.catchup.modelledShare * 100) },
      { name: 'measured (real)', color: PALETTE[4]!, values: results.map((r) => r.real.catchupShare * 100) },
    ],
    xLabel: 'variant',
    y: { label: '% of the thread', format: (v) => `${+v.toPrecision(2)}%` },
    note: 'beta passes run in the sync worker: only hand-backs count on the main thread',
  });
}

function timelineChart(results: SimResult[]): string {
  const series: Series[] = results.map((r, i) => ({
    name: r.variant.label,
    color: color(i),
    points: r.timeline.tS.map((t, k) => [t, r.timeline.unsynced[k]!] as [number, number]),
  }));
  return lineChart({
    title: 'Unsynced watchers over time',
    x: { label: 'virtual time (s)' },
    y: { label: 'unsynced watchers', min: 0 },
    series,
  });
}
