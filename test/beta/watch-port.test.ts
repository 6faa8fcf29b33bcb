/**
 * Watching from another thread: cache.watchPort() in the main thread,
 * openWatch() in a worker thread, events through shared memory only. The
 * remote consumer sees the initial state, then every live event once, in
 * order, also after stalling (the sync worker catches it up); its stop()
 * reaches the server; a 410 reaches it as an ERROR event.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MemoryStore,
  WatchCache,
  BadRequestError,
  type WatchCacheOptions,
  type WatchPortHandle,
} from '../../src/index.js';
import { SyncCursor } from '../../src/sync/sync-cursor.js';

function consumeRemotely(
  handle: WatchPortHandle,
  opts: { want: number; pauseAfter?: number; pauseMs?: number; stopAfter?: number },
): Promise<string[]> {
  const worker = new Worker(new URL('./remote-consumer-worker.js', import.meta.url), {
    workerData: {
      handle,
      want: opts.want,
      pauseAfter: opts.pauseAfter ?? -1,
      pauseMs: opts.pauseMs ?? 0,
      stopAfter: opts.stopAfter ?? 0,
    },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (got: string[]) => resolve(got));
    worker.once('error', reject);
  });
}

/** A started beta cache on a fresh memory store, stopped when the test ends. */
async function betaCache(
  t: TestContext,
  options: Partial<WatchCacheOptions> = {},
): Promise<{ store: MemoryStore; cache: WatchCache }> {
  const store = new MemoryStore();
  const cache = new WatchCache({ ...options, store, mode: 'beta' });
  await cache.start();
  t.after(() => cache.stop());
  return { store, cache };
}

test(
  'watchPort/openWatch: initial state, then live events once and in order across a stall',
  { timeout: 60_000 },
  async (t) => {
    const { store, cache } = await betaCache(t);
    for (let i = 0; i < 3; i++) await store.create({ metadata: { namespace: 'ns', name: `a${i}` } });
    while (cache.resourceVersion < 3) await sleep(1);
    const handle = cache.watchPort({ resourceVersion: '0', channelCapacity: 4 });
    assert.doesNotThrow(() => structuredClone(handle), 'the handle is plain data and shared memory');
    const N = 500;
    const result = consumeRemotely(handle, { want: 3 + N, pauseAfter: 10, pauseMs: 300 });
    for (let i = 0; i < N; i++) {
      await store.create({ metadata: { namespace: 'ns', name: `p${i}` } });
      if (i % 50 === 0) await sleep(1);
    }
    const got = await result;
    const want = [
      'ADDED:a0@1',
      'ADDED:a1@2',
      'ADDED:a2@3',
      ...Array.from({ length: N }, (_, i) => `ADDED:p${i}@${i + 4}`),
    ];
    assert.deepEqual(got, want);
    assert.ok(
      (await cache.metricValue('apiserver_watch_cache_watcher_stalls_total')) > 0,
      'the remote consumer stalled and was caught up',
    );
  },
);

test(
  'watchPort: the remote stop() unregisters the watch; malformed uses are refused',
  { timeout: 60_000 },
  async (t) => {
    const { store, cache } = await betaCache(t);
    const handle = cache.watchPort({ resourceVersion: String(cache.resourceVersion) });
    assert.equal(cache.watcherCount, 1);
    const result = consumeRemotely(handle, { want: 100, stopAfter: 2 });
    await store.create({ metadata: { namespace: 'ns', name: 'x' } });
    await store.create({ metadata: { namespace: 'ns', name: 'y' } });
    assert.deepEqual(await result, ['ADDED:x@1', 'ADDED:y@2']);
    for (let i = 0; i < 50 && cache.watcherCount > 0; i++) {
      await store.create({ metadata: { namespace: 'ns', name: `z${i}` } });
      await sleep(5);
    }
    assert.equal(cache.watcherCount, 0, 'the server noticed the remote stop');
    assert.throws(() => cache.watchPort({ resourceVersion: '' }), BadRequestError);
    const alpha = new WatchCache({ store: new MemoryStore(), mode: 'alpha' });
    await alpha.start();
    assert.throws(() => alpha.watchPort({}), /needs mode beta/);
    await alpha.stop();
  },
);

test(
  'watchPort: a start RV older than the history reaches the other thread as one ERROR 410',
  { timeout: 60_000 },
  async (t) => {
    const { store, cache } = await betaCache(t, { history: { lowerBound: 8, upperBound: 8 } });
    for (let i = 0; i < 30; i++) await store.create({ metadata: { namespace: 'ns', name: `p${i}` } });
    while (cache.resourceVersion < 30) await sleep(1);
    const got = await consumeRemotely(cache.watchPort({ resourceVersion: '2' }), { want: 100 });
    assert.deepEqual(got, ['ERROR:@410']);
  },
);

test(
  'openWatch: a consumer in another thread sets the drained flag in the shared cursor cell, as an in-thread one does',
  { timeout: 60_000 },
  async (t) => {
    const { store, cache } = await betaCache(t);
    const handle = cache.watchPort({ resourceVersion: String(cache.resourceVersion) });
    const cursor = new SyncCursor(handle.cursor); // the same shared cell the sync worker reads
    assert.equal(cursor.drainedSinceService, false);
    const result = consumeRemotely(handle, { want: 2 });
    await store.create({ metadata: { namespace: 'ns', name: 'x' } });
    await store.create({ metadata: { namespace: 'ns', name: 'y' } });
    assert.deepEqual(await result, ['ADDED:x@1', 'ADDED:y@2']);
    assert.equal(
      cursor.drainedSinceService,
      true,
      'the remote consumer emptied its channel: candidate order key 2 reaches the worker',
    );
  },
);
