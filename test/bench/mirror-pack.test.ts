/**
 * The ring mirror against its own pack (native-bench/floor/mirror-pack.ts):
 * a small run gives two finite, positive rows (the mirror, then the pack of
 * the same suite updates), and the report's engine-vs-floor ratios put the
 * mirror against that pack for beta. Nothing here depends on the figures.
 * The floor commits the arena ahead of the mirror as the engine's worker
 * does (SteppedArenaPrefault): checked against a real RingMirror.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mirrorVsPack, SteppedArenaPrefault } from '../../native-bench/floor/mirror-pack.js';
import { RingMirror } from '../../src/beta/ring-mirror.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { makePod } from '../../native-bench/lib/pod.js';
import type { BenchReport } from '../../native-bench/lib/types.js';
import { computeRatios } from '../../native-bench/report/ratios.js';
import { testReportMeta } from './report-meta.js';

test('mirror vs pack: two positive rows from one process, and a beta ratio of the mirror to its own pack', () => {
  const rows = mirrorVsPack(2);
  assert.equal(rows.length, 2);
  const [mirror, pack] = rows as [BenchReport['floor'][number], BenchReport['floor'][number]];
  assert.match(mirror.name, /^ring mirror: RingMirror\.appended per suite update/);
  assert.match(pack.name, /^msgpackr pack the suite's update/);
  for (const r of rows) {
    assert.equal(r.samples, 2);
    assert.ok(Number.isFinite(r.p50) && r.p50 > 0 && r.p50 <= r.p99, `${r.name}: ${r.p50}`);
  }
  const report: BenchReport = {
    meta: testReportMeta(['floor']),
    kep: [],
    catchup: [],
    throughput: [],
    floor: rows,
    peers: { naive: [], etcd: [], etcdSkipped: '', http: [], httpSkipped: '' },
    ratios: [],
  };
  const ratios = computeRatios(report).filter((r) => r.figure.includes('vs its own pack in the same process'));
  assert.equal(ratios.length, 1, 'one row, for beta');
  assert.equal(ratios[0]!.ratio, mirror.p50 / pack.p50);
});

test('the floor commits the arena ahead of the writer, as the sync worker does, only when told to', () => {
  const history = new EventHistory({ lowerBound: 100, upperBound: 1024 });
  const ahead = new SteppedArenaPrefault();
  const asked: number[] = [];
  const mirror: RingMirror = new RingMirror({
    history,
    metrics: new CacheMetrics(DEFAULT_RESOURCE),
    indexers: {},
    onDesync: (message) => assert.fail(message),
    prefaultArena: (upTo) => {
      asked.push(upTo);
      ahead.request(mirror.handle.arena, upTo);
    },
  });
  for (let rv = 1; rv <= 50; rv++) {
    const event = new WatchCacheEvent('ADDED', makePod(rv), undefined, rv, 0, undefined);
    history.append(event);
    mirror.appended(event, undefined);
  }
  assert.ok(asked.length > 0, 'the mirror asked for its arena ahead');
  assert.equal(ahead.pages, 0, 'nothing is touched until commit (the timed calls pay none of it)');
  ahead.commit();
  const arena = mirror.handle.arena.byteLength;
  // Every page of what was asked (up to the arena's end), one touch each: 4 KiB pages, rounded up.
  assert.equal(ahead.pages, Math.ceil(Math.min(Math.max(...asked), arena) / 4096));
  ahead.commit();
  assert.equal(ahead.pages, Math.ceil(Math.min(Math.max(...asked), arena) / 4096), 'a second commit touches nothing');
});
