/**
 * Gate-off parity and the stall scenario of the KEP Test Plan.
 *
 * Parity: the same watch scenario in `off`, `alpha` and `beta` gives
 * identical results for watchers that never stall.
 *
 * Stall: one healthy watcher and several slow ones (channel 5) that stop
 * reading and resume, 3,000 events, a history large enough that nothing
 * expires: alpha and beta deliver every event exactly once in order to every
 * watcher with zero force-closes; off force-closes the slow ones.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, WatchOptions } from '../../src/index.js';
import { asWatcher, type Watcher } from '../../src/watch/watcher.js';
import type { WatchEvent } from '../../src/wire/watch-event.js';
import { Reader, type VirtualClock, flush, objectRVs, pod, setup, withTimeout } from './support/harness.js';

const MODES = ['off', 'alpha', 'beta'] as const;
const nodeName = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

/** A tiny deterministic PRNG (LCG). */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const fmt = (e: WatchEvent): string =>
  `${e.type}:${e.object.metadata.namespace ?? ''}/${e.object.metadata.name ?? ''}:${e.object.metadata.resourceVersion}:${JSON.stringify(e.object.metadata.labels ?? {})}:${nodeName(e.object) ?? ''}${e.object.metadata.annotations ? ':' + JSON.stringify(e.object.metadata.annotations) : ''}`;

async function parityScenario(
  mode: (typeof MODES)[number],
): Promise<{ streams: string[][]; terminated: number; stalls: number }> {
  const { cache, store, clock } = await setup({
    mode,
    indexers: { 'spec.nodeName': nodeName },
    channelCapacity: 1000,
    history: { lowerBound: 2000, upperBound: 2000 },
  });
  const rand = rng(42);
  const live = new Map<string, KubeObject>();
  const nss = ['a', 'b', 'c'];
  const apps = ['x', 'y', 'z'];
  const nodes = ['n1', 'n2', 'n3'];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  async function op(): Promise<void> {
    const r = rand();
    const keys = [...live.keys()];
    if (keys.length < 5 || r < 0.35) {
      const name = `p${Math.floor(rand() * 40)}`;
      const ns = pick(nss);
      const key = `${ns}/${name}`;
      if (live.has(key)) return;
      live.set(key, await store.create(pod(name, { ns, labels: { app: pick(apps) }, nodeName: pick(nodes) })));
    } else if (r < 0.85) {
      const key = pick(keys);
      const cur = live.get(key)!;
      const next =
        rand() < 0.5
          ? { ...cur, metadata: { ...cur.metadata, labels: { app: pick(apps) } } }
          : { ...cur, spec: { nodeName: pick(nodes), n: rand() } };
      live.set(key, await store.update(next));
    } else {
      const key = pick(keys);
      const cur = live.get(key)!;
      await store.delete(cur.metadata.namespace!, cur.metadata.name!);
      live.delete(key);
    }
  }
  for (let i = 0; i < 30; i++) await op();
  await flush();
  const specs: WatchOptions[] = [
    { resourceVersion: '0' },
    { resourceVersion: '0', namespace: 'a' },
    { resourceVersion: '0', labelSelector: 'app in (x,y)' },
    { resourceVersion: '0', fieldSelector: 'spec.nodeName=n1' },
    { resourceVersion: '0', fieldSelector: 'spec.nodeName=n2', labelSelector: 'app!=z', namespace: 'b' },
    { resourceVersion: '5' },
    { resourceVersion: '10', labelSelector: 'app=x' },
    { resourceVersion: '12', fieldSelector: 'spec.nodeName=n3' },
    { resourceVersion: '0', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true, allowWatchBookmarks: true },
    {
      resourceVersion: '20',
      resourceVersionMatch: 'NotOlderThan',
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      namespace: 'c',
    },
    {
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
      sendInitialEvents: false,
      fieldSelector: 'metadata.namespace!=a',
    },
    { resourceVersion: '300' },
  ];
  const readers = specs.map((o) => new Reader(asWatcher(cache.watch(o))));
  for (let i = 0; i < 400; i++) {
    await op();
    if (i === 200) readers.push(new Reader(asWatcher(cache.watch({ resourceVersion: '100', labelSelector: 'app=y' }))));
    if (i % 10 === 9) {
      await flush();
      await clock.advance(5);
      for (const r of readers) await r.drain();
    }
  }
  await flush();
  for (let i = 0; i < 20; i++) {
    await clock.advance(10);
    for (const r of readers) await r.drain();
  }
  const streams = readers.map((r) => r.events.map(fmt));
  const terminated = await cache.metricValue('apiserver_terminated_watchers_total');
  const stalls = await cache.metricValue('apiserver_watch_cache_watcher_stalls_total');
  for (const r of readers) r.w.stop();
  await cache.stop();
  return { streams, terminated, stalls };
}

describe('gate-off parity: watchers that never stall see the same streams in off, alpha and beta', () => {
  test('a mixed scenario: state, history and future starts, selectors, trigger index, WatchList', async () => {
    const results = [];
    for (const mode of MODES) results.push(await parityScenario(mode));
    const [off, alpha, beta] = results as [
      Awaited<ReturnType<typeof parityScenario>>,
      Awaited<ReturnType<typeof parityScenario>>,
      Awaited<ReturnType<typeof parityScenario>>,
    ];
    for (const r of results) {
      assert.equal(r.terminated, 0);
      assert.equal(r.stalls, 0);
    }
    assert.ok(
      off.streams.every((s) => s.length > 0),
      'every watcher saw something',
    );
    assert.ok(off.streams.every((s) => s.every((e) => !e.startsWith('ERROR'))));
    assert.ok(off.streams[8]!.some((e) => e.includes('initial-events-end')));
    for (let i = 0; i < off.streams.length; i++) {
      assert.deepEqual(alpha.streams[i], off.streams[i], `alpha watcher ${i}`);
      assert.deepEqual(beta.streams[i], off.streams[i], `beta watcher ${i}`);
    }
  });
});

/** Read `w` in the background; after each event, `pause(n)` virtual ms (0: keep reading). */
function consume(w: Watcher, clock: VirtualClock, out: WatchEvent[], pause: (n: number) => number): Promise<void> {
  return (async () => {
    for await (const e of w) {
      out.push(e);
      const p = pause(out.length);
      if (p > 0) await clock.sleep(p);
    }
  })();
}

const TOTAL = 3000;
const SLOW = 4;

async function stallScenario(mode: (typeof MODES)[number]) {
  const { cache, store, clock } = await setup({ mode, history: { lowerBound: 100, upperBound: 8192 } });
  const healthyOut: WatchEvent[] = [];
  const healthy = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 100 }));
  const healthyDone = consume(healthy, clock, healthyOut, () => 0);
  const slow = Array.from({ length: SLOW }, () => asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 5 })));
  const slowOut: WatchEvent[][] = slow.map(() => []);
  const slowDone: Promise<void>[] = [];
  let reading = false;
  const names = Array.from({ length: 30 }, (_, i) => `p${i}`);
  const objs = new Map<string, KubeObject>();
  for (let i = 0; i < TOTAL; i++) {
    const name = names[i % names.length]!;
    const cur = objs.get(name);
    objs.set(
      name,
      cur === undefined
        ? await store.create(pod(name, { labels: { app: 'x' } }))
        : await store.update({ ...cur, spec: { i } }),
    );
    if (i === 1000) {
      // the slow watchers resume, each stopping again for a while every 250..400 events
      reading = true;
      slow.forEach((w, k) =>
        slowDone.push(consume(w, clock, slowOut[k]!, (n) => (n % (250 + 50 * k) === 0 ? 5 + 7 * k : 0))),
      );
    }
    if (i % 10 === 9) {
      await flush(1);
      await clock.advance(2);
    }
  }
  assert.equal(reading, true);
  await flush();
  for (let t = 0; t < 30_000; t += 20) {
    if (healthyOut.length >= TOTAL && slowOut.every((o, k) => o.length >= TOTAL || slow[k]!.stopped)) break;
    await clock.advance(20);
  }
  const metrics = {
    terminated: await cache.metricValue('apiserver_terminated_watchers_total'),
    unresponsive: await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' }),
    stalls: await cache.metricValue('apiserver_watch_cache_watcher_stalls_total'),
    rounds: await cache.metricValue('apiserver_watch_cache_watcher_catchup_rounds_total'),
    skipped: await cache.metricValue('apiserver_watch_cache_watcher_skipped_events_total'),
    stalled: await cache.metricValue('apiserver_watch_cache_stalled_watchers'),
  };
  const slowStopped = slow.map((w) => w.stopped);
  const history = cache.historyBounds();
  healthy.stop();
  for (const w of slow) w.stop();
  await cache.stop();
  await clock.advance(100); // wake readers sleeping between reads
  await withTimeout(Promise.all([healthyDone, ...slowDone]), 10_000, 'readers ending');
  return { healthyOut, slowOut, metrics, slowStopped, history };
}

const ALL = Array.from({ length: TOTAL }, (_, i) => i + 1);

describe('stall scenario: 1 healthy and 4 slow watchers (channel 5), 3,000 events', () => {
  for (const mode of ['alpha', 'beta'] as const) {
    test(`${mode}: every event exactly once, in order, to every watcher; zero force-closes`, async () => {
      const r = await stallScenario(mode);
      assert.equal(r.history.removed, false, 'the history kept everything (the scenario must not expire anyone)');
      assert.deepEqual(objectRVs(r.healthyOut), ALL, 'healthy');
      for (const [k, out] of r.slowOut.entries()) {
        const rvs = objectRVs(out);
        assert.equal(rvs.length, TOTAL, `slow ${k} got ${rvs.length}`);
        assert.deepEqual(rvs, ALL, `slow ${k}: exactly once, in order`);
        assert.ok(out.every((e) => e.type !== 'ERROR'));
      }
      assert.deepEqual(r.slowStopped, [false, false, false, false]);
      assert.equal(r.metrics.terminated, 0);
      assert.ok(r.metrics.stalls >= SLOW, `stalls ${r.metrics.stalls}`);
      assert.ok(r.metrics.rounds >= SLOW, 'every slow watcher resynced');
      assert.equal(r.metrics.stalled, 0, 'nobody left unsynced');
      if (mode === 'beta')
        assert.equal(r.metrics.skipped, 0, 'beta resyncs at the last dispatched RV: nothing skipped');
    });
  }

  test('off: the slow watchers are force-closed (unresponsive), the healthy one gets everything', async () => {
    const r = await stallScenario('off');
    assert.deepEqual(objectRVs(r.healthyOut), ALL);
    assert.deepEqual(r.slowStopped, [true, true, true, true]);
    assert.equal(r.metrics.unresponsive, SLOW);
    for (const out of r.slowOut) {
      assert.ok(objectRVs(out).length < TOTAL);
      assert.ok(
        out.every((e) => e.type !== 'ERROR'),
        'force-close is silent',
      );
    }
  });
});
