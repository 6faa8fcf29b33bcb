/**
 * Beta's chunked stall (issue 13, deliverable 1; src/beta/stall-hand-over.ts):
 * the dispatch that fills thousands of channels only marks the watchers
 * (position X - 1, the unsynced flag); they reach the sync worker in chunks,
 * one per turn. Events dispatched before and between those chunks must
 * still reach every stalled watcher exactly once and in order (invariants
 * 1 and 2), and a watcher that ends before its turn is never handed over.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HAND_OVER_CHUNK, HAND_OVER_MIN } from '../../src/beta/stall-hand-over.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { churn, flush, objectRVs, Reader } from '../unit/support/harness.js';
import { virtualBeta, WritesBetweenSlices } from './virtual-beta.js';

const N = 2500; // ten slices or more

test('beta: a mass stall is handed over in chunks; events dispatched meanwhile reach every stalled watcher once, in order', async () => {
  const { clock, cache, store, beta, from, watchers: stalled } = await virtualBeta(N, 2);
  const healthy = asWatcher(cache.watch({ resourceVersion: String(from), channelCapacity: 1000 }));
  await clock.advance(5); // the introductions are posted
  await flush();

  // The third event finds every stalled channel full: one dispatch marks all of them, hands over none.
  await churn(store, 3);
  assert.ok(
    stalled.every((w) => w.unsynced),
    'all marked unsynced in the dispatch',
  );
  assert.ok(
    stalled.every((w) => w.position === from + 2),
    'each at X - 1 (invariant 1)',
  );
  // Separate sets from the mark on: the events dispatched before their slices do not even visit them.
  assert.ok(
    stalled.every((w) => w.indexBucket === undefined),
    'every stalled watcher left the live index at the mark',
  );
  assert.notEqual(healthy.indexBucket, undefined, 'the healthy watcher is still indexed');
  assert.equal(beta.stallsPending, N, 'nothing handed to the worker inside the dispatch');
  assert.equal(beta.unsynced.size, 0);
  assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_stalls_total'), N);
  assert.equal(await cache.metricValue('apiserver_watch_cache_stalled_watchers'), N, 'the gauge counts them at once');

  // Events before the first chunk...
  await churn(store, 3);
  assert.equal(beta.stallsPending, N);
  // ...and between the chunks: each write is a timer queued behind the next chunk.
  const mid = new WritesBetweenSlices(clock, store, () => beta.stallsPending);
  const pendingAtWrite = mid.pendingAtWrite;
  mid.start();
  await clock.advance(0);
  await flush();
  assert.equal(beta.stallsPending, 0, 'every chunk ran');
  // A slice is at most HAND_OVER_CHUNK watchers, fewer once it has used its time budget, never under HAND_OVER_MIN.
  const firstSlice = N - pendingAtWrite[0]!;
  assert.ok(
    firstSlice >= HAND_OVER_MIN && firstSlice <= HAND_OVER_CHUNK,
    `the first write came right after the first slice (${firstSlice} handed over)`,
  );
  assert.ok(
    pendingAtWrite.some((p) => p > 0 && p < N),
    `events were dispatched in the middle of the hand-over (pending at each write: ${pendingAtWrite.join(', ')})`,
  );
  assert.equal(beta.unsynced.size, N, 'all handed over');

  // Read everything: each stalled watcher gets every event after its start once, in order, and resyncs.
  const last = store.resourceVersion;
  const want = Array.from({ length: last - from }, (_, i) => from + i + 1);
  const readers = [...stalled, healthy].map((w) => new Reader(w));
  for (let round = 0; round < 500; round++) {
    for (const r of readers) await r.drain();
    if (readers.every((r) => r.events.length >= want.length) && beta.unsynced.size === 0) break;
    await clock.advance(20);
  }
  for (const [k, r] of readers.entries()) assert.deepEqual(objectRVs(r.events), want, `watcher ${k}`);
  assert.equal(beta.unsynced.size, 0, 'all resynced');
  assert.ok(stalled.every((w) => !w.unsynced && w.accepting));
  assert.equal(await cache.metricValue('apiserver_watch_cache_stalled_watchers'), 0);
  assert.equal(await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'resource_expired' }), 0);
  assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_skipped_events_total'), 0);
  await cache.stop();
});

test('beta: a stalled watcher that ends before its hand-over turn is dropped, never handed over', async () => {
  const { clock, cache, store, beta, watchers: stalled } = await virtualBeta(N, 2);
  await clock.advance(5);
  await flush();
  await churn(store, 3);
  assert.equal(beta.stallsPending, N);
  const [gone, kept] = [stalled.slice(0, N / 2), stalled.slice(N / 2)];
  for (const w of gone) w.stop();
  await clock.advance(0);
  await flush();
  assert.equal(beta.stallsPending, 0);
  assert.equal(beta.unsynced.size, kept.length, 'only the ones still running were handed over');
  assert.ok(gone.every((w) => !beta.unsynced.has(w)));
  assert.equal(await cache.metricValue('apiserver_watch_cache_stalled_watchers'), kept.length);
  assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_stalls_total'), N, 'each stall counted once');
  assert.equal(beta.pooledChannels, kept.length, "the ended watchers' regions went back to the pool at once");
  await cache.stop();
});
