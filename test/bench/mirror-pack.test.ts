/**
 * The ring mirror against its own pack (native-bench/floor/mirror-pack.ts):
 * a small run gives two finite, positive rows (the mirror, then the pack of
 * the same suite updates), and the report's engine-vs-floor ratios put the
 * mirror against that pack for beta. Nothing here depends on the figures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mirrorVsPack } from '../../native-bench/floor/mirror-pack.js';
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
