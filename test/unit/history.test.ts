/**
 * EventHistory (seed 001 rules 1-5), HistoryInterval batches and
 * invalidation, capacityUpperBound, and the 410 boundary as a watch sees it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventHistory, capacityUpperBound, DEFAULT_UPPER_BOUND } from '../../src/history/event-history.js';
import {
  HistoryInterval,
  IntervalInvalidatedError,
  INTERVAL_BATCH_SIZE,
  type IntervalSource,
} from '../../src/history/history-interval.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { ResourceExpiredError, StoreCompactedError } from '../../src/index.js';
import { PausableStore, Reader, churn, flush, objectRVs, pod, setup } from './support/harness.js';
import { asWatcher } from '../../src/watch/watcher.js';

const FRESH = 1000;

function ev(rv: number, time: number): WatchCacheEvent {
  return new WatchCacheEvent(
    'ADDED',
    { metadata: { namespace: 'ns', name: `o${rv}`, resourceVersion: String(rv) } },
    undefined,
    rv,
    time,
    undefined,
  );
}

function fill(h: EventHistory, fromRV: number, count: number, time: number): number {
  for (let i = 0; i < count; i++) h.append(ev(fromRV + i, time));
  return fromRV + count;
}

describe('EventHistory resizing (seed 001 rule 2)', () => {
  test('capacity starts at lowerBound', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    assert.equal(h.capacity, 4);
    const d = new EventHistory();
    assert.equal(d.capacity, 100);
    assert.equal(d.upperBound, DEFAULT_UPPER_BOUND);
  });

  test('grows x2 when full and the oldest event is fresh, without evicting', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    const resizes: number[] = [];
    h.onResize = (c) => resizes.push(c);
    h.reset(0);
    fill(h, 1, 4, 0);
    assert.equal(h.capacity, 4);
    h.append(ev(5, FRESH - 1)); // oldest is FRESH-1 old: still fresh
    assert.equal(h.capacity, 8);
    assert.equal(h.size, 5);
    assert.equal(h.bounds().firstRV, 1);
    assert.equal(h.bounds().removed, false);
    fill(h, 6, 3, FRESH - 1); // 8 events, full
    h.append(ev(9, FRESH - 1));
    assert.equal(h.capacity, 16);
    assert.deepEqual(resizes, [8, 16]);
    assert.equal(h.size, 9);
  });

  test('an oldest event exactly eventFreshDuration old is not fresh: no growth', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    fill(h, 1, 4, 0);
    h.append(ev(5, FRESH));
    assert.equal(h.capacity, 4);
    assert.equal(h.bounds().firstRV, 2);
  });

  test('never grows past upperBound: evicts the oldest instead', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 16, eventFreshDurationMs: FRESH });
    h.reset(0);
    fill(h, 1, 16, 0);
    assert.equal(h.capacity, 16);
    assert.equal(h.bounds().removed, false);
    h.append(ev(17, 0));
    assert.equal(h.capacity, 16);
    assert.equal(h.size, 16);
    assert.equal(h.bounds().firstRV, 2);
    assert.equal(h.bounds().removed, true);
  });

  test('an upper bound that is not a power-of-two multiple is still reached (min(2c, upper))', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 12, eventFreshDurationMs: FRESH });
    fill(h, 1, 13, 0);
    assert.equal(h.capacity, 12);
    assert.equal(h.size, 12);
  });

  test('shrinks /2 when the quarter-point event is stale (dropping the oldest)', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    h.reset(0);
    fill(h, 1, 8, 0); // grows 4 -> 8, full, all recorded at t=0
    assert.equal(h.capacity, 8);
    h.append(ev(9, FRESH + 1)); // oldest stale, quarter point (rv 7) stale too
    assert.equal(h.capacity, 4);
    assert.equal(h.size, 4);
    assert.equal(h.bounds().firstRV, 6);
    assert.equal(h.bounds().lastRV, 9);
    assert.equal(h.bounds().removed, true);
  });

  test('never shrinks below lowerBound', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    fill(h, 1, 4, 0);
    h.append(ev(5, 10 * FRESH));
    assert.equal(h.capacity, 4);
  });

  test('hysteresis: full, oldest stale but quarter point fresh -> neither grows nor shrinks', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    fill(h, 1, 6, 0);
    fill(h, 7, 2, FRESH); // capacity 8: events 7,8 (the newest quarter) are recent
    assert.equal(h.capacity, 8);
    assert.equal(h.size, 8);
    h.append(ev(9, FRESH + 1)); // oldest (t=0) is stale; quarter point (rv 7, t=FRESH) is 1 ms old
    assert.equal(h.capacity, 8);
    assert.equal(h.size, 8);
    assert.equal(h.bounds().firstRV, 2);
  });

  test('quarter point exactly eventFreshDuration old is not stale: no shrink', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 64, eventFreshDurationMs: FRESH });
    fill(h, 1, 8, 0);
    h.append(ev(9, FRESH)); // oldest age == FRESH (not fresh), quarter age == FRESH (not stale)
    assert.equal(h.capacity, 8);
  });

  test('capacity metric follows resizes through the cache', async () => {
    const { cache, store } = await setup({ history: { lowerBound: 4, upperBound: 16 } });
    assert.equal(await cache.metricValue('apiserver_watch_cache_capacity'), 4);
    await churn(store, 5);
    assert.equal(await cache.metricValue('apiserver_watch_cache_capacity'), 8);
    await cache.stop();
  });
});

describe('capacityUpperBound (seed 001)', () => {
  test('102400 up to 75 s', () => {
    assert.equal(capacityUpperBound(75_000), 102400);
    assert.equal(capacityUpperBound(10_000), 102400);
  });
  test('scales by the ratio rounded up to a power of two', () => {
    assert.equal(capacityUpperBound(315_000), 819200); // ratio 4.2 -> 8
    assert.equal(capacityUpperBound(76_000), 204800); // ratio just above 1 -> 2
    assert.equal(capacityUpperBound(150_000), 204800); // ratio exactly 2
    assert.equal(capacityUpperBound(300_000), 409600);
  });
  test('capped so it fits in an int32', () => {
    const capped = capacityUpperBound(75_000 * 2 ** 30);
    assert.equal(capped, 102400 * 2 ** 14);
    assert.ok(capped <= 2147483647);
    assert.ok(capped * 2 > 2147483647);
  });
  test('is the default upper bound for a longer fresh duration', () => {
    const h = new EventHistory({ eventFreshDurationMs: 315_000 });
    assert.equal(h.upperBound, 819200);
  });
});

describe('oldest servable RV (seed 001 rule 4, semantics §3.3)', () => {
  test('listRV + 1 before any eviction: listRV servable, listRV - 1 too old', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 4, eventFreshDurationMs: FRESH });
    h.reset(10);
    assert.equal(h.oldestServableRV(), 11);
    assert.equal(h.isTooOld(10), false);
    assert.equal(h.isTooOld(9), true);
    fill(h, 11, 4, 0); // full, nothing evicted yet
    assert.equal(h.oldestServableRV(), 11);
    assert.equal(h.isTooOld(10), false);
  });

  test('after an eviction: the first kept RV; first - 1 servable, first - 2 too old', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 4, eventFreshDurationMs: FRESH });
    h.reset(10);
    fill(h, 11, 5, 0); // 11..15, capacity 4: 11 evicted, keeps 12..15
    assert.equal(h.bounds().firstRV, 12);
    assert.equal(h.oldestServableRV(), 12);
    assert.equal(h.isTooOld(11), false);
    assert.equal(h.isTooOld(10), true);
  });

  test('with gaps in RVs the rule uses the first kept RV', () => {
    const h = new EventHistory({ lowerBound: 2, upperBound: 2, eventFreshDurationMs: FRESH });
    h.reset(1);
    h.append(ev(5, 0));
    h.append(ev(9, 0));
    h.append(ev(20, 0)); // evicts 5
    assert.equal(h.oldestServableRV(), 9);
    assert.equal(h.isTooOld(8), false);
    assert.equal(h.isTooOld(7), true);
  });

  test('reset on relist: empties, oldest = listRV + 1, removed cleared, old intervals invalidated', () => {
    const h = new EventHistory({ lowerBound: 4, upperBound: 4, eventFreshDurationMs: FRESH });
    h.reset(0);
    fill(h, 1, 6, 0);
    assert.equal(h.bounds().removed, true);
    const before = h.intervalAfter(2);
    h.reset(50);
    assert.equal(h.size, 0);
    assert.equal(h.oldestServableRV(), 51);
    assert.equal(h.bounds().removed, false);
    assert.equal(h.bounds().listRV, 50);
    assert.equal(h.isTooOld(49), true);
    assert.equal(h.isTooOld(50), false);
    assert.throws(() => before.next(), IntervalInvalidatedError);
    // indices only grow: the next append lands after every earlier index
    const end = h.endIndex;
    h.append(ev(51, 0));
    assert.equal(h.startIndex, end);
    assert.equal(h.at(end).rv, 51);
  });
});

describe('HistoryInterval (seed 001 batch buffer)', () => {
  test('copies events in batches of 100', () => {
    const events = Array.from({ length: 250 }, (_, i) => ev(i + 1, 0));
    let reads = 0;
    const source: IntervalSource = {
      startIndex: 0,
      at(i: number) {
        reads++;
        return events[i]!;
      },
    };
    assert.equal(INTERVAL_BATCH_SIZE, 100);
    const it = new HistoryInterval(source, 0, 250);
    assert.equal(reads, 0, 'nothing is read before the first next()');
    assert.equal(it.next()!.rv, 1);
    assert.equal(reads, 100);
    for (let i = 2; i <= 100; i++) assert.equal(it.next()!.rv, i);
    assert.equal(reads, 100);
    assert.equal(it.next()!.rv, 101);
    assert.equal(reads, 200);
    let last = 101;
    for (let e = it.next(); e !== undefined; e = it.next()) last = e.rv;
    assert.equal(last, 250);
    assert.equal(reads, 250);
    assert.equal(it.remaining, 0);
  });

  test('end is frozen at creation: later appends are not part of the interval', () => {
    const h = new EventHistory({ lowerBound: 10, upperBound: 10, eventFreshDurationMs: FRESH });
    h.reset(0);
    fill(h, 1, 3, 0);
    const it = h.intervalAfter(1);
    h.append(ev(4, 0));
    const rvs: number[] = [];
    for (let e = it.next(); e !== undefined; e = it.next()) rvs.push(e.rv);
    assert.deepEqual(rvs, [2, 3]);
  });

  test('invalidated after eviction overtakes it; the batch already copied is still served', () => {
    const h = new EventHistory({ lowerBound: 150, upperBound: 150, eventFreshDurationMs: FRESH });
    h.reset(0);
    fill(h, 1, 150, 0);
    const it = h.intervalAfter(0);
    assert.equal(it.next()!.rv, 1); // batch 1..100 copied
    fill(h, 151, 120, 0); // evicts 1..120: the next unread index (100) is gone
    for (let rv = 2; rv <= 100; rv++) assert.equal(it.next()!.rv, rv);
    assert.throws(
      () => it.next(),
      (err: unknown) => err instanceof IntervalInvalidatedError && /interval invalidated/.test(err.message),
    );
  });

  test('not invalidated while its next unread event is still kept', () => {
    const h = new EventHistory({ lowerBound: 150, upperBound: 150, eventFreshDurationMs: FRESH });
    h.reset(0);
    fill(h, 1, 150, 0);
    const it = h.intervalAfter(0);
    it.next();
    fill(h, 151, 100, 0); // evicts 1..100 only: index 100 (rv 101) still kept
    const rvs: number[] = [];
    for (let e = it.next(); e !== undefined; e = it.next()) rvs.push(e.rv);
    assert.equal(rvs.length, 149);
    assert.equal(rvs.at(-1), 150);
  });
});

describe('410 boundary as a watch sees it', () => {
  for (const mode of ['off', 'alpha', 'beta'] as const) {
    test(`${mode}: before any eviction the list RV is servable and list RV - 1 is too old`, async () => {
      const {
        cache: c2,
        store,
        clock,
      } = await setup({ mode, history: { lowerBound: 4, upperBound: 4 } }, undefined, {
        seed: [pod('a'), pod('b'), pod('c')],
      });
      assert.equal(c2.historyBounds().oldest, 4);
      const ok = new Reader(asWatcher(c2.watch({ resourceVersion: '3' })));
      await store.create(pod('d'));
      await flush();
      await clock.advance(50);
      assert.deepEqual(
        (await ok.drain()).map((e) => e.type + ':' + e.object.metadata.resourceVersion),
        ['ADDED:4'],
      );
      const old = new Reader(asWatcher(c2.watch({ resourceVersion: '2' })));
      await clock.advance(50);
      const got = await old.drain();
      assert.equal(got.length, 1);
      assert.equal(got[0]!.type, 'ERROR');
      assert.equal(got[0]!.object.message, 'too old resource version: 2 (3)');
      assert.equal(old.done, true);
      ok.w.stop();
      await c2.stop();
    });

    test(`${mode}: after eviction, oldest - 1 is servable and oldest - 2 yields exactly one ERROR 410`, async () => {
      const { cache, store, clock } = await setup({ mode, history: { lowerBound: 4, upperBound: 4 } });
      await churn(store, 10); // RVs 1..10, history keeps 7..10
      assert.equal(cache.historyBounds().firstRV, 7);
      assert.equal(cache.historyBounds().oldest, 7);

      const ok = new Reader(asWatcher(cache.watch({ resourceVersion: '6' })));
      await clock.advance(50);
      const okEvents = await ok.drain();
      assert.deepEqual(
        okEvents.map((e) => Number(e.object.metadata.resourceVersion)),
        [7, 8, 9, 10],
      );
      assert.equal(ok.done, false);

      const old = new Reader(asWatcher(cache.watch({ resourceVersion: '5' })));
      await clock.advance(50);
      const got = await old.drain();
      assert.equal(got.length, 1, 'exactly one event');
      const e = got[0]!;
      assert.equal(e.type, 'ERROR');
      assert.equal(e.object.kind, 'Status');
      assert.equal(e.object.status, 'Failure');
      assert.equal(e.object.code, 410);
      assert.equal(e.object.reason, 'Expired');
      assert.equal(e.object.message, 'too old resource version: 5 (6)');
      assert.equal(old.done, true, 'then the watch ends');
      ok.w.stop();
      await cache.stop();
    });
  }

  test('a list at an RV older than the history is a ResourceExpiredError with the same message', async () => {
    const { cache, store } = await setup({ history: { lowerBound: 4, upperBound: 4 } });
    await churn(store, 10);
    await assert.rejects(cache.list({ resourceVersion: '5', resourceVersionMatch: 'Exact' }), (err: unknown) => {
      assert.ok(err instanceof ResourceExpiredError);
      assert.equal(err.code, 410);
      assert.equal(err.message, 'too old resource version: 5 (6)');
      return true;
    });
    const six = await cache.list({ resourceVersion: '6', resourceVersionMatch: 'Exact' });
    assert.equal(six.metadata.resourceVersion, '6');
    await cache.stop();
  });
});

describe('reset on relist through the cache', () => {
  for (const mode of ['off', 'alpha', 'beta'] as const) {
    test(`${mode}: a relist resets the history to the list RV; older starts are 410`, async () => {
      const { cache, store, clock, backing } = await setup({ mode }, (s) => new PausableStore(s));
      const ps = backing as PausableStore;
      await churn(store, 5);
      assert.equal(cache.historyBounds().size, 5);
      ps.pause();
      await churn(store, 3); // 6..8 never reach the cache through the watch
      ps.fail(new StoreCompactedError(5, 6)); // a compacted watch re-lists at once
      await clock.advance(0);
      await flush();
      ps.resume(); // the old watch's held events go nowhere (it was stopped)
      await flush();
      const b = cache.historyBounds();
      assert.equal(b.listRV, 8);
      assert.equal(b.size, 0);
      assert.equal(b.oldest, 9);
      assert.equal(b.removed, false);
      assert.equal(cache.resourceVersion, 8);
      assert.equal(ps.lists, 2);
      const old = new Reader(asWatcher(cache.watch({ resourceVersion: '5' })));
      await clock.advance(20);
      await old.drain();
      assert.deepEqual(old.summary, ['ERROR:']);
      assert.equal(old.events[0]!.object.message, 'too old resource version: 5 (8)');
      const ok = new Reader(asWatcher(cache.watch({ resourceVersion: '8' })));
      await churn(store, 1);
      await clock.advance(20);
      await ok.drain();
      assert.deepEqual(objectRVs(ok.events), [9]);
      ok.w.stop();
      await cache.stop();
    });
  }
});
