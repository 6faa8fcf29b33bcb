/**
 * MemoryStore compacts itself (issue 15 item 2): by count, by bytes and by
 * age, recording the RV it compacted to, so a watch from an older RV fails
 * as compacted (the API's 410), while a running watch never loses an event
 * it was not handed yet, and the cache over it keeps serving.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realClock, type Clock } from '../../src/core/clock.js';
import type { StoreEvent } from '../../src/core/types.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StoreCompactedError } from '../../src/store/store-errors.js';

const pod = (name: string, payload = 0) => ({
  metadata: { namespace: 'd', name },
  spec: { payload: 'x'.repeat(payload) },
});

function watchError(store: MemoryStore, afterRV: number): Promise<Error> {
  return new Promise((resolve) => {
    const w = store.watch(
      afterRV,
      () => {},
      (err) => {
        w.stop();
        resolve(err);
      },
    );
  });
}

test('by count: the log stays under maxEvents; an RV below the compaction point fails as compacted', async () => {
  const store = new MemoryStore({ compaction: { maxEvents: 100 } });
  for (let i = 0; i < 1000; i++) await store.create(pod(`p${i}`));
  assert.ok(store.logLength <= 100, `log ${store.logLength}`);
  assert.ok(store.compactedResourceVersion >= 900, `compacted to ${store.compactedResourceVersion}`);
  const err = await watchError(store, 5);
  assert.ok(err instanceof StoreCompactedError);
  assert.equal(err.compactedRV, store.compactedResourceVersion);
  // A watch from the compacted RV itself still replays what is kept.
  const got: StoreEvent[] = [];
  const w = store.watch(
    store.compactedResourceVersion,
    (e) => got.push(e),
    () => assert.fail('unexpected error'),
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(got.length, 1000 - store.compactedResourceVersion);
  w.stop();
});

test('by bytes: 2,000 writes of 30 KB keep at most maxBytes of history', async () => {
  const store = new MemoryStore({ compaction: { maxBytes: 4 * 1024 * 1024 } });
  for (let i = 0; i < 2000; i++) await store.create(pod(`p${i}`, 30_000));
  assert.ok(store.logLength * 30_000 <= 4 * 1024 * 1024, `log ${store.logLength} entries of 30 KB`);
  assert.ok(store.compactedResourceVersion > 1800);
});

test('by age: entries older than maxAgeMs are dropped on a later write', async () => {
  let now = 1_000_000;
  const clock: Clock = { ...realClock, now: () => now };
  const store = new MemoryStore({ clock, compaction: { maxAgeMs: 60_000 } });
  for (let i = 0; i < 10; i++) await store.create(pod(`old${i}`));
  now += 61_000;
  await store.create(pod('new'));
  assert.equal(store.compactedResourceVersion, 10);
  assert.equal(store.logLength, 1);
});

test('a running watch never loses an undelivered event, and the cache keeps serving', async () => {
  const store = new MemoryStore({ compaction: { maxEvents: 10 } });
  const seen: number[] = [];
  const w = store.watch(
    0,
    (e) => seen.push(e.resourceVersion),
    () => assert.fail('the running watch failed'),
  );
  // A synchronous burst of 100 writes before the watch's delivery runs.
  await Promise.all(Array.from({ length: 100 }, (_, i) => store.create(pod(`b${i}`))));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    seen,
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  w.stop();
  const cache = new WatchCache({ store, mode: 'beta' });
  await cache.start();
  for (let i = 0; i < 100; i++) await store.create(pod(`c${i}`));
  const list = await cache.list({ resourceVersion: '' });
  assert.equal(list.items.length, 200);
  assert.ok(store.logLength <= 10);
  await cache.stop();
});

test('compaction: false keeps everything', async () => {
  const store = new MemoryStore({ compaction: false });
  for (let i = 0; i < 300; i++) await store.create(pod(`p${i}`));
  assert.equal(store.logLength, 300);
  assert.equal(store.compactedResourceVersion, 0);
});
