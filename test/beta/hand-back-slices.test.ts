/**
 * Beta's sliced hand-backs (src/beta/hand-back-slices.ts): a burst of the
 * worker's hand-backs is applied a slice per turn, in arrival order, each
 * exactly once; the consumer of each is woken at once; `complete` applies
 * the rest now (a relist, a restarted worker) and `close` drops them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import type { Clock, TimerHandle } from '../../src/core/clock.js';
import { HAND_BACK_CHUNK, HandBackSlices } from '../../src/beta/hand-back-slices.js';
import { handBack } from '../../src/beta/hand-back.js';
import type { SharedWatcherChannel } from '../../src/beta/shared-watcher-channel.js';
import { churn, flush, objectRVs, Reader } from '../unit/support/harness.js';
import { virtualBeta, WritesBetweenSlices } from './virtual-beta.js';

/** A clock whose turns the test runs by hand; `workNow` moves only when `cost` says so. */
class TurnClock implements Clock {
  immediates: (() => void)[] = [];
  work = 0;
  now(): number {
    return this.work;
  }
  workNow(): number {
    return this.work;
  }
  setTimeout(): TimerHandle {
    throw new Error('slices run on setImmediate');
  }
  clearTimeout(): void {}
  setImmediate(callback: () => void): void {
    this.immediates.push(callback);
  }
  random(): number {
    return 0.5;
  }
  /** Run the turn's immediates (those queued during it wait for the next turn). */
  turn(): void {
    const run = this.immediates;
    this.immediates = [];
    for (const f of run) f();
  }
}

function slices(clock: TurnClock, applyCostMs = 0) {
  const applied: number[][] = [];
  const notified: number[] = [];
  const reports: number[][] = [];
  const s = new HandBackSlices(clock, {
    sliced: (count, durationMs) => reports.push([count, durationMs]),
    notify: (id) => notified.push(id),
    apply: (id, position, passPushes) => {
      clock.work += applyCostMs;
      applied.push([id, position, passPushes]);
    },
  });
  return { s, applied, notified, reports };
}

test('hand-back slices: a burst is applied over turns, in order, once each; consumers are woken at once', () => {
  const clock = new TurnClock();
  const { s, applied, notified, reports } = slices(clock);
  const n = 2 * HAND_BACK_CHUNK + 5;
  for (let id = 1; id <= n; id++) s.add(id, 100 + id, id % 7);
  assert.equal(applied.length, 0, 'nothing applied inside the message handler');
  assert.equal(notified.length, n, 'every consumer woken at its message');
  assert.equal(clock.immediates.length, 1, 'one slice scheduled for the burst');
  const perTurn: number[] = [];
  while (clock.immediates.length > 0) {
    const before = applied.length;
    clock.turn();
    perTurn.push(applied.length - before);
  }
  assert.deepEqual(perTurn, [HAND_BACK_CHUNK, HAND_BACK_CHUNK, 5]);
  assert.deepEqual(
    applied,
    Array.from({ length: n }, (_, i) => [i + 1, 101 + i, (i + 1) % 7]),
    'arrival order, each once, with its own numbers',
  );
  assert.equal(s.pending, 0);
  assert.deepEqual(
    reports.map((r) => r[0]),
    [HAND_BACK_CHUNK, HAND_BACK_CHUNK, 5],
    'one report per slice, with its count',
  );
});

test('hand-back slices: a slice ends at its time budget, never below 8 hand-backs', () => {
  const clock = new TurnClock();
  const { s, applied } = slices(clock, 0.1); // 0.1 ms each: the 0.5 ms budget is spent after 5, checked at 8
  for (let id = 1; id <= 20; id++) s.add(id, id, 0);
  clock.turn();
  assert.equal(applied.length, 8);
  clock.turn();
  assert.equal(applied.length, 16);
  clock.turn();
  assert.equal(applied.length, 20);
  assert.equal(clock.immediates.length, 0, 'nothing left to schedule');
});

test('hand-back slices: complete applies the rest now; the pending slice then finds nothing', () => {
  const clock = new TurnClock();
  const { s, applied } = slices(clock);
  for (let id = 1; id <= HAND_BACK_CHUNK + 3; id++) s.add(id, id, 0);
  s.complete();
  assert.equal(applied.length, HAND_BACK_CHUNK + 3);
  assert.equal(s.pending, 0);
  clock.turn();
  assert.equal(applied.length, HAND_BACK_CHUNK + 3, 'no hand-back applied twice');
  // A later burst schedules a slice of its own.
  s.add(999, 1, 0);
  assert.equal(clock.immediates.length, 1);
  clock.turn();
  assert.deepEqual(applied.at(-1), [999, 1, 0]);
});

test('hand-back slices: close drops what is queued and ignores later hand-backs', () => {
  const clock = new TurnClock();
  const { s, applied, notified } = slices(clock);
  s.add(1, 1, 0);
  s.close();
  s.add(2, 2, 0);
  clock.turn();
  s.complete();
  assert.deepEqual(applied, []);
  assert.deepEqual(notified, [1], 'a hand-back after close wakes nobody');
});

test('beta: a burst of hand-backs is applied in slices; events dispatched between the slices reach every watcher once, in order', async () => {
  const N = 2 * HAND_BACK_CHUNK + 44;
  const { clock, cache, store, beta, from, watchers: ws } = await virtualBeta(N, 2);
  await clock.advance(5);
  await flush();
  await churn(store, 3); // every channel full: all stalled, then handed to the worker in slices
  await clock.advance(5);
  await flush();
  assert.equal(beta.unsynced.size, N);

  // When the first hand-back arrives, writes start: each a timer queued behind the next slice.
  let maxPending = 0;
  const mid = new WritesBetweenSlices(clock, store, () => beta.handBacksPending);
  const pendingAtWrite = mid.pendingAtWrite;
  const onPost = (m: unknown): void => {
    const x = m as { cache: object; from: string; message?: { op: string } };
    if (x.cache !== cache || x.from !== 'worker' || x.message?.op !== 'handback') return;
    maxPending = Math.max(maxPending, beta.handBacksPending + 1);
    mid.start();
  };
  diagnostics_channel.subscribe('watchcache:worker-post', onPost);
  try {
    const readers = ws.map((w) => new Reader(w));
    for (let round = 0; round < 500; round++) {
      for (const r of readers) await r.drain();
      if (mid.writes >= 4 && beta.unsynced.size === 0 && beta.handBacksPending === 0) {
        for (const r of readers) await r.drain();
        const last = store.resourceVersion;
        if (readers.every((r) => r.events.length >= last - from)) break;
      }
      await clock.advance(5);
    }
    const last = store.resourceVersion;
    const want = Array.from({ length: last - from }, (_, i) => from + i + 1);
    for (const [k, r] of readers.entries()) assert.deepEqual(objectRVs(r.events), want, `watcher ${k}`);
  } finally {
    diagnostics_channel.unsubscribe('watchcache:worker-post', onPost);
  }
  assert.ok(maxPending > HAND_BACK_CHUNK, `hand-backs waited for more than one slice (at most ${maxPending} pending)`);
  assert.ok(
    pendingAtWrite.some((p) => p > 0),
    `events were dispatched while hand-backs waited (pending at each write: ${pendingAtWrite.join(', ')})`,
  );
  assert.equal(beta.unsynced.size, 0, 'all resynced');
  assert.equal(await cache.metricValue('apiserver_watch_cache_watcher_skipped_events_total'), 0);
  await cache.stop();
});

test("beta: a stale hand-back (the channel is the worker's again) changes nothing", async () => {
  const { clock, cache, store, beta, watchers } = await virtualBeta(3, 2);
  await clock.advance(5);
  await flush();
  await churn(store, 3); // every channel full: stalled, then handed to the worker
  await clock.advance(5);
  await flush();
  const w = watchers[0]!;
  assert.ok(w.unsynced && beta.unsynced.has(w), 'the worker serves it');
  assert.equal((w.queue as SharedWatcherChannel).ownedByMain, false, "the channel is the worker's");
  const position = w.position;
  // A hand-back message for it now can only be an old one (it was adopted again since): single writer.
  handBack(beta, w.id, cache.resourceVersion, 0);
  assert.ok(w.unsynced && beta.unsynced.has(w), "still the worker's");
  assert.equal(w.position, position, 'its position did not move');
  assert.equal((w.queue as SharedWatcherChannel).ownedByMain, false);
  await cache.stop();
});
