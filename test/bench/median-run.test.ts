/**
 * The catchup suite's repeated runs (--catchup-repeat N, native-bench/catchup/median-run.ts): the row is the
 * median run by the cold window, its `warm` the median run by the warm window, every run's figures are kept,
 * and the verdict gives the spread; the flag parses; and a real sweep of two runs per mode reports one row per
 * mode with both runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareResync, medianRun } from '../../native-bench/catchup/median-run.js';
import { runCatchupSweep } from '../../native-bench/catchup/catchup-bench.js';
import { parseBenchArgs } from '../../native-bench/bench-args.js';
import { verdicts } from '../../native-bench/report/verdict.js';
import type { BenchReport, CatchupRow, ResyncSample } from '../../native-bench/lib/types.js';
import type { Mode } from '../../src/index.js';
import { testReportMeta } from './report-meta.js';

const W = 10;

function sample(resynced: number, allResyncedMs: number, timedOut = false): ResyncSample {
  return { resynced, allResyncedMs, expired410: 0, timedOut };
}

/** A catch-up row whose figures are tagged by `id` (in deliveriesPerS), with the cold and warm windows given. */
function row(id: number, cold: ResyncSample, warm: ResyncSample, mode: Mode = 'beta'): CatchupRow {
  const lat = { count: 1, meanUs: 1, p50Us: 1, p90Us: 1, p99Us: 1, p999Us: 1, maxUs: 1 };
  return {
    mode,
    modeLabel: mode,
    watchers: W,
    historyEvents: 500,
    podBytes: 100,
    rate: 100,
    prefillS: 0,
    maxS: 30,
    ...cold,
    windowS: 1,
    clientsExpired: 0,
    resyncP50Ms: cold.allResyncedMs,
    resyncMaxMs: cold.allResyncedMs,
    delivered: 1,
    deliveriesPerS: id,
    workerPushes: 0,
    workerPushesPerS: 0,
    pushBoundPerS: 1,
    workerShareOfBound: 0,
    healthyBaseline: lat,
    healthyDuring: lat,
    healthyP99Ratio: 1,
    writerLagBaseline: lat,
    elu: 0,
    cpuMs: 0,
    warm: { ...warm, windowS: 1, delivered: 1, workerPushes: 0, cpuMs: 0 },
  };
}

test('median run: one run is reported as it is', () => {
  const r = row(1, sample(W, 100), sample(W, 50));
  assert.equal(medianRun([r]), r);
  assert.equal(medianRun([r]).runs, undefined);
  assert.throws(() => medianRun([]));
});

test('median run: the cold median run as a whole, the warm median on its own, every run kept in order', () => {
  const runs = [
    row(1, sample(W, 300), sample(W, 50)),
    row(2, sample(W, 100), sample(W, 90)),
    row(3, sample(W, 200), sample(W, 70)),
  ];
  const m = medianRun(runs);
  assert.equal(m.deliveriesPerS, 3, 'every cold figure comes from the median run (200 ms)');
  assert.equal(m.allResyncedMs, 200);
  assert.equal(m.warm.allResyncedMs, 70, 'the warm figure is the median warm run, not the cold median run');
  assert.deepEqual(
    m.runs?.cold.map((s) => s.allResyncedMs),
    [300, 100, 200],
  );
  assert.deepEqual(
    m.runs?.warm.map((s) => s.allResyncedMs),
    [50, 90, 70],
  );
  // An even number of runs: the lower middle one (the faster of the two in the middle).
  const four = medianRun([...runs, row(4, sample(W, 400), sample(W, 60))]);
  assert.equal(four.allResyncedMs, 200);
  assert.equal(four.warm.allResyncedMs, 60);
});

test('median run: runs that did not resync everyone rank after those that did, by how many, a timeout last', () => {
  assert.ok(compareResync(sample(W, 900), sample(W - 1, 10), W) < 0, 'all resynced beats any partial run');
  assert.ok(compareResync(sample(W - 1, 0), sample(W - 2, 0), W) < 0, 'more resynced ranks first');
  assert.ok(compareResync(sample(W - 1, 0), sample(W - 1, 0, true), W) < 0, 'at as many, a timeout ranks last');
  assert.equal(compareResync(sample(W, 5), sample(W, 5), W), 0);
  const m = medianRun([
    row(1, sample(W - 2, 0, true), sample(W, 1)),
    row(2, sample(W, 500), sample(W, 1)),
    row(3, sample(W - 1, 0), sample(W, 1)),
  ]);
  assert.equal(m.deliveriesPerS, 3, 'the middle of: all in 500 ms, 9 resynced, 8 resynced and timed out');
});

test('median run: the verdict gives the spread of the runs behind each figure', () => {
  const alpha = medianRun([
    row(1, sample(W, 100), sample(W, 80), 'alpha'),
    row(2, sample(W, 120), sample(W, 90), 'alpha'),
  ]);
  const beta = medianRun([
    row(3, sample(W, 300), sample(W, 70)),
    row(4, sample(W - 1, 0, true), sample(W, 60)),
    row(5, sample(W, 200), sample(W, 50)),
  ]);
  const report: BenchReport = {
    meta: testReportMeta(['median-run']),
    kep: [],
    catchup: [alpha, beta],
    throughput: [],
    floor: [],
    peers: { naive: [], etcd: [], etcdSkipped: '', http: [], httpSkipped: '' },
    ratios: [],
  };
  const v = verdicts(report);
  const cold = v.find((x) => x.measurement === '3. catch-up: time until every watcher resynced')!;
  assert.equal(cold.figures.alpha, 'all in 0.100 s (median of 2: 0.100-0.120 s)');
  assert.equal(cold.figures.beta, 'all in 0.300 s (median of 3; every watcher resynced in 2 of them)');
  assert.equal(cold.winner, 'alpha');
  const warm = v.find((x) => x.measurement.startsWith('3. catch-up, warm'))!;
  assert.equal(warm.figures.beta, 'all in 0.0600 s (median of 3: 0.0500-0.0700 s)');
  assert.equal(warm.winner, 'beta');
});

test('bench flags: --catchup-repeat takes a whole number of runs >= 1 (default 1)', () => {
  assert.equal(parseBenchArgs([]).catchup.repeat, 1);
  assert.equal(parseBenchArgs(['--catchup-repeat', '3']).catchup.repeat, 3);
  assert.throws(() => parseBenchArgs(['--catchup-repeat', '0']), /--catchup-repeat must be a number >= 1/);
  assert.throws(() => parseBenchArgs(['--catchup-repeat', '2.5']), /whole number/);
});

test('catchup sweep: two runs of each mode, interleaved, one median row per mode', { timeout: 120_000 }, async () => {
  const log: string[] = [];
  const rows = await runCatchupSweep({
    modes: ['off', 'alpha', 'beta'],
    watchers: [2],
    historyEvents: 300,
    rate: 200,
    baselineS: 0.2,
    maxS: 20,
    channelCapacity: 10,
    repeat: 2,
    log: (l) => log.push(l),
  });
  assert.deepEqual(
    rows.map((r) => r.mode),
    ['alpha', 'beta'],
    'off has no catch-up path',
  );
  for (const r of rows) {
    assert.equal(r.runs?.cold.length, 2);
    assert.equal(r.runs?.warm.length, 2);
    assert.ok(r.runs?.cold.every((s) => s.resynced === 2 && s.allResyncedMs > 0));
  }
  const started = log.filter((l) => l.endsWith('...'));
  assert.deepEqual(started, [
    'catchup: W=2 mode=alpha run 1/2 ...',
    'catchup: W=2 mode=beta run 1/2 ...',
    'catchup: W=2 mode=alpha run 2/2 ...',
    'catchup: W=2 mode=beta run 2/2 ...',
  ]);
  assert.ok(log.some((l) => /mode=beta run 2\/2: cold all in [\d.]+ s, warm all in [\d.]+ s$/.test(l)));
});
