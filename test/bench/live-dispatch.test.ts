/**
 * The live-dispatch bench row (native-bench/live-dispatch.ts): a small run in
 * each mode gives a finite, positive per-watcher figure from the engine's own
 * fan-out timing, and the rows reach the report's tables and its
 * engine-vs-floor ratios.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Mode } from '../../src/index.js';
import { runLiveDispatchOnce } from '../../native-bench/live-dispatch.js';
import type { BenchReport, LiveDispatchRow } from '../../native-bench/lib/types.js';
import { computeRatios } from '../../native-bench/report/ratios.js';
import { sections } from '../../native-bench/report/tables.js';
import { testReportMeta } from './report-meta.js';

const floorRow = (name: string): BenchReport['floor'][number] => ({
  name,
  group: 'watcher channel',
  unit: 'ns/op',
  mean: 20,
  p50: 18,
  p99: 40,
  opsPerSec: 5e7,
  samples: 10,
});

test('live dispatch: every mode reports a positive ns per watcher; the table and the floor ratios show them', async () => {
  const rows: LiveDispatchRow[] = [];
  for (const mode of ['off', 'alpha', 'beta'] as Mode[]) {
    const row = await runLiveDispatchOnce({ mode, watchers: 200, events: 10, rounds: 1 });
    assert.equal(row.mode, mode);
    assert.equal(row.watchers, 200);
    assert.ok(Number.isFinite(row.nsPerWatcher) && row.nsPerWatcher > 0, `${mode}: ${row.nsPerWatcher}`);
    assert.ok(row.minNsPerWatcher <= row.nsPerWatcher);
    assert.equal(row.usPerEvent, (row.nsPerWatcher * 200) / 1000);
    rows.push(row);
  }
  const report: BenchReport = {
    meta: testReportMeta([]),
    kep: [],
    catchup: [],
    throughput: [],
    floor: [
      floorRow('live push: one event into 10,000 EventQueues (alpha)'),
      floorRow('live push: one event into 10,000 SharedWatcherChannels (beta, main-owned)'),
    ],
    liveDispatch: rows,
    peers: { naive: [], etcd: [], etcdSkipped: '', http: [], httpSkipped: '' },
    ratios: [],
  };
  const table = sections(report).find(([title]) => title.startsWith('Live dispatch while the channels fill'));
  assert.ok(table !== undefined, 'the live dispatch table is in the report');
  for (const mode of ['off', 'alpha', 'beta']) assert.match(table[1], new RegExp(`\\| ${mode} `));
  const ratios = computeRatios(report).filter((r) => r.figure.startsWith('live dispatch while channels fill'));
  assert.equal(ratios.length, 3, 'one engine-vs-floor row per mode');
});
