/**
 * The HTML report of a bench run: one self-contained page (inline CSS and
 * inline SVG plots from report/svg.ts, no script, no CDN) that opens with
 * the verdict table (report/verdict.ts), then the plots, then every other
 * table of the terminal report, then the notes and the
 * run's metadata.
 */
import type { Mode } from '../../src/index.js';
import type { BenchReport, KepRow } from '../lib/types.js';
import { barChart, esc, lineChart, type LineSeries } from './svg.js';
import { sections } from './tables.js';

function kepSeries(rows: KepRow[], modes: Mode[], pick: (r: KepRow) => number, counts: number[]): LineSeries[] {
  return modes
    .map((mode) => {
      const byN = rows.filter((r) => r.mode === mode && r.variant === 'stalled');
      const points: [number, number][] = [];
      counts.forEach((n, i) => {
        const r = byN.find((x) => x.slow === n);
        if (r !== undefined) points.push([i, pick(r)]);
      });
      return { name: byN[0]?.modeLabel ?? mode, points };
    })
    .filter((s) => s.points.length > 0);
}

function plots(r: BenchReport): string[] {
  const out: string[] = [];
  const counts = [...new Set(r.kep.filter((k) => k.variant === 'stalled').map((k) => k.slow))].sort((a, b) => a - b);
  const cats = counts.map((n) => n.toLocaleString('en-US'));
  const modes = r.meta.modes;
  if (counts.length > 0) {
    out.push(
      lineChart({
        title: 'Healthy watcher p99 latency, stall phase',
        xLabel: 'stalled watchers N',
        yLabel: 'µs',
        logY: true,
        xCategories: cats,
        series: kepSeries(r.kep, modes, (k) => k.latencyStall.p99Us, counts),
      }),
    );
    out.push(
      lineChart({
        title: 'Healthy watcher p50 latency, stall phase',
        xLabel: 'stalled watchers N',
        yLabel: 'µs',
        logY: true,
        xCategories: cats,
        series: kepSeries(r.kep, modes, (k) => k.latencyStall.p50Us, counts),
      }),
    );
    out.push(
      lineChart({
        title: 'Force-closes (off) and 410s, whole run',
        xLabel: 'stalled watchers N',
        yLabel: 'watches ended',
        xCategories: cats,
        series: kepSeries(r.kep, modes, (k) => k.forceCloses + k.expired410, counts),
      }),
    );
    // Off resyncs nobody: a force-closed watch that reconnects and replays is a new watch (KepRow.resync).
    out.push(
      lineChart({
        title: 'Slow watchers resynced on their own stream after resume (share; a reconnect is not a resync)',
        xLabel: 'stalled watchers N',
        yLabel: 'resynced / N',
        xCategories: cats,
        series: kepSeries(
          r.kep.filter((k) => k.slow > 0),
          modes,
          (k) => k.resync.resynced / k.resync.slow,
          counts,
        ),
      }),
    );
    out.push(
      lineChart({
        title: 'Writer lag p99 (main thread kept the writer from running)',
        xLabel: 'stalled watchers N',
        yLabel: 'µs',
        logY: true,
        xCategories: cats,
        series: kepSeries(r.kep, modes, (k) => k.writerLag.p99Us, counts),
      }),
    );
  }
  for (const scenario of ['trigger-1k', 'all-100k'] as const) {
    const rows = r.throughput.filter((t) => t.scenario === scenario);
    if (rows.length === 0) continue;
    out.push(
      barChart({
        title: `Main-thread time per event, ${scenario} (${rows[0]!.watchers.toLocaleString('en-US')} watchers)`,
        yLabel: 'µs per event',
        categories: rows.map((t) => t.mode),
        stacked: true,
        series: [
          { name: 'encode (jsonLine)', values: rows.map((t) => t.encodeUsPerEvent) },
          { name: 'append (history+state)', values: rows.map((t) => t.appendUsPerEvent) },
          { name: 'ring (beta)', values: rows.map((t) => t.ringUsPerEvent) },
          { name: 'fan-out (dispatch)', values: rows.map((t) => t.fanoutUsPerEvent) },
          { name: 'other', values: rows.map((t) => t.otherUsPerEvent) },
        ],
      }),
    );
  }
  if (r.ratios.length > 0) {
    out.push(
      barChart({
        title: 'Engine figure / floor (same run)',
        yLabel: 'ratio',
        logY: true,
        categories: r.ratios.map((_x, i) => `#${i + 1}`),
        series: [{ name: 'engine / floor', values: r.ratios.map((x) => x.ratio) }],
      }),
    );
  }
  if (r.peers.naive.length > 0) {
    out.push(
      lineChart({
        title: `Heap with ${r.peers.naive[0]!.slow.toLocaleString('en-US')} stalled watchers: naive fan-out vs engine`,
        xLabel: 'seconds',
        yLabel: 'heap MiB',
        series: r.peers.naive.map((n) => ({
          name: `${n.system} N=${n.slow}`,
          points: n.series.map((s) => [s.tS, s.heapMiB] as [number, number]),
        })),
      }),
    );
  }
  if (r.peers.etcd.length > 0) {
    const e = r.peers.etcd;
    out.push(
      barChart({
        title: 'etcd direct vs engine over etcd: delivery latency',
        yLabel: 'ms',
        logY: true,
        categories: e.map((x) => `${x.system.startsWith('etcd') ? 'etcd' : 'engine'} W=${x.watchers}`),
        series: [
          { name: 'p50', values: e.map((x) => x.latency.p50Us / 1000) },
          { name: 'p99', values: e.map((x) => x.latency.p99Us / 1000) },
        ],
      }),
    );
  }
  return out;
}

export function renderHtml(r: BenchReport): string {
  const all = sections(r).map(([title, table]) => `<h2>${esc(title)}</h2><pre>${esc(table)}</pre>`);
  // The verdict opens the page (issue 13): which mode wins each KEP measurement, before any plot.
  const verdict = sections(r)[0]?.[0].startsWith('Verdict') === true ? all.shift()! : '';
  const tables = all.join('\n');
  const ratioKey = r.ratios.map((x, i) => `<li>#${i + 1}: ${esc(x.figure)} / ${esc(x.floorName)}</li>`).join('');
  const m = r.meta;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>watchcache bench ${esc(m.date)}</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1500px}pre{font-size:11px;overflow-x:auto;background:#f6f6f6;padding:8px}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots svg{border:1px solid #eee;background:#fff}h2{font-size:16px;margin-top:28px}</style></head>
<body><h1>watchcache benchmark report</h1>
<p>${esc(m.date)} · Node ${esc(m.node)} · ${m.cpus} × ${esc(m.cpuModel)} · ${m.memGiB.toFixed(0)} GiB · ${m.quick ? 'quick' : 'full'} run, ${m.wallS.toFixed(0)} s · load average ${m.loadStart.toFixed(1)} → ${m.loadEnd.toFixed(1)} · modes ${esc(m.modes.join(', '))}</p>
<p><code>${esc(m.argv.join(' '))}</code></p>
${verdict}
<div class="plots">${plots(r).join('\n')}</div>
${ratioKey === '' ? '' : `<h2>Ratio plot key</h2><ol style="list-style:none;padding:0">${ratioKey}</ol>`}
${tables}
${r.peers.etcdSkipped ? `<p>peer (b) etcd: ${esc(r.peers.etcdSkipped)}</p>` : ''}
${r.peers.httpSkipped ? `<p>peer (c) http: ${esc(r.peers.httpSkipped)}</p>` : ''}
<h2>Notes</h2><ul>${m.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>
</body></html>
`;
}
