/**
 * `off` mode: today's Kubernetes dispatch (semantics §1.2-1.4): a shared,
 * budgeted blocking wait on full channels, then a silent force-close counted
 * as reason="unresponsive".
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { DispatchBudget } from '../../src/dispatch/dispatch-budget.js';
import { ForceClosePolicy } from '../../src/dispatch/force-close-policy.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { Selection } from '../../src/selection/selection.js';
import { Watcher, asWatcher } from '../../src/watch/watcher.js';
import { WatchEvent } from '../../src/wire/watch-event.js';
import { FakeOwner, PausableStore, Reader, VirtualClock, flush, objectRVs, pod, setup } from './support/harness.js';
import { settle } from '../../src/sim/virtual-clock.js';

describe('DispatchBudget (cacher/time_budget.go)', () => {
  test('starts empty and accrues 50 ms per second, capped at 100 ms', async () => {
    const clock = new VirtualClock();
    const b = new DispatchBudget(clock);
    assert.equal(b.takeAvailable(), 0);
    await clock.advance(1000);
    assert.equal(b.takeAvailable(), 50);
    assert.equal(b.takeAvailable(), 0, 'take empties it');
    await clock.advance(500);
    assert.equal(b.takeAvailable(), 25);
    await clock.advance(10_000);
    assert.equal(b.takeAvailable(), 100);
  });

  test('unused time is returned, capped at 100 ms; negative returns are ignored', async () => {
    const clock = new VirtualClock();
    const b = new DispatchBudget(clock);
    await clock.advance(2000);
    assert.equal(b.takeAvailable(), 100);
    b.returnUnused(60);
    b.returnUnused(-30);
    assert.equal(b.takeAvailable(), 60);
    b.returnUnused(80);
    await clock.advance(1000); // +50 accrues on top
    assert.equal(b.takeAvailable(), 100);
    b.returnUnused(500);
    assert.equal(b.takeAvailable(), 100);
  });

  test('options override the rate and the cap', async () => {
    const clock = new VirtualClock();
    const b = new DispatchBudget(clock, { refreshPerSecondMs: 10, maxBudgetMs: 15 });
    await clock.advance(1000);
    assert.equal(b.takeAvailable(), 10);
    await clock.advance(5000);
    assert.equal(b.takeAvailable(), 15);
  });
});

describe('ForceClosePolicy (unit)', () => {
  function rig(budgetAgeMs: number) {
    const clock = new VirtualClock();
    const budget = new DispatchBudget(clock);
    const metrics = new CacheMetrics(DEFAULT_RESOURCE);
    const policy = new ForceClosePolicy(clock, budget, metrics);
    const owner = new FakeOwner();
    owner.onRoom = (w) => policy.onRoom(w);
    const mk = (cap: number): Watcher => {
      const w = new Watcher({
        id: 1,
        selection: new Selection({}, {}, undefined),
        capacity: cap,
        allowBookmarks: false,
        owner,
      });
      w.activate(0, undefined);
      return w;
    };
    const event = (rv: number): WatchCacheEvent =>
      new WatchCacheEvent('ADDED', pod(`p${rv}`), undefined, rv, 0, undefined);
    return { clock, budget, metrics, policy, owner, mk, event, ready: clock.advance(budgetAgeMs) };
  }

  test('a consumer that makes room in time gets the event; the unused budget is returned', async () => {
    const { clock, budget, metrics, policy, mk, event, ready } = rig(3000);
    await ready;
    const w = mk(1);
    assert.ok(w.push(new WatchEvent('ADDED', pod('x'), 1)));
    const ev = event(2);
    policy.onFull([w], 1, ev);
    let resumed = 0;
    assert.equal(
      policy.afterEvent(() => resumed++),
      true,
      'dispatch pauses',
    );
    await clock.advance(40);
    assert.equal(resumed, 0);
    assert.equal(((await w.next()).value as WatchCacheEvent | undefined)?.rv, 1); // makes room: onRoom runs in a microtask
    await flush();
    assert.equal(resumed, 1, 'resumed as soon as every blocked watcher has its event');
    assert.equal(w.position, 2);
    assert.equal(w.stopped, false);
    assert.equal(await metrics.value('apiserver_terminated_watchers_total'), 0);
    // 100 taken, 40 used, 60 returned; plus 40 ms x 50 ms/s = 2 ms accrued since the take
    assert.equal(budget.takeAvailable(), 62);
  });

  test('when the timer fires every still-full watcher is force-closed (unresponsive)', async () => {
    const { clock, metrics, policy, owner, mk, event, ready } = rig(3000);
    await ready;
    const a = mk(1);
    const b = mk(1);
    a.push(new WatchEvent('ADDED', pod('x'), 1));
    b.push(new WatchEvent('ADDED', pod('x'), 1));
    const ev = event(2);
    policy.onFull([a], 1, ev);
    policy.onFull([b], 1, ev);
    let resumed = 0;
    assert.equal(
      policy.afterEvent(() => resumed++),
      true,
    );
    await clock.advance(99);
    assert.equal(a.stopped || b.stopped, false);
    await clock.advance(1);
    assert.equal(a.stopped && b.stopped, true);
    assert.equal(a.reason, 'unresponsive');
    assert.equal(resumed, 1);
    assert.equal(await metrics.value('apiserver_terminated_watchers_total', { reason: 'unresponsive' }), 2);
    assert.equal(owner.ended.length, 2);
  });

  test('with no budget left, a full watcher is closed at once without pausing', async () => {
    const { metrics, policy, mk, event, ready } = rig(0);
    await ready;
    const w = mk(1);
    w.push(new WatchEvent('ADDED', pod('x'), 1));
    const ev = event(2);
    policy.onFull([w], 1, ev);
    assert.equal(
      policy.afterEvent(() => {}),
      false,
    );
    assert.equal(w.stopped, true);
    assert.equal(await metrics.value('apiserver_terminated_watchers_total', { reason: 'unresponsive' }), 1);
  });
});

describe('off mode through the cache', () => {
  test('a consumer that does not read is force-closed after the shared budget; its stream ends without ERROR', async () => {
    const { cache, store, clock } = await setup({ mode: 'off' });
    await clock.advance(3000); // let the budget accrue to its 100 ms cap
    const slow = new Reader(asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 })));
    const healthy = new Reader(asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 100 })));
    await store.create(pod('a')); // 1
    await store.create(pod('b')); // 2 (slow is now full)
    await store.create(pod('c')); // 3 blocks on slow
    await store.create(pod('d')); // 4 queued behind the shared wait
    await flush();
    await healthy.drain();
    assert.deepEqual(objectRVs(healthy.events), [1, 2, 3], 'event 4 waits behind the blocked dispatch');
    await clock.advance(99);
    await healthy.drain();
    assert.deepEqual(objectRVs(healthy.events), [1, 2, 3], 'still delayed just before the budget expires');
    assert.equal(slow.w.stopped, false);
    await clock.advance(1);
    await healthy.drain();
    assert.deepEqual(objectRVs(healthy.events), [1, 2, 3, 4], 'delivered once the budget expired');
    assert.equal(slow.w.stopped, true);
    assert.equal(slow.w.reason, 'unresponsive');
    await slow.drain();
    assert.equal(slow.done, true);
    assert.ok(
      slow.events.every((e) => e.type !== 'ERROR'),
      'no ERROR event on a force-close',
    );
    assert.equal(await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' }), 1);
    assert.match(
      await cache.metrics.getSingleMetricAsString('apiserver_terminated_watchers_total'),
      /reason="unresponsive"\} 1/,
    );
    assert.equal(cache.watcherCount, 1);
    healthy.w.stop();
    await cache.stop();
  });

  test('a consumer that makes room within the budget keeps its watch and misses nothing', async () => {
    const { cache, store, clock } = await setup({ mode: 'off' });
    await clock.advance(3000);
    const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 }));
    const healthy = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    for (const n of ['a', 'b', 'c', 'd']) await store.create(pod(n));
    await flush();
    await clock.advance(40);
    const slow = new Reader(w);
    await slow.drain(1); // makes room for 3 within the budget
    await flush();
    await healthy.drain();
    // the wait ended early: 4 went to the healthy watcher in the non-blocking pass, and blocks on slow again
    assert.deepEqual(objectRVs(healthy.events), [1, 2, 3, 4]);
    await clock.advance(50); // within the 60 ms returned (+ accrual)
    assert.equal(w.stopped, false);
    await slow.drain(2);
    await flush();
    await slow.drain();
    assert.deepEqual(objectRVs(slow.events), [1, 2, 3, 4]);
    assert.equal(w.stopped, false);
    assert.equal(await cache.metricValue('apiserver_terminated_watchers_total'), 0);
    w.stop();
    healthy.w.stop();
    await cache.stop();
  });

  test('the budget starts empty: an immediate overflow is closed at once, without delaying anyone', async () => {
    const { cache, store } = await setup({ mode: 'off' });
    const slow = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
    const healthy = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    await store.create(pod('a'));
    await store.create(pod('b'));
    await store.create(pod('c'));
    await flush();
    await healthy.drain();
    assert.deepEqual(objectRVs(healthy.events), [1, 2, 3]);
    assert.equal(slow.stopped, true);
    assert.equal(await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' }), 1);
    healthy.w.stop();
    await cache.stop();
  });

  test('bookmarks never block and never force-close', async () => {
    const { cache, store, clock } = await setup({ mode: 'off', bookmarkFrequencyMs: 1000 });
    await clock.advance(3000);
    const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1, allowWatchBookmarks: true }));
    await store.create(pod('a'));
    await flush();
    await clock.advance(10_000);
    assert.equal(w.stopped, false);
    assert.equal(w.queue.size, 1);
    assert.equal(await cache.metricValue('apiserver_terminated_watchers_total'), 0);
    w.stop();
    await cache.stop();
  });

  test('stopping the blocked watcher releases the shared wait at once', async () => {
    const { cache, store, clock } = await setup({ mode: 'off' });
    await clock.advance(3000);
    const slow = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
    const healthy = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    await store.create(pod('a'));
    await store.create(pod('b')); // blocks
    await store.create(pod('c')); // queued
    await flush();
    await healthy.drain();
    assert.deepEqual(objectRVs(healthy.events), [1, 2]);
    slow.stop();
    await flush();
    await healthy.drain();
    assert.deepEqual(objectRVs(healthy.events), [1, 2, 3]);
    assert.equal(
      await cache.metricValue('apiserver_terminated_watchers_total'),
      0,
      'a client stop is not a force-close',
    );
    healthy.w.stop();
    await cache.stop();
  });

  test('a watch started while dispatch is blocked gets no gap and no duplicate (rule 1: tolerate overlap, dedupe by RV)', async () => {
    const { cache, store, clock } = await setup({ mode: 'off' });
    await clock.advance(3000);
    const slow = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
    await store.create(pod('a')); // 1
    await store.create(pod('b')); // 2 blocks on slow
    await store.create(pod('c')); // 3 queued
    await flush();
    assert.equal(cache.resourceVersion, 3);
    const fromState = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    const fromHistory = new Reader(asWatcher(cache.watch({ resourceVersion: '1' })));
    await fromState.drain();
    await fromHistory.drain();
    assert.deepEqual(fromState.summary, ['ADDED:1', 'ADDED:2', 'ADDED:3']);
    assert.deepEqual(objectRVs(fromHistory.events), [2, 3]);
    await clock.advance(100); // the budget expires: slow is closed, 3 is dispatched
    await store.create(pod('d')); // 4
    await flush();
    await fromState.drain();
    await fromHistory.drain();
    assert.equal(slow.stopped, true);
    assert.deepEqual(
      fromState.summary,
      ['ADDED:1', 'ADDED:2', 'ADDED:3', 'ADDED:4'],
      'the queued event 3 is not delivered twice',
    );
    assert.deepEqual(objectRVs(fromHistory.events), [2, 3, 4]);
    fromState.w.stop();
    fromHistory.w.stop();
    await cache.stop();
  });

  test('a relist ends every watch silently (no ERROR)', async () => {
    const { cache, store, clock, backing } = await setup({ mode: 'off' }, (s) => new PausableStore(s));
    await store.create(pod('a'));
    await flush();
    const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    await r.drain();
    await store.create(pod('b'));
    (backing as PausableStore).pause();
    await store.create(pod('c'));
    (backing as PausableStore).fail(new Error('watch broken'));
    await clock.advance(1000); // back-off, then relist at RV 3
    await flush();
    await r.drain();
    assert.equal(r.done, true);
    assert.equal(r.w.reason, 'relist');
    assert.ok(r.events.every((e) => e.type !== 'ERROR'));
    assert.equal(cache.historyBounds().listRV, 3);
    await cache.stop();
  });
});

/**
 * Issue 13, deliverable 7 (a faithful off): in Kubernetes the dispatcher takes
 * the events queued behind a wait one at a time while every watcher goroutine
 * drains its own channel concurrently, so a watcher that reads promptly never
 * finds its channel full; only the slow ones are closed. Here a consumer loop
 * that reads everything it is given (yielding to the event loop every 32
 * events, as a socket writer would) runs next to N watchers that never read,
 * with three writes per virtual millisecond, so the backlog behind the 100 ms
 * wait is about three channels long.
 */
describe('off mode is faithful: only the slow watchers are closed', () => {
  async function promptReader(w: Watcher, rvs: number[]): Promise<void> {
    let sinceYield = 0;
    for (;;) {
      const r = await w.next();
      if (r.done) return;
      if (r.value.type !== 'ERROR') rvs.push(r.value.rv);
      if (++sinceYield >= 32) {
        sinceYield = 0;
        await settle();
      }
    }
  }

  for (const stalledCount of [1, 1000]) {
    test(`${stalledCount} stalled: the promptly reading watcher is never force-closed and misses nothing`, async () => {
      const { cache, store, clock } = await setup({ mode: 'off' });
      await clock.advance(3000); // the budget accrues to its 100 ms cap
      const first = await store.create(pod('subject'));
      await flush();
      const from = String(first.metadata.resourceVersion);
      const stalled: Watcher[] = [];
      for (let i = 0; i < stalledCount; i++)
        stalled.push(asWatcher(cache.watch({ resourceVersion: from, channelCapacity: 100 })));
      const healthy = asWatcher(cache.watch({ resourceVersion: from, channelCapacity: 100 }));
      const rvs: number[] = [];
      const loop = promptReader(healthy, rvs);
      let cur = first;
      for (let ms = 0; ms < 600; ms++) {
        for (let k = 0; k < 3; k++) cur = await store.update({ ...cur, spec: { ms, k } });
        await clock.advance(1);
      }
      await clock.advance(500); // every wait has ended and the backlog is dispatched
      await flush();
      assert.equal(healthy.stopped, false, `the healthy watcher was ended (${healthy.reason ?? ''})`);
      const last = store.resourceVersion;
      const expected: number[] = [];
      for (let rv = Number(from) + 1; rv <= last; rv++) expected.push(rv);
      assert.deepEqual(rvs, expected, 'every event, in order, once');
      assert.ok(
        stalled.every((w) => w.stopped && w.reason === 'unresponsive'),
        'every stalled watcher is force-closed',
      );
      assert.equal(
        await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' }),
        stalledCount,
        'only the stalled ones',
      );
      healthy.stop();
      await loop;
      await cache.stop();
    });
  }
});
