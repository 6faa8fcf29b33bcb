/**
 * Metrics (API.md "Metrics"): names, types, labels, buckets, and that the
 * engine moves them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { WatchCache, MemoryStore } from '../../src/index.js';
import { type WatchEvent } from '../../src/wire/watch-event.js';
import { Reader, VirtualClock, churn, flush, pod, setup } from './support/harness.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { DEFAULT_RESOURCE } from '../../src/index.js';

const EXPECTED: Record<string, string> = {
  apiserver_watch_cache_watcher_stalls_total: 'counter',
  apiserver_watch_cache_watcher_deferred_events_total: 'counter',
  apiserver_watch_cache_watcher_catchup_rounds_total: 'counter',
  apiserver_watch_cache_watcher_catchup_events: 'histogram',
  apiserver_watch_cache_stalled_watchers: 'gauge',
  apiserver_watch_cache_watcher_skipped_events_total: 'counter',
  apiserver_terminated_watchers_total: 'counter',
  apiserver_watch_cache_read_wait_seconds: 'histogram',
  apiserver_watch_cache_consistent_read_total: 'counter',
  apiserver_watch_cache_event_encodings_total: 'counter',
  apiserver_watch_cache_capacity: 'gauge',
  apiserver_watch_cache_sync_pass_duration_seconds: 'histogram',
  apiserver_registered_watchers: 'gauge',
  apiserver_watch_cache_events_dispatched_total: 'counter',
};

describe('metric names and types', () => {
  for (const mode of ['off', 'alpha', 'beta'] as const) {
    test(`${mode}: every API.md metric is registered with its type and the group/resource labels`, async () => {
      const { cache } = await setup({ mode });
      const json = await cache.metrics.getMetricsAsJSON();
      const byName = new Map(json.map((m) => [m.name, m]));
      for (const [name, type] of Object.entries(EXPECTED)) {
        const m = byName.get(name);
        assert.ok(m !== undefined, `${name} is registered`);
        assert.equal(m.type, type, name);
      }
      const text = await cache.metrics.metrics();
      assert.match(text, /apiserver_watch_cache_capacity\{group="",resource="pods"\} 100/);
      assert.match(
        text,
        /apiserver_watch_cache_consistent_read_total\{group="",resource="pods",success="true",fallback="false"\} 0/,
      );
      await cache.stop();
    });
  }

  test('read_wait_seconds buckets are 0.005 ... 3 (seed 001)', async () => {
    const { cache, store } = await setup();
    await store.create(pod('a'));
    await flush();
    await cache.get('default', 'a', { resourceVersion: '1' }); // observed (0 s)
    const text = await cache.metrics.getSingleMetricAsString('apiserver_watch_cache_read_wait_seconds');
    const les = [...text.matchAll(/_bucket\{le="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(les, [
      '0.005',
      '0.025',
      '0.05',
      '0.1',
      '0.2',
      '0.4',
      '0.6',
      '0.8',
      '1',
      '1.25',
      '1.5',
      '2',
      '3',
      '+Inf',
    ]);
    await cache.stop();
  });

  test('a custom resource labels every series; a shared registry holds several caches', async () => {
    const clock = new VirtualClock();
    const registry = new Registry();
    const pods = new WatchCache({ store: new MemoryStore({ clock }), clock, registry, mode: 'alpha' });
    const cms = new WatchCache({
      store: new MemoryStore({ clock }),
      clock,
      registry,
      mode: 'alpha',
      resource: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' },
    });
    await pods.start();
    await cms.start();
    assert.equal(pods.metrics, registry);
    const text = await registry.getSingleMetricAsString('apiserver_watch_cache_capacity');
    assert.match(text, /group="",resource="pods"/);
    assert.match(text, /group="apps",resource="deployments"/);
    const w = asWatcher(cms.watch({ resourceVersion: '0' }));
    assert.equal(await cms.metricValue('apiserver_registered_watchers'), 1);
    assert.equal(await pods.metricValue('apiserver_registered_watchers'), 0);
    w.stop();
    await pods.stop();
    await cms.stop();
  });
});

describe('metrics move with the engine', () => {
  test('registered_watchers follows watch and stop; events_dispatched counts events', async () => {
    const { cache, store } = await setup({ mode: 'alpha' });
    const a = asWatcher(cache.watch({ resourceVersion: '0' }));
    const b = asWatcher(cache.watch({ resourceVersion: '0' }));
    assert.equal(await cache.metricValue('apiserver_registered_watchers'), 2);
    a.stop();
    assert.equal(await cache.metricValue('apiserver_registered_watchers'), 1);
    await churn(store, 7);
    assert.equal(await cache.metricValue('apiserver_watch_cache_events_dispatched_total'), 7);
    b.stop();
    assert.equal(await cache.metricValue('apiserver_registered_watchers'), 0);
    await cache.stop();
  });

  test('stall metrics: stalls, stalled gauge, deferred events, catch-up rounds and events, pass duration', async () => {
    const { cache, store, clock } = await setup({ mode: 'alpha' });
    const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 })));
    await churn(store, 10);
    assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_stalls_total'), 1);
    assert.equal(await cache.metricValue('apiserver_watch_cache_stalled_watchers'), 1);
    for (let i = 0; i < 50 && r.w.unsynced; i++) {
      await clock.advance(5);
      await r.drain();
    }
    assert.equal(r.w.unsynced, false);
    assert.equal(await cache.metricValue('apiserver_watch_cache_stalled_watchers'), 0);
    assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_catchup_rounds_total'), 1);
    assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_deferred_events_total'), 8);
    const hist = await cache.metrics.getSingleMetricAsString('apiserver_watch_cache_watcher_catchup_events');
    assert.match(hist, /apiserver_watch_cache_watcher_catchup_events_sum\{group="",resource="pods"\} 8/);
    assert.match(hist, /apiserver_watch_cache_watcher_catchup_events_count\{group="",resource="pods"\} 1/);
    assert.ok(
      (await cache.metricValue('apiserver_watch_cache_sync_pass_duration_seconds')) >= 1,
      'pass durations observed',
    );
    r.w.stop();
    await cache.stop();
  });

  test('the capacity gauge follows history resizes', async () => {
    const { cache, store } = await setup({ history: { lowerBound: 10, upperBound: 40 } });
    assert.equal(await cache.metricValue('apiserver_watch_cache_capacity'), 10);
    await churn(store, 25);
    assert.equal(await cache.metricValue('apiserver_watch_cache_capacity'), 40);
    await cache.stop();
  });
});

for (const mode of ['off', 'alpha', 'beta'] as const) {
  describe(
    mode === 'beta'
      ? 'ENGINE BUG (beta ring encoding): encodings counter, one per event per format (beta)'
      : `encodings counter (${mode})`,
    () => {
      // Beta: API.md says msgpack streams send "the msgpack frames as they are in the ring", but beta
      // encodes the ring payload and then the wire frame again: two msgpack encodings per event.
      test(`${mode}: one encoding per event per format, shared by every stream`, async () => {
        const { cache, store } = await setup({ mode });
        const r1 = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
        const r2 = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
        await store.create(pod('a'));
        await flush();
        const [e1] = await r1.drain();
        const [e2] = await r2.drain();
        assert.ok(e1 === e2, 'one shared event object');
        const ev = e1 as WatchEvent;
        const l1 = ev.jsonLine(cache.encodings);
        const l2 = e2!.jsonLine(cache.encodings);
        assert.equal(l1, l2);
        assert.equal(l1.toString().endsWith('\n'), true);
        assert.deepEqual((JSON.parse(l1.toString()) as { type: string }).type, 'ADDED');
        ev.msgpackFrame(cache.encodings);
        ev.msgpackFrame(cache.encodings);
        assert.equal(await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'json' }), 1);
        assert.equal(await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'msgpack' }), 1);
        r1.w.stop();
        r2.w.stop();
        await cache.stop();
      });
    },
  );
}

test('encodings counter: a turn of encodings is one prom-client update per format, read exact at any time', async () => {
  const registry = new Registry();
  const metrics = new CacheMetrics(DEFAULT_RESOURCE, registry);
  const updates = { json: 0, msgpack: 0 };
  for (const format of ['json', 'msgpack'] as const) {
    const series = metrics.encodings[format];
    const inc = series.inc.bind(series);
    series.inc = (n?: number) => {
      updates[format]++;
      inc(n);
    };
  }
  for (let i = 0; i < 1000; i++) metrics.encoded('msgpack');
  for (let i = 0; i < 500; i++) metrics.encoded('json');
  // Read within the same turn: exact.
  assert.equal(await metrics.value('apiserver_watch_cache_event_encodings_total', { format: 'msgpack' }), 1000);
  assert.equal(await metrics.value('apiserver_watch_cache_event_encodings_total', { format: 'json' }), 500);
  for (let i = 0; i < 10; i++) metrics.encoded('msgpack');
  await Promise.resolve(); // the turn ends: the registry's own exposition has them too
  const text = await registry.metrics();
  assert.match(text, /apiserver_watch_cache_event_encodings_total\{[^}]*format="msgpack"[^}]*\} 1010/);
  assert.ok(updates.msgpack <= 2 && updates.json <= 1, `prom-client updates: ${JSON.stringify(updates)}`);
});
