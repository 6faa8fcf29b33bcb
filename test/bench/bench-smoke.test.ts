/**
 * Smoke test of the benchmark suite (native-bench/): the KEP bench runs for
 * about a second per mode with tiny N, in-process, and the result, the JSON
 * report, the ratio table and the HTML report have the expected structure
 * with finite numbers. Nothing here asserts timing: benchmarks measure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Mode } from '../../src/index.js';
import { parseBenchArgs } from '../../native-bench/bench-args.js';
import { runCatchupOnce } from '../../native-bench/catchup/catchup-bench.js';
import { measurePushBound } from '../../native-bench/catchup/push-bound.js';
import { runKepOnce } from '../../native-bench/kep-bench.js';
import type { BenchReport, CatchupRow, KepRow } from '../../native-bench/lib/types.js';
import { renderHtml } from '../../native-bench/report/html.js';
import { computeRatios } from '../../native-bench/report/ratios.js';
import { sections } from '../../native-bench/report/tables.js';
import { verdicts } from '../../native-bench/report/verdict.js';
import { testReportMeta } from './report-meta.js';

/** Every number anywhere in `value` is finite; returns how many numbers it saw. */
function assertFiniteNumbers(value: unknown, path = 'row'): number {
  if (typeof value === 'number') {
    assert.ok(Number.isFinite(value), `${path} is not finite: ${value}`);
    return 1;
  }
  if (Array.isArray(value)) return value.reduce((n: number, v, i) => n + assertFiniteNumbers(v, `${path}[${i}]`), 0);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).reduce((n: number, [k, v]) => n + assertFiniteNumbers(v, `${path}.${k}`), 0);
  return 0;
}

const rows: KepRow[] = [];

for (const mode of ['off', 'alpha', 'beta'] as Mode[]) {
  test(`KEP bench smoke (${mode}): structure and finite numbers`, { timeout: 60_000 }, async () => {
    const row = await runKepOnce({
      mode,
      slow: 20,
      healthy: 1,
      variant: 'stalled',
      rate: 400,
      slowReadRate: 100,
      channelCapacity: 10,
      stallS: 0.5,
      resumeS: 0.5,
      pods: 50,
      warmupWrites: 200,
    });
    rows.push(row);
    assert.equal(row.mode, mode);
    assert.equal(row.slow, 20);
    for (const key of ['latency', 'latencyStall', 'latencyStalled', 'latencyResume', 'writerLag'] as const) {
      for (const f of ['count', 'meanUs', 'p50Us', 'p90Us', 'p99Us', 'p999Us', 'maxUs'] as const)
        assert.equal(typeof row[key][f], 'number', `${key}.${f}`);
    }
    // The channels-full figure is the stall phase's second half: a subset of its events.
    assert.ok(row.latencyStalled.count <= row.latencyStall.count, 'latencyStalled counts stall-phase events only');
    for (const f of [
      'eventsWritten',
      'eventsPerSecIn',
      'pushes',
      'pushesPerSecOut',
      'forceCloses',
      'healthyEnded',
      'expired410',
      'reconnects',
      'encodingsPerEvent',
      'msgpackPerEvent',
      'passes',
      'passWorkMs',
      'catchupShare',
      'workerShare',
      'workerBusyStall',
      'scanned',
      'scanRatePerS',
      'elu',
      'cpuMs',
    ] as const) {
      assert.equal(typeof row[f], 'number', f);
    }
    for (const f of [
      'slow',
      'resynced',
      'p50Ms',
      'p99Ms',
      'maxMs',
      'readInResume',
      'neededInResume',
      'behindAtEndMin',
      'behindAtEndP50',
      'longestWaitP50Ms',
      'longestWaitMaxMs',
    ] as const)
      assert.equal(typeof row.resync[f], 'number', `resync.${f}`);
    // Every event a slow stream reads in the resume lies between where it stood and the end RV (single
    // delivery); off's reconnects replay, so there it may read more.
    if (row.mode !== 'off') assert.ok(row.resync.readInResume <= row.resync.neededInResume, 'read <= needed');
    assert.ok(row.resync.behindAtEndMin <= row.resync.behindAtEndP50);
    assert.ok(row.resync.longestWaitP50Ms <= row.resync.longestWaitMaxMs);
    // A wait lies inside the run (from the resume to the end), and a slow watcher always waits a moment.
    assert.ok(row.resync.longestWaitMaxMs <= row.wallS * 1000, 'a wait inside the run');
    if (row.slow > 0) assert.ok(row.resync.longestWaitMaxMs > 0, 'slow watchers waited for their backlog');
    for (const f of [
      'rssBaseMiB',
      'rssPeakMiB',
      'heapPerWatcherB',
      'rssPerWatcherB',
      'heapPerSlowWatcherEndB',
    ] as const)
      assert.equal(typeof row.memory[f], 'number', `memory.${f}`);
    assert.ok(assertFiniteNumbers(row) > 40);
    assert.ok(row.latency.count > 0, 'the healthy watcher received events');
  });
}

const catchupRows: CatchupRow[] = [];

for (const mode of ['alpha', 'beta'] as Mode[]) {
  test(
    `catchup suite smoke (${mode}): W watchers 500 events behind resync; structure and finite numbers`,
    { timeout: 60_000 },
    async () => {
      const row = await runCatchupOnce({
        mode,
        watchers: 3,
        historyEvents: 500,
        rate: 200,
        baselineS: 0.3,
        maxS: 20,
        channelCapacity: 10,
        pods: 50,
      });
      catchupRows.push(row);
      assert.equal(row.mode, mode);
      assert.equal(row.watchers, 3);
      assert.equal(row.historyEvents, 500, 'they open exactly 500 events behind');
      assert.equal(row.timedOut, false);
      assert.equal(row.resynced, 3, 'every catch-up watcher resynced');
      assert.equal(row.expired410, 0);
      assert.ok(row.delivered >= 3 * 500, `each received at least the 500 events behind (${row.delivered})`);
      assert.ok(row.allResyncedMs > 0);
      // The warm repeat (the same catch-up again, in the same process) is measured and reported too.
      assert.equal(row.warm.timedOut, false);
      assert.equal(row.warm.resynced, 3, 'every watcher of the warm repeat resynced');
      assert.equal(row.warm.expired410, 0);
      assert.ok(row.warm.delivered >= 3 * 500 && row.warm.allResyncedMs > 0);
      assert.ok(row.pushBoundPerS > 0);
      assert.ok(
        row.healthyBaseline.count > 0 && row.healthyDuring.count > 0,
        'the healthy watcher was measured in both windows',
      );
      assert.ok(assertFiniteNumbers(row) > 30);
    },
  );
}

test('push bound: one thread pushes references into W rings', () => {
  assert.ok(measurePushBound(10, 20) > 0);
});

test('report: JSON, ratios, tables and HTML from KEP rows', () => {
  assert.ok(rows.length > 0);
  const report: BenchReport = {
    meta: testReportMeta(['smoke']),
    kep: rows,
    catchup: catchupRows,
    throughput: [],
    floor: [
      {
        name: 'microtask hop: resolve a pending promise, await it',
        group: 'in-process delivery',
        unit: 'ns/op',
        mean: 100,
        p50: 90,
        p99: 200,
        opsPerSec: 1e7,
        samples: 10,
      },
    ],
    peers: { naive: [], etcd: [], etcdSkipped: '', http: [], httpSkipped: '' },
    ratios: [],
  };
  report.ratios = computeRatios(report);
  const parsed = JSON.parse(JSON.stringify(report)) as BenchReport;
  assert.deepEqual(Object.keys(parsed).sort(), ['catchup', 'floor', 'kep', 'meta', 'peers', 'ratios', 'throughput']);
  assertFiniteNumbers(parsed.kep);
  assertFiniteNumbers(parsed.ratios);
  assertFiniteNumbers(parsed.catchup);
  assert.ok(sections(report).length >= 3);
  assert.ok(
    sections(report).some(([title]) => title.startsWith('Catch-up')),
    'the catch-up table is in the report',
  );
  // The verdict opens the report: one row per KEP measurement and condition, with a winner from this run.
  assert.match(sections(report)[0]![0], /^Verdict/);
  const v = verdicts(report);
  // Measurement 1, over the whole stall phase and with the slow channels full: the lowest p99 of the run wins.
  const figures: [string, (r: KepRow) => number][] = [
    ['1. healthy p99 latency (stall phase)', (r) => r.latencyStall.p99Us],
    ['1. healthy p99 latency, slow channels full', (r) => r.latencyStalled.p99Us],
  ];
  for (const [title, p99] of figures) {
    const row = v.find((x) => x.measurement.startsWith(title) && x.condition === '20 stalled');
    assert.ok(row !== undefined, `${title}, at N = 20`);
    const best = Math.min(...rows.map(p99));
    const winner = rows.find((r) => p99(r) === best)!.mode;
    assert.ok(row.winner.split(' = ').includes(winner), `${title}: the lowest p99 (${winner}) wins, got ${row.winner}`);
  }
  assert.ok(v.some((x) => x.measurement.startsWith('2.')));
  assert.ok(
    v.some((x) => x.measurement.startsWith('3. catch-up')),
    'the catch-up suite has its measurement 3 row',
  );
  const resync = v.find((x) => x.measurement.startsWith('3. time') && x.condition === '20 stalled');
  assert.match(resync?.figures.off ?? '', /^none/, 'off resyncs nobody: a reconnect is not a resync');
  const page = renderHtml(report);
  assert.ok(
    page.indexOf('<h2>Verdict') > 0 && page.indexOf('<h2>Verdict') < page.indexOf('<div class="plots">'),
    'the HTML opens with the verdict, before the plots',
  );
  const html = renderHtml(report);
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<svg /);
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/, 'self-contained: no script, no external URL');
});

test('bench flags: API.md flags parse; bad flags throw', () => {
  const p = parseBenchArgs([
    '--modes',
    'alpha,beta',
    '--watchers',
    '2',
    '--stalled',
    '100',
    '--rate',
    '500',
    '--duration',
    '3',
    '--json',
    'x.json',
    '--html',
    'x.html',
  ]);
  assert.deepEqual(p.modes, ['alpha', 'beta']);
  assert.equal(p.kep.healthy, 2);
  assert.deepEqual(p.kep.slowCounts, [100]);
  assert.equal(p.kep.rate, 500);
  assert.equal(p.kep.durationS, 3);
  assert.equal(p.json, 'x.json');
  assert.equal(p.html, 'x.html');
  assert.equal(p.cpuProfDir, undefined);
  assert.equal(parseBenchArgs(['--cpu-prof', 'profiles']).cpuProfDir, 'profiles');
  assert.equal(parseBenchArgs([]).quick, true);
  assert.equal(parseBenchArgs(['--full']).quick, false);
  assert.throws(() => parseBenchArgs(['--modes', 'gamma']));
  assert.throws(() => parseBenchArgs(['--rate', '-1']));
});
