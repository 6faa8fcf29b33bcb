/**
 * The HTML report of a simulate run: one self-contained file (inline CSS and
 * SVG drawn here, no scripts, no external resources). Per scenario: the
 * headline table, latency CDFs per variant (healthy and slow watchers),
 * resync and recovery time against read rate and write rate, the
 * passes-until-served histograms (all newly unsynced watchers, and those
 * that stalled next to long-standing laggards), the main-thread catch-up
 * share, and the unsynced population over time.
 */
import { headline, type ScenarioRun, type SimReport } from './report.js';
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
  parts.push(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>watchcache simulate</title><style>${CSS}</style></head><body>`);
  parts.push(`<h1>watchcache simulate: KEP-6268 measurements</h1>`);
  parts.push(`<p class="small">Command: <code>${escapeXml(report.command)}</code>${report.sweep === null ? '' : ` · sweep ${escapeXml(report.sweep.param)} = ${escapeXml(report.sweep.values.join(', '))}`}. The real engine (MemoryStore + WatchCache) runs under virtual time; latencies are virtual receipt time minus write time. Main-thread share: modelled pass time / virtual time, and measured catch-up ms / wall time of the run.</p>`);
  for (const run of report.runs) parts.push(renderScenario(run));
  parts.push('</body></html>');
  return parts.join('\n');
}

function color(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

function renderScenario(run: ScenarioRun): string {
  const out: string[] = [];
  out.push(`<h2>${escapeXml(run.name)}</h2>`);
  if (run.description !== '') out.push(`<p class="desc">${escapeXml(run.description)}</p>`);
  out.push(`<p class="small">${run.durationS} s of writes (${escapeXml(run.writeRates)}) + ${run.drainS} s drain, seed ${run.seed}. Watchers: ${escapeXml(run.watchers.map((w) => `${w.count} ${w.name} (${w.selector}, read ${w.readRate}/s${w.episodes > 0 ? `, ${w.episodes} episode${w.episodes > 1 ? 's' : ''}` : ''})`).join('; '))}.</p>`);
  out.push(table(run.results));
  const charts: string[] = [];
  charts.push(cdfChart(run.results, 'healthy', 'Delivery latency CDF: healthy watchers'));
  charts.push(cdfChart(run.results, 'slow', 'Delivery latency CDF: slow / stalled watchers'));
  charts.push(episodeChart(run.results, 'resyncMs', 'readRate', 'Resync time vs read rate (stall end → synced)'));
  charts.push(episodeChart(run.results, 'recoveryMs', 'readRate', 'Recovery time vs read rate (stall end → backlog drained)'));
  charts.push(episodeChart(run.results, 'resyncMs', 'writeRate', 'Resync time vs write rate'));
  charts.push(episodeChart(run.results, 'recoveryMs', 'writeRate', 'Recovery time vs write rate'));
  charts.push(passesChart(run.results, 'firstService', 'Passes with room until first served'));
  charts.push(passesChart(run.results, 'firstServiceNextToLaggards', 'Passes until first served: stalled next to laggards'));
  charts.push(shareChart(run.results));
  charts.push(timelineChart(run.results));
  out.push(`<div class="charts">${charts.join('')}</div>`);
  return out.join('\n');
}

function table(results: SimResult[]): string {
  const head = ['variant', 'healthy p50/p99/p999/max ms', 'slow p99 ms', 'JSON enc / event', 'deliveries / enc', 'resync p50/p99 s', 'recovery p50/p99 s', 'episodes', 'passes to 1st service (max all / next to laggards)', 'max gap', 'main-thread catch-up % (modelled / real)', 'force-closes', '410s', 're-lists', 'events/s in', 'pushes/s out'];
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

function cdfChart(results: SimResult[], cls: 'healthy' | 'slow', title: string): string {
  const series: Series[] = [];
  let zeroOnly = 0;
  results.forEach((r, i) => {
    const cdf = r.latency[cls].cdf;
    if (cdf.length === 0) return;
    const pts: [number, number][] = [[Math.max(0.001, cdf[0]![0]), 0]];
    for (const [x, f] of cdf) pts.push([Math.max(0.001, x), f]);
    if (cdf.every(([x]) => x < 0.001)) zeroOnly++;
    series.push({ name: r.variant.label, color: color(i), points: pts, kind: 'step' });
  });
  const note = zeroOnly > 0 ? `values below 1 µs (virtual time: no wait at all) are drawn at 1 µs` : 'x: ms (log)';
  return lineChart({ title, note, x: { label: 'delivery latency (ms, log)', log: true }, y: { label: 'fraction of deliveries ≤ x', min: 0, max: 1 }, series });
}

function episodeChart(results: SimResult[], field: 'resyncMs' | 'recoveryMs', against: 'readRate' | 'writeRate', title: string): string {
  const series: Series[] = [];
  results.forEach((r, i) => {
    const pts: [number, number][] = [];
    for (const e of r.episodes.records) {
      const y = e[field];
      if (y === null) continue;
      const x = against === 'readRate' ? (e.readRate ?? UNLIMITED_X) : e.writeRate;
      pts.push([x, Math.max(y, 1) / 1000]);
    }
    if (pts.length > 0) series.push({ name: r.variant.label, color: color(i), points: pts, kind: 'scatter', marker: r.variant.mode === 'off' ? 'square' : 'circle' });
  });
  const x = against === 'readRate' ? { label: 'reader pace (events/s, log; ∞ = unlimited)', log: true, format: (v: number) => (v >= UNLIMITED_X ? '∞' : fmt(v)) } : { label: 'write rate at stall end (events/s)' };
  return lineChart({ title, x, y: { label: 'seconds (log)', log: true }, series, ...(series.length === 0 ? { note: 'no episode' } : {}) });
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

function passesChart(results: SimResult[], field: 'firstService' | 'firstServiceNextToLaggards', title: string): string {
  const groups = results
    .map((r, i) => {
      const pairs = r.fairness?.[field] ?? [];
      const total = pairs.reduce((s, [, c]) => s + c, 0);
      const values = PASS_BUCKETS.map(([, lo, hi]) => (total === 0 ? 0 : pairs.filter(([p]) => p >= lo && p <= hi).reduce((s, [, c]) => s + c, 0) / total));
      return { name: `${r.variant.label} (n=${total})`, color: color(i), values, total };
    })
    .filter((g) => g.total > 0);
  return barChart({ title, categories: PASS_BUCKETS.map((b) => b[0]), groups, xLabel: 'passes (with room in the channel)', y: { label: 'share of watchers', format: (v) => `${Math.round(v * 100)}%` }, ...(groups.length === 0 ? { note: 'no unsynced watcher' } : {}) });
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
  const series: Series[] = results.map((r, i) => ({ name: r.variant.label, color: color(i), points: r.timeline.tS.map((t, k) => [t, r.timeline.unsynced[k]!] as [number, number]) }));
  return lineChart({ title: 'Unsynced watchers over time', x: { label: 'virtual time (s)' }, y: { label: 'unsynced watchers', min: 0 }, series });
}
