/**
 * Beta with the real sync worker thread (real clock): slow watchers that stop
 * reading and resume are caught up by the worker over the shared history
 * ring and handed back; every watcher gets every event exactly once, in
 * order; nothing is force-closed and the live path never skips an event.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import diagnostics_channel from 'node:diagnostics_channel';
import { MemoryStore, WatchCache } from '../../src/index.js';
import { asWatcher, type Watcher } from '../../src/watch/watcher.js';
import { stallPolicyOf, betaSyncOf } from '../../src/cache/cache-internals.js';

async function consume(w: Watcher, want: number, pauseEvery: number, pauseMs: number): Promise<number[]> {
  const rvs: number[] = [];
  // next() by hand, not for-await: leaving a for-await loop stops the watch, and the caller keeps it
  // open after its `want` events (a watcher the worker still owns is handed back once it has read them).
  const it = w[Symbol.asyncIterator]();
  while (rvs.length < want) {
    const r = await it.next();
    if (r.done === true) break;
    const ev = r.value;
    if (ev.type === 'BOOKMARK') continue;
    assert.notEqual(ev.type, 'ERROR', `unexpected ERROR ${JSON.stringify(ev.object)}`);
    rvs.push(Number(ev.object.metadata.resourceVersion));
    if (pauseEvery > 0 && rvs.length % pauseEvery === 0) await sleep(pauseMs);
  }
  return rvs;
}

test(
  'beta (worker thread): stalled watchers resume and get every event once, in order',
  { timeout: 120_000 },
  async (t) => {
    const store = new MemoryStore();
    const cache = new WatchCache({ store, mode: 'beta', history: { lowerBound: 100, upperBound: 102400 } });
    assert.equal(betaSyncOf(cache) !== undefined, true);
    const workerErrors: string[] = [];
    betaSyncOf(cache)!.onWorkerError = (m) => workerErrors.push(m);
    await cache.start();
    t.after(() => cache.stop());
    await store.create({ metadata: { namespace: 'ns', name: 'first' } });
    while (cache.resourceVersion < 1) await sleep(1);
    const N = 3000;
    const start = String(cache.resourceVersion); // '1': watches from here replay history
    const healthy = asWatcher(cache.watch({ resourceVersion: start, channelCapacity: 100 }));
    const slow = Array.from({ length: 6 }, () =>
      asWatcher(cache.watch({ resourceVersion: start, channelCapacity: 5 })),
    );
    const readers = [consume(healthy, N, 0, 0), ...slow.map((w, i) => consume(w, N, 200 + i * 50, 30 + i * 10))];
    // A late watcher from an old RV: served by the same resync path.
    let late: Promise<number[]> | undefined;
    for (let i = 0; i < N; i++) {
      await store.create({ metadata: { namespace: 'ns', name: `p${i}` }, spec: { i } });
      if (i === N / 2) late = consume(asWatcher(cache.watch({ resourceVersion: start, channelCapacity: 10 })), N, 0, 0);
      if (i % 100 === 0) await sleep(1);
    }
    const results = await Promise.all([...readers, late!]);
    const want = Array.from({ length: N }, (_, i) => Number(start) + i + 1);
    for (const [k, rvs] of results.entries()) assert.deepEqual(rvs, want, `watcher ${k} got a different sequence`);
    assert.equal(await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' }), 0);
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_watcher_skipped_events_total'),
      0,
      'resync at the last dispatched RV: nothing to skip',
    );
    assert.ok((await cache.metricValue('apiserver_watch_cache_watcher_stalls_total')) > 0, 'the slow watchers stalled');
    // A slow watcher may read its last event while the worker still owns it (its channel was full when
    // the worker reached the end); the worker hands it back once the read left room. Wait for that (all
    // the watchers are still open), then check.
    for (
      let i = 0;
      i < 300 && (await cache.metricValue('apiserver_watch_cache_watcher_catchup_rounds_total')) === 0;
      i++
    )
      await sleep(100);
    assert.ok(
      (await cache.metricValue('apiserver_watch_cache_watcher_catchup_rounds_total')) > 0,
      'and were caught up',
    );
    assert.ok(betaSyncOf(cache)!.workerStats.pushes > 0, 'by the worker thread');
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'msgpack' }),
      N + 1,
      'each event encoded once into the ring',
    );
    assert.deepEqual(workerErrors, []);
  },
);

test(
  'beta (worker thread): a watcher whose position ages out gets its backlog, then one 410',
  { timeout: 60_000 },
  async () => {
    const store = new MemoryStore();
    const cache = new WatchCache({
      store,
      mode: 'beta',
      history: { lowerBound: 16, upperBound: 32, eventFreshDurationMs: 1 },
    });
    await cache.start();
    const w = asWatcher(cache.watch({ resourceVersion: String(cache.resourceVersion), channelCapacity: 4 }));
    for (let i = 0; i < 300; i++) await store.create({ metadata: { namespace: 'ns', name: `p${i}` } });
    await sleep(200);
    const got: string[] = [];
    for await (const ev of w)
      got.push(
        ev.type === 'ERROR'
          ? `ERROR ${(ev.object as unknown as { code: number }).code}`
          : `${ev.type}@${ev.object.metadata.resourceVersion}`,
      );
    assert.equal(got[got.length - 1], 'ERROR 410');
    const data = got.slice(0, -1).map((x) => Number(x.split('@')[1]));
    assert.deepEqual(
      data,
      Array.from({ length: data.length }, (_, i) => i + 1),
      'the backlog before the 410 is a gap-free prefix',
    );
    assert.ok(
      (await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'resource_expired' })) +
        (await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' })) ===
        1,
    );
    await cache.stop();
  },
);

test(
  'beta (worker thread): hundreds of stalled watchers; a worker crash mid-catch-up loses and duplicates nothing',
  { timeout: 120_000 },
  async (t) => {
    const store = new MemoryStore();
    const cache = new WatchCache({ store, mode: 'beta', history: { lowerBound: 100, upperBound: 102400 } });
    await cache.start();
    t.after(() => cache.stop());
    await store.create({ metadata: { namespace: 'ns', name: 'first' } });
    while (cache.resourceVersion < 1) await sleep(1);
    const start = String(cache.resourceVersion);
    const N = 2000;
    const STALLED = 300;
    const healthy = asWatcher(cache.watch({ resourceVersion: start, channelCapacity: 100 }));
    const stalled = Array.from({ length: STALLED }, () =>
      asWatcher(cache.watch({ resourceVersion: start, channelCapacity: 4 })),
    );
    const healthyDone = consume(healthy, N, 0, 0);
    for (let i = 0; i < N; i++) {
      await store.create({ metadata: { namespace: 'ns', name: `p${i}` }, spec: { i } });
      if (i % 200 === 0) await sleep(1);
    }
    // Every stalled watcher is now unsynced and owned by the worker (once the hand-over's slices have run:
    // a slice per turn, bounded by time); the main thread never ran a pass.
    for (let i = 0; i < 5000 && betaSyncOf(cache)!.stallsPending > 0; i++) await sleep(1);
    assert.equal(stallPolicyOf(cache), undefined, 'beta has no main-thread pass machinery');
    assert.ok(
      betaSyncOf(cache)!.unsynced.size >= STALLED - 1,
      `expected the stalled watchers to be unsynced, got ${betaSyncOf(cache)!.unsynced.size}`,
    );
    // They resume; half-way through catching up the worker thread dies.
    // The worker's totals, as the observer and the stats see them, never go back (a new worker counts from 0).
    const backwards: string[] = [];
    const onPass = (m: unknown): void => {
      const p = m as { thread: string; passes: number; pushes: number; scanned: number; durationMs: number };
      if (p.thread === 'worker' && (p.passes < 0 || p.pushes < 0 || p.scanned < 0 || p.durationMs < 0))
        backwards.push(`${p.passes} passes, ${p.pushes} pushes, ${p.scanned} scanned, ${p.durationMs} ms`);
    };
    diagnostics_channel.subscribe('watchcache:pass', onPass);
    t.after(() => diagnostics_channel.unsubscribe('watchcache:pass', onPass));
    const readers = stalled.map((w) => consume(w, N, 0, 0));
    await sleep(30);
    // (once the worker has reported some of its pushes, so that there are totals to keep)
    for (let i = 0; i < 2000 && betaSyncOf(cache)!.workerStats.pushes === 0; i++) await sleep(5);
    const beforeCrash = { ...betaSyncOf(cache)!.workerStats };
    await betaSyncOf(cache)!.crashWorkerForTest();
    const results = await Promise.all([healthyDone, ...readers]);
    const want = Array.from({ length: N }, (_, i) => Number(start) + i + 1);
    for (const [k, rvs] of results.entries()) assert.deepEqual(rvs, want, `watcher ${k} got a different sequence`);
    assert.equal(await cache.metricValue('apiserver_watch_cache_sync_worker_restarts_total'), 1);
    assert.equal(await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' }), 0);
    assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_skipped_events_total'), 0);
    assert.ok(betaSyncOf(cache)!.workerStats.passes > 0);
    const after = betaSyncOf(cache)!.workerStats;
    assert.ok(after.pushes >= beforeCrash.pushes && after.passes >= beforeCrash.passes, 'the totals went back');
    assert.deepEqual(backwards, [], 'a pass notice with a negative delta');
  },
);
