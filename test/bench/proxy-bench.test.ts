/**
 * Smoke test of the proxy benchmark (native-bench/proxy-bench.ts): a tiny fleet (2 proxies, 2
 * clients each, one slow) runs for a few seconds in one mode, the blip included, and the row
 * has the report's shape with finite numbers; its flags parse. Nothing here asserts timing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBenchArgs } from '../../native-bench/bench-args.js';
import { runProxySweep } from '../../native-bench/proxy-bench.js';
import { sections } from '../../native-bench/report/tables.js';
import type { BenchReport } from '../../native-bench/lib/types.js';

function assertFinite(value: unknown, path = 'row'): void {
  if (typeof value === 'number') assert.ok(Number.isFinite(value), `${path} is ${value}`);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) assertFinite(v, `${path}.${k}`);
}

test('proxy bench flags: --suite proxy with its own flags; not in the default run', () => {
  const p = parseBenchArgs([
    '--suite',
    'proxy',
    '--proxies',
    '6',
    '--proxy-clients',
    '3',
    '--proxy-slow',
    '2',
    '--proxy-rate',
    '50',
    '--proxy-duration',
    '9',
  ]);
  assert.deepEqual(p.suites, ['proxy']);
  assert.deepEqual(p.proxy, { proxies: 6, clientsPerProxy: 3, slowPerProxy: 2, rate: 50, durationS: 9, blipS: 5 });
  assert.equal(parseBenchArgs([]).proxy.proxies, 20);
  assert.ok(!parseBenchArgs([]).suites.includes('proxy'));
  assert.throws(() => parseBenchArgs(['--proxy-clients', '2', '--proxy-slow', '2']), /must be below/);
});

test('proxy bench smoke (beta): one row, finite numbers, a table', { timeout: 180_000 }, async () => {
  const rows = await runProxySweep({
    modes: ['beta'],
    proxies: 2,
    clientsPerProxy: 2,
    slowPerProxy: 1,
    rate: 40,
    durationS: 8,
    blipS: 2,
  });
  assert.equal(rows.length, 1);
  const r = rows[0]!;
  assertFinite(r);
  assert.equal(r.mode, 'beta');
  assert.ok(r.writes > 0);
  assert.ok(r.rootWatchesMax >= 1);
  assert.ok(r.latencyUncut.count > 0);
  const report = {
    meta: {},
    kep: [],
    catchup: [],
    throughput: [],
    floor: [],
    peers: { naive: [], etcd: [], etcdSkipped: '', http: [], httpSkipped: '' },
    proxy: rows,
    ratios: [],
  } as unknown as BenchReport;
  assert.ok(sections(report).some(([title]) => /Caching proxy/.test(title)));
});
