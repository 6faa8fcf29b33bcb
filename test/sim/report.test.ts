/**
 * The simulator's report (issue 13, deliverable 8): it opens with a verdict
 * per KEP measurement and scenario, judged from the run's own figures; the
 * latency charts show the tail (share slower than x, falling); resync against
 * the write rate is drawn where write rates differ; a chart whose x values
 * are all equal still gets distinct ticks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MODES } from '../../src/index.js';
import { headline, scenarioRun, type SimReport } from '../../src/sim/report.js';
import { renderHtml } from '../../src/sim/report-html.js';
import { renderTable } from '../../src/sim/report-table.js';
import { judge, simVerdicts } from '../../src/sim/report-verdict.js';
import { simulate } from '../../src/sim/simulator.js';
import { lineChart } from '../../src/sim/svg.js';
import { smallScenario } from './fixtures.js';

async function report(): Promise<SimReport> {
  const s = smallScenario();
  const results = [];
  for (const mode of MODES) results.push(await simulate(s, { label: mode, mode }));
  return { tool: 'watchcache simulate', format: 1, command: 'test', sweep: null, runs: [scenarioRun(s, results)] };
}

test('verdict: one row per KEP measurement; the winner is the best figure of the run; off never wins a resync', async () => {
  const r = await report();
  const vs = simVerdicts(r);
  assert.equal(vs.length, 4);
  assert.deepEqual(
    vs.map((v) => v.measurement.slice(0, 2)),
    ['1.', '2.', '3.', '4.'],
  );
  const hs = r.runs[0]!.results.map(headline);
  const latency = vs[0]!;
  const tie = new Set(hs.map((h) => h.healthyP99)).size === 1;
  const pick = (h: (typeof hs)[number]): number => (tie ? h.healthyMax : h.healthyP99);
  const best = Math.min(...hs.map(pick));
  const winners = hs.filter((h) => pick(h) === best).map((h) => h.variant);
  assert.deepEqual(latency.winner.split(' = ').sort(), winners.sort());
  const resync = vs[2]!;
  assert.match(resync.figures.off ?? '', /^none/);
  assert.ok(!resync.winner.includes('off'));
  assert.notEqual(resync.betaVsAlpha, '', 'beta is compared with alpha');
});

test('judge: ratios and beta against alpha in both directions', () => {
  const f = (mode: 'off' | 'alpha' | 'beta', value: number) => ({
    key: mode,
    mode,
    value,
    text: String(value),
    eligible: true,
  });
  const lower = judge('m', 'c', [f('off', 9), f('alpha', 4), f('beta', 2)], true);
  assert.equal(lower.winner, 'beta');
  assert.equal(lower.by, '2.00x');
  assert.equal(lower.betaVsAlpha, 'beta 2.00x better');
  const higher = judge('m', 'c', [f('alpha', 4), f('beta', 2)], false);
  assert.equal(higher.winner, 'alpha');
  assert.equal(higher.betaVsAlpha, 'beta 2.00x worse');
  assert.equal(judge('m', 'c', [f('alpha', 3), f('beta', 3)], true).winner, 'alpha = beta');
});

test('report: the verdict opens the page and the terminal table; latency tails fall; write-rate charts where rates differ', async () => {
  const r = await report();
  const text = renderTable(r);
  assert.match(text.trimStart(), /^verdict:/);
  const page = renderHtml(r);
  const verdictAt = page.indexOf('<h2>Verdict');
  assert.ok(
    verdictAt > 0 && verdictAt < page.indexOf(`<h2>${r.runs[0]!.name}</h2>`),
    'the verdict comes before the scenarios',
  );
  const tail = /<svg[^>]*><title>Delivery latency tail: healthy watchers<\/title>.*?<\/svg>/s.exec(page)?.[0];
  assert.ok(tail !== undefined, 'a latency tail chart');
  for (const path of tail.match(/ d="[^"]+"/g) ?? []) {
    const ys = [...path.matchAll(/V([\d.]+)/g)].map((m) => Number(m[1]));
    for (let i = 1; i < ys.length; i++)
      assert.ok(ys[i]! >= ys[i - 1]!, 'the share slower than x never rises (SVG y grows downwards)');
  }
  // smallScenario writes at 150/s, then 300/s: its episodes see two write rates.
  assert.match(page, /<title>Resync time vs write rate<\/title>/);
});

test('svg: one distinct x value still gets distinct tick labels', () => {
  const svg = lineChart({
    title: 't',
    x: { label: 'x' },
    y: { label: 'y' },
    series: [
      {
        name: 's',
        color: '#000',
        kind: 'scatter',
        points: [
          [1000, 1],
          [1000, 2],
        ],
      },
    ],
  });
  const ticks = [...svg.matchAll(/class="tick" text-anchor="middle">([^<]+)</g)].map((m) => m[1]);
  assert.ok(ticks.length >= 2);
  assert.equal(new Set(ticks).size, ticks.length, `distinct ticks, got ${ticks.join(', ')}`);
});
