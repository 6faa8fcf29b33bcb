/**
 * KEP-6268 alpha (and beta where the behaviour is the same), the Test Plan
 * list: the synced -> unsynced transition and its position, resync and the
 * skipped-events counter, position following the scan for scope-filtered and
 * trigger-indexed watchers, one wrap per selected event, no bookmarks while
 * unsynced, both 410 reasons with the backlog first, a watcher stopped
 * between stall and pass, clean closes, and the hard-stop fix.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_RESOURCE,
  errorEvent,
  ResourceExpiredError,
  type KubeObject,
  type WatchCache,
} from '../../src/index.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { Selection } from '../../src/selection/selection.js';
import { resolvePassOptions } from '../../src/sync/pass-options.js';
import { StallPolicy } from '../../src/sync/stall-policy.js';
import { Watcher, asWatcher } from '../../src/watch/watcher.js';
import { WatchEvent } from '../../src/wire/watch-event.js';
import {
  FakeOwner,
  Reader,
  VirtualClock,
  churn,
  flush,
  objectRVs,
  pod,
  setup,
  withTimeout,
} from './support/harness.js';
import { stallPolicyOf } from '../../src/cache/cache-internals.js';

const STALL_MODES = ['alpha', 'beta'] as const;
const nodeName = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

async function metric(cache: WatchCache, name: string, labels: Record<string, string> = {}): Promise<number> {
  return cache.metricValue(name, labels);
}

/** Advance virtual time in small steps until `cond` (at most `maxMs`). */
async function until(clock: VirtualClock, cond: () => boolean, stepMs = 5, maxMs = 5000): Promise<void> {
  for (let t = 0; t < maxMs && !cond(); t += stepMs) await clock.advance(stepMs);
  assert.ok(cond(), 'condition not reached in virtual time');
}

for (const mode of STALL_MODES) {
  describe(`stall and resume (${mode})`, () => {
    test('a failed push of X marks the watcher unsynced at X - 1; the live path then offers it nothing', async () => {
      const { cache, store } = await setup({ mode });
      const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 3 }));
      for (const n of ['a', 'b', 'c']) await store.create(pod(n));
      await flush();
      assert.equal(w.unsynced, false);
      assert.equal(w.position, 3);
      await store.create(pod('d')); // 4 does not fit
      await flush();
      assert.equal(w.unsynced, true);
      assert.equal(w.position, 3, 'X - 1');
      assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_stalls_total'), 1);
      assert.equal(await metric(cache, 'apiserver_watch_cache_stalled_watchers'), 1);
      await store.create(pod('e'));
      await store.create(pod('f'));
      await flush();
      assert.equal(w.position, 3, 'unchanged while unsynced and full');
      assert.equal(w.queue.size, 3);
      assert.equal(w.stopped, false, 'never force-closed');
      assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_stalls_total'), 1, 'one transition');
      w.stop();
      await cache.stop();
    });

    test('a resumed watcher gets every event exactly once, in order, then rejoins the live path', async () => {
      const { cache, store, clock } = await setup({ mode });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 4 })));
      await churn(store, 30); // stalls at 5
      assert.equal(r.w.unsynced, true);
      for (let i = 0; i < 500 && !(!r.w.unsynced && r.w.position === 30); i++) {
        await clock.advance(5);
        await r.drain();
      }
      assert.equal(r.w.unsynced, false, 'resynced');
      await r.drain();
      await churn(store, 5); // 31..35 on the live path
      await r.drain();
      assert.deepEqual(
        objectRVs(r.events),
        Array.from({ length: 35 }, (_, i) => i + 1),
      );
      assert.equal(await metric(cache, 'apiserver_watch_cache_stalled_watchers'), 0);
      assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_catchup_rounds_total'), 1);
      assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_catchup_events'), 1, 'histogram count = rounds');
      const deferred = await metric(cache, 'apiserver_watch_cache_watcher_deferred_events_total');
      assert.ok(deferred >= 26 && deferred <= 30, `events pushed by passes: ${deferred}`);
      assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_skipped_events_total'), 0);
      assert.equal(await metric(cache, 'apiserver_terminated_watchers_total'), 0);
      r.w.stop();
      await cache.stop();
    });

    test('a healthy watcher is never delayed by a stalled one', async () => {
      const { cache, store } = await setup({ mode });
      const slow = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
      const healthy = new Reader(asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1000 })));
      for (let i = 0; i < 20; i++) {
        await store.create(pod(`p${i}`));
        await flush(1);
        await healthy.drain();
      }
      assert.deepEqual(
        objectRVs(healthy.events),
        Array.from({ length: 20 }, (_, i) => i + 1),
        'no virtual time passed, nothing waited',
      );
      assert.equal(slow.unsynced, true);
      slow.stop();
      healthy.w.stop();
      await cache.stop();
    });

    for (const kind of ['namespace-scoped', 'trigger-indexed'] as const) {
      test(`position follows the scan for a ${kind} watcher across unrelated churn`, async () => {
        const opts = kind === 'trigger-indexed' ? { indexers: { 'spec.nodeName': nodeName } } : {};
        const { cache, store, clock } = await setup({ mode, ...opts, pass: { scanBudget: 64 + 20 } });
        const mine = (n: string): KubeObject =>
          kind === 'trigger-indexed' ? pod(n, { nodeName: 'n1' }) : pod(n, { ns: 'a' });
        const w = asWatcher(
          cache.watch({
            resourceVersion: '0',
            channelCapacity: 2,
            ...(kind === 'trigger-indexed' ? { fieldSelector: 'spec.nodeName=n1' } : { namespace: 'a' }),
          }),
        );
        const r = new Reader(w);
        await store.create(mine('m1')); // 1
        await store.create(mine('m2')); // 2
        await store.create(mine('m3')); // 3: stalls at 2
        await flush();
        assert.equal(w.unsynced, true);
        assert.equal(w.position, 2);
        // unrelated churn: another namespace / another node
        for (let i = 0; i < 60; i++)
          await store.create(kind === 'trigger-indexed' ? pod(`o${i}`, { nodeName: 'n2' }) : pod(`o${i}`, { ns: 'b' }));
        await flush();
        assert.equal(cache.resourceVersion, 63);
        await r.drain(2);
        const seen: { pushes: number; position: number }[] = [];
        const sp = stallPolicyOf(cache);
        let passes = sp?.scheduler.passes ?? 0;
        await until(
          clock,
          () => {
            if (sp !== undefined && sp.scheduler.passes !== passes) {
              passes = sp.scheduler.passes;
              seen.push({ pushes: sp.lastStats?.pushes ?? -1, position: w.position });
            }
            return !w.unsynced;
          },
          1,
        );
        assert.equal(w.position, 63, 'resynced at the end, though only one event was pushed to it');
        if (sp !== undefined) {
          const empty = seen.filter((s) => s.pushes === 0 && s.position > 3 && s.position < 63);
          assert.ok(empty.length >= 1, `a pass that pushed nothing still moved the position: ${JSON.stringify(seen)}`);
        }
        await store.create(mine('m4')); // 64, live
        await flush();
        await r.drain();
        assert.deepEqual(objectRVs(r.events), [1, 2, 3, 64]);
        assert.equal(await metric(cache, 'apiserver_terminated_watchers_total'), 0);
        r.w.stop();
        await cache.stop();
      });
    }

    test('no bookmark while unsynced, even with room in the channel', async () => {
      // scanBudget 1: a pass can never scan, so the watcher stays unsynced with room
      const { cache, store, clock } = await setup({ mode, bookmarkFrequencyMs: 1000, pass: { scanBudget: 1 } });
      const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2, allowWatchBookmarks: true }));
      const healthy = new Reader(
        asWatcher(cache.watch({ resourceVersion: '0', allowWatchBookmarks: true, channelCapacity: 1000 })),
      );
      await churn(store, 40); // far more than beta's hand-off distance behind
      assert.equal(w.unsynced, true);
      const r = new Reader(w);
      await r.drain(2);
      for (let i = 0; i < 100; i++) {
        await clock.advance(100);
        assert.equal(w.unsynced, true, 'stays unsynced: no pass can scan');
        await r.drain();
        await healthy.drain();
      }
      await healthy.drain();
      assert.ok(
        healthy.events.some((e) => e.type === 'BOOKMARK'),
        'bookmarks are being sent',
      );
      assert.deepEqual(
        r.events.map((e) => e.type),
        ['ADDED', 'MODIFIED'],
        'no bookmark while unsynced',
      );
      w.stop();
      healthy.w.stop();
      await cache.stop();
    });

    test('bookmarks resume after resync and never go below what the watcher received', async () => {
      const { cache, store, clock } = await setup({ mode, bookmarkFrequencyMs: 1000 });
      const r = new Reader(
        asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2, allowWatchBookmarks: true })),
      );
      await churn(store, 20);
      assert.equal(r.w.unsynced, true);
      for (let i = 0; i < 100; i++) {
        await clock.advance(50);
        await r.drain();
      }
      let last = 0;
      for (const e of r.events) {
        const rv = Number(e.object.metadata.resourceVersion);
        assert.ok(rv >= last, `${e.type} ${rv} after ${last}`);
        last = rv;
      }
      assert.deepEqual(
        objectRVs(r.events),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.ok(r.events.some((e) => e.type === 'BOOKMARK'));
      r.w.stop();
      await cache.stop();
    });

    test('a watcher stopped by its client between stall and pass is dropped (no 410, no count)', async () => {
      const { cache, store, clock } = await setup({ mode, history: { lowerBound: 8, upperBound: 8 } });
      const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 }));
      await churn(store, 3);
      assert.equal(w.unsynced, true);
      w.stop();
      assert.equal(await metric(cache, 'apiserver_watch_cache_stalled_watchers'), 0);
      await churn(store, 20);
      await clock.advance(500);
      assert.equal(await metric(cache, 'apiserver_terminated_watchers_total'), 0);
      assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_catchup_rounds_total'), 0);
      assert.deepEqual(await w.next(), { done: true, value: undefined });
      assert.equal(cache.watcherCount, 0);
      const sp = stallPolicyOf(cache);
      if (sp !== undefined) assert.equal(sp.unsynced.size, 0);
      await cache.stop();
    });

    test('an unsynced watcher ends cleanly on abort and on cache stop', async () => {
      const { cache, store, clock } = await setup({ mode });
      const ac = new AbortController();
      const a = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1, signal: ac.signal }));
      const b = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
      await churn(store, 5);
      assert.ok(a.unsynced && b.unsynced);
      ac.abort();
      const ra = new Reader(a);
      await ra.drain();
      assert.equal(ra.done, true);
      assert.ok(ra.events.every((e) => e.type !== 'ERROR'));
      const pending = b.next(); // has its one event ready
      await cache.stop();
      await pending;
      assert.equal((await withTimeout(b.next())).done, true);
      assert.equal(await metric(cache, 'apiserver_terminated_watchers_total'), 0);
      assert.equal(await metric(cache, 'apiserver_watch_cache_stalled_watchers'), 0);
      const before = clock.pending;
      await clock.advance(1000);
      assert.ok(clock.pending <= before, 'no pass timer keeps running after stop');
    });
  });
}

// KEP: "Expired watchers are stopped in drain mode so their backlog is still delivered before the 410."
for (const mode of STALL_MODES) {
  // Beta channels hold references into the history, not the events (memory bounded by history +
  // channel slots, issue 4): a backlog that has already left the history cannot be delivered, so
  // beta ends with the 410 right after what it could still deliver, never with wrong data.
  const title =
    mode === 'alpha'
      ? '410 reasons and the backlog (alpha)'
      : '410 reasons and the backlog (beta: references that left the history)';
  describe(title, () => {
    test('410 resource_expired: a live watcher whose position aged out gets its backlog, then one ERROR 410', async () => {
      const { cache, store, clock } = await setup({ mode, history: { lowerBound: 8, upperBound: 8 } });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 })));
      await churn(store, 1);
      await r.drain(1); // reached its live loop
      await churn(store, 3); // 2, 3 fill the channel; 4 stalls at 3
      assert.equal(r.w.unsynced, true);
      await churn(store, 20); // 5..24: history keeps 17..24
      assert.equal(cache.historyBounds().firstRV, 17);
      await clock.advance(200);
      assert.equal(await metric(cache, 'apiserver_terminated_watchers_total', { reason: 'resource_expired' }), 1);
      assert.equal(
        await metric(cache, 'apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' }),
        0,
      );
      await r.drain();
      if (mode === 'alpha') {
        assert.deepEqual(r.summary, ['ADDED:1', 'MODIFIED:2', 'MODIFIED:3', 'ERROR:']);
        const st = r.events[3]!.object;
        assert.equal(st.code, 410);
        assert.equal(st.reason, 'Expired');
        assert.equal(st.message, 'too old resource version: 3 (16)');
      } else {
        // 2 and 3 left the history while queued: the 410 names what the client really has (1).
        assert.deepEqual(r.summary, ['ADDED:1', 'ERROR:']);
        const st = r.events[1]!.object;
        assert.equal(st.code, 410);
        assert.equal(st.reason, 'Expired');
        assert.equal(st.message, 'too old resource version: 1 (16)');
      }
      assert.equal(r.done, true);
      assert.equal(await metric(cache, 'apiserver_watch_cache_stalled_watchers'), 0);
      await cache.stop();
    });

    test('410 resource_expired_initial: a watcher that never read anything', async () => {
      const { cache, store, clock } = await setup({ mode, history: { lowerBound: 8, upperBound: 8 } });
      const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 }));
      await churn(store, 30);
      await clock.advance(200);
      assert.equal(
        await metric(cache, 'apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' }),
        1,
      );
      assert.equal(await metric(cache, 'apiserver_terminated_watchers_total', { reason: 'resource_expired' }), 0);
      const r = new Reader(w);
      await r.drain();
      if (mode === 'alpha') {
        assert.deepEqual(r.summary, ['ADDED:1', 'MODIFIED:2', 'ERROR:']);
        assert.equal(r.events[2]!.object.message, 'too old resource version: 2 (22)');
      } else {
        // 1 and 2 were queued as references and left the history before anything was read.
        assert.deepEqual(r.summary, ['ERROR:']);
        assert.equal(r.events[0]!.object.code, 410);
      }
      assert.equal(r.done, true);
      await cache.stop();
    });
  });
}

describe('alpha: the skipped-events counter and the resync point', () => {
  test('the live path skips (and counts) events at or below a watcher position after start', async () => {
    const { cache, store } = await setup({ mode: 'alpha' });
    const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 10 }));
    await churn(store, 2);
    w.cursor.raiseTo(5); // as if a pass had already pushed up to 5 (the alpha resync point runs ahead)
    await churn(store, 4); // 3..6: 3, 4, 5 are skipped, 6 is delivered
    assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_skipped_events_total'), 3);
    const r = new Reader(w);
    await r.drain();
    assert.deepEqual(objectRVs(r.events), [1, 2, 6]);
    w.stop();
    await cache.stop();
  });

  test('a future-RV watcher: events at or below its start are the normal start overlap, not skips', async () => {
    const { cache, store } = await setup({ mode: 'alpha' });
    const w = asWatcher(cache.watch({ resourceVersion: '3' }));
    await churn(store, 5);
    assert.equal(await metric(cache, 'apiserver_watch_cache_watcher_skipped_events_total'), 0);
    w.stop();
    await cache.stop();
  });

  test('StallPolicy.onFull never lowers the position', () => {
    const clock = new VirtualClock();
    const history = new EventHistory();
    history.reset(0);
    const policy = new StallPolicy(clock, resolvePassOptions({}), history, new CacheMetrics(DEFAULT_RESOURCE), {
      expire: () => {},
      unsynced: () => {},
      resynced: () => {},
      resyncPoint: () => 0,
    });
    const w = new Watcher({
      id: 1,
      selection: new Selection({}, {}, undefined),
      capacity: 1,
      allowBookmarks: false,
      owner: new FakeOwner(),
    });
    w.activate(10, undefined);
    const ev = new WatchCacheEvent('ADDED', pod('x'), undefined, 5, 0, undefined);
    policy.onFull([w], 1, ev);
    assert.equal(w.position, 10);
    assert.equal(w.unsynced, true);
    const ev2 = new WatchCacheEvent('ADDED', pod('y'), undefined, 20, 0, undefined);
    policy.onFull([w], 1, ev2);
    assert.equal(w.position, 19);
    policy.close();
  });
});

describe('alpha: one wrap per selected event (StallPolicy + real history)', () => {
  test('cohort members share one shared form per event; unselected events are never wrapped', () => {
    const clock = new VirtualClock();
    const history = new EventHistory({ lowerBound: 100, upperBound: 100 });
    history.reset(0);
    const metrics = new CacheMetrics(DEFAULT_RESOURCE);
    const policy = new StallPolicy(clock, resolvePassOptions({}), history, metrics, {
      expire: () => {},
      unsynced: () => {},
      resynced: () => {},
      resyncPoint: () => history.lastRV ?? 0,
    });
    const owner = new FakeOwner();
    const mk = (id: number, input: ConstructorParameters<typeof Selection>[0]): Watcher => {
      const w = new Watcher({
        id,
        selection: new Selection(input, {}, undefined),
        capacity: 100,
        allowBookmarks: false,
        owner,
      });
      w.activate(0, undefined);
      return w;
    };
    const evs: WatchCacheEvent[] = [];
    for (let rv = 1; rv <= 12; rv++) {
      const ns = rv % 3 === 0 ? 'a' : rv % 3 === 1 ? 'b' : 'c';
      const e = new WatchCacheEvent('ADDED', pod(`p${rv}`, { ns }), undefined, rv, 0, undefined);
      history.append(e);
      evs.push(e);
    }
    const a1 = mk(1, { namespace: 'a' });
    const a2 = mk(2, { namespace: 'a' });
    const a3 = mk(3, { namespace: 'a' });
    const b = mk(4, { namespace: 'b' });
    for (const w of [a1, a2, a3, b]) policy.markUnsynced(w);
    let stats: unknown;
    policy.pass.run(policy.unsynced, (s) => (stats = s));
    assert.ok(stats !== undefined, 'the pass completed');
    for (const e of evs) {
      const expected = e.namespace === 'c' ? 0 : 1;
      assert.equal(e.wraps, expected, `rv ${e.rv} in ${e.namespace}`);
    }
    const got = (w: Watcher): WatchEvent[] => {
      const out: WatchEvent[] = [];
      for (let ev = w.queue.shift(); ev !== undefined && typeof ev !== 'symbol'; ev = w.queue.shift()) out.push(ev);
      return out;
    };
    const g1 = got(a1);
    const g2 = got(a2);
    const g3 = got(a3);
    assert.deepEqual(
      g1.map((e) => e.rv),
      [3, 6, 9, 12],
    );
    for (let i = 0; i < g1.length; i++) assert.ok(g1[i] === g2[i] && g2[i] === g3[i], 'the same shared object');
    assert.deepEqual(
      got(b).map((e) => e.rv),
      [1, 4, 7, 10],
    );
    for (const w of [a1, a2, a3, b]) assert.equal(w.unsynced, false);
    assert.equal(policy.lastStats, undefined, 'lastStats is set by the scheduler, not by a direct run');
    policy.close();
  });
});

describe('alpha: initial replay overtaken by the history', () => {
  test('alpha: an honest in-stream 410 (exactly one ERROR), counted as resource_expired_initial', async () => {
    const { cache, store, clock } = await setup({ mode: 'alpha', history: { lowerBound: 8, upperBound: 8 } });
    await churn(store, 6);
    const w = asWatcher(cache.watch({ resourceVersion: '1', channelCapacity: 1000 })); // replays 2..6 from the history, lazily
    await churn(store, 20); // the ring moves past the unread interval
    await clock.advance(200);
    const r = new Reader(w);
    await r.drain();
    assert.deepEqual(r.summary, ['ERROR:'], 'nothing after the gap; one 410');
    assert.equal(r.events[0]!.object.code, 410);
    assert.equal(r.done, true);
    assert.equal(await metric(cache, 'apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' }), 1);
    await cache.stop();
  });

  test('off: the same silently ends the watch (no ERROR)', async () => {
    const { cache, store, clock } = await setup({ mode: 'off', history: { lowerBound: 8, upperBound: 8 } });
    await churn(store, 6);
    const w = asWatcher(cache.watch({ resourceVersion: '1', channelCapacity: 1000 }));
    await churn(store, 20);
    await clock.advance(200);
    const r = new Reader(w);
    await r.drain();
    assert.equal(r.done, true);
    assert.ok(r.events.every((e) => e.type !== 'ERROR'));
    await cache.stop();
  });
});

describe('the hard-stop fix (Watcher)', () => {
  const mk = (): Watcher => {
    const w = new Watcher({
      id: 1,
      selection: new Selection({}, {}, undefined),
      capacity: 4,
      allowBookmarks: false,
      owner: new FakeOwner(),
    });
    w.activate(0, undefined);
    return w;
  };
  const err = (): WatchEvent => errorEvent(ResourceExpiredError.tooOld(1, 2));

  test('after a hard stop, a later drain() does not reopen the watcher', async () => {
    const w = mk();
    w.push(new WatchEvent('ADDED', pod('a'), 1));
    w.stop('client');
    w.drain('expired', err());
    assert.equal(w.state, 'stopped');
    assert.equal(w.reason, 'client');
    assert.deepEqual(await w.next(), { done: true, value: undefined });
  });

  test('after a hard stop, abort() does not reopen it either', async () => {
    const w = mk();
    w.stop('cache-stopped');
    w.abort('expired', err());
    assert.equal(w.state, 'stopped');
    assert.deepEqual(await w.next(), { done: true, value: undefined });
  });

  test('the owner is told exactly once', () => {
    const owner = new FakeOwner();
    const w = new Watcher({
      id: 1,
      selection: new Selection({}, {}, undefined),
      capacity: 4,
      allowBookmarks: false,
      owner,
    });
    w.activate(0, undefined);
    w.stop('client');
    w.drain('expired', err());
    w.stop('timeout');
    assert.equal(owner.ended.length, 1);
  });

  test('drain mode delivers the backlog, then the terminal event, then ends; a hard stop during it drops the rest', async () => {
    const w = mk();
    w.push(new WatchEvent('ADDED', pod('a'), 1));
    w.push(new WatchEvent('ADDED', pod('b'), 2));
    w.drain('expired', err());
    assert.equal(w.accepting, false);
    assert.equal(w.push(new WatchEvent('ADDED', pod('c'), 3)), true, 'push is the channel; the owner stops offering');
    assert.equal(((await w.next()).value as WatchCacheEvent | undefined)?.rv, 1);
    w.stop('client');
    assert.deepEqual(await w.next(), { done: true, value: undefined });
  });
});

describe('ENGINE BUG (watch-cache initialOvertaken): a watcher is counted once in apiserver_terminated_watchers_total', () => {
  // A replaying watcher that stalls and is expired by a pass (counted resource_expired_initial,
  // put in drain mode) and whose lazy initial replay then finds its interval invalidated is
  // counted a second time by initialOvertaken, which does not check that it already ended.
  test('expired by a pass while its initial replay is overtaken: one ERROR and one count', async () => {
    const { cache, store, clock } = await setup({ mode: 'alpha', history: { lowerBound: 8, upperBound: 8 } });
    await churn(store, 6);
    const w = asWatcher(cache.watch({ resourceVersion: '1' })); // default channel: 10
    await churn(store, 20); // live 7..16 fill the channel, 17 stalls; history keeps 19..26
    await clock.advance(200); // a pass expires it (position 16 < 18)
    const r = new Reader(w);
    await r.drain();
    assert.equal(r.events.filter((e) => e.type === 'ERROR').length, 1);
    assert.equal(r.done, true);
    assert.equal(await metric(cache, 'apiserver_terminated_watchers_total'), 1, 'one watcher, one termination');
    await cache.stop();
  });
});
