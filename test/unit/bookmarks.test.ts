/**
 * Bookmarks (semantics §2, API.md "Bookmarks") and how a watch ends
 * (API.md "Ending"). All timing is virtual.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { BookmarkScheduler } from '../../src/dispatch/bookmark-scheduler.js';
import { Selection } from '../../src/selection/selection.js';
import { Watcher, asWatcher } from '../../src/watch/watcher.js';
import { WatchEvent } from '../../src/wire/watch-event.js';
import { FakeOwner, Reader, VirtualClock, flush, pod, setup, shiftEvent, withTimeout } from './support/harness.js';

const MODES = ['off', 'alpha', 'beta'] as const;

/** Advance in steps, reading `r`, and record the virtual time each bookmark arrived. */
async function watchBookmarks(
  clock: VirtualClock,
  r: Reader,
  ms: number,
  step = 100,
): Promise<{ at: number; rv: number }[]> {
  const out: { at: number; rv: number }[] = [];
  const t0 = clock.now();
  for (let t = 0; t < ms && !r.done; t += step) {
    await clock.advance(step);
    for (const e of await r.drain())
      if (e.type === 'BOOKMARK') out.push({ at: clock.now() - t0, rv: Number(e.object.metadata.resourceVersion) });
  }
  return out;
}

for (const mode of MODES) {
  describe(`bookmarks (${mode})`, () => {
    test('only with allowWatchBookmarks', async () => {
      const { cache, store, clock } = await setup({ mode, bookmarkFrequencyMs: 5000 });
      const yes = new Reader(asWatcher(cache.watch({ resourceVersion: '0', allowWatchBookmarks: true })));
      const no = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
      await store.create(pod('a'));
      await flush();
      await clock.advance(30_000);
      await yes.drain();
      await no.drain();
      assert.ok(yes.events.filter((e) => e.type === 'BOOKMARK').length >= 4);
      assert.deepEqual(no.summary, ['ADDED:1']);
      yes.w.stop();
      no.w.stop();
      await cache.stop();
    });

    test('roughly every bookmarkFrequencyMs, at the last processed RV, with only kind/apiVersion/resourceVersion', async () => {
      const { cache, store, clock } = await setup({ mode, bookmarkFrequencyMs: 10_000 });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', allowWatchBookmarks: true })));
      await store.create(pod('a'));
      await store.create(pod('b'));
      await flush();
      const seen = await watchBookmarks(clock, r, 65_000);
      assert.ok(seen.length >= 5 && seen.length <= 7, `about one per 10 s over 65 s, got ${seen.length}`);
      assert.ok(seen[0]!.at >= 9000 && seen[0]!.at <= 11_500, `first at ${seen[0]!.at}`);
      for (let i = 1; i < seen.length; i++) {
        const gap = seen[i]!.at - seen[i - 1]!.at;
        assert.ok(gap >= 9000 && gap <= 11_500, `gap ${gap}`);
      }
      assert.ok(seen.every((b) => b.rv === 2));
      const bm = r.events.find((e) => e.type === 'BOOKMARK')!;
      assert.deepEqual(bm.object, { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '2' } });
      r.w.stop();
      await cache.stop();
    });

    test('never below anything the watcher received; follows new writes', async () => {
      const { cache, store, clock } = await setup({ mode, bookmarkFrequencyMs: 2000 });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', allowWatchBookmarks: true })));
      for (let i = 0; i < 20; i++) {
        await store.create(pod(`p${i}`));
        await flush();
        await clock.advance(700);
        await r.drain();
      }
      await clock.advance(5000);
      await r.drain();
      let last = 0;
      let bookmarks = 0;
      for (const e of r.events) {
        const rv = Number(e.object.metadata.resourceVersion);
        if (e.type === 'BOOKMARK') {
          bookmarks++;
          assert.ok(rv >= last, `bookmark ${rv} below received ${last}`);
        }
        last = Math.max(last, rv);
      }
      assert.ok(bookmarks >= 5);
      const lastBm = r.events.filter((e) => e.type === 'BOOKMARK').at(-1)!;
      assert.equal(lastBm.object.metadata.resourceVersion, '20');
      r.w.stop();
      await cache.stop();
    });

    test('no bookmark while the cache RV has not passed the start position', async () => {
      const { cache, clock } = await setup({ mode, bookmarkFrequencyMs: 1000 }, undefined, { seed: [pod('a')] });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', allowWatchBookmarks: true })));
      const fut = new Reader(asWatcher(cache.watch({ resourceVersion: '5', allowWatchBookmarks: true })));
      await clock.advance(10_000);
      await r.drain();
      await fut.drain();
      assert.deepEqual(r.summary, ['ADDED:1']);
      assert.deepEqual(fut.summary, []);
      r.w.stop();
      fut.w.stop();
      await cache.stop();
    });

    test('one bookmark shortly before timeoutSeconds, then the iterator ends cleanly', async () => {
      const { cache, store, clock } = await setup({ mode, bookmarkFrequencyMs: 60_000 });
      const w = asWatcher(cache.watch({ resourceVersion: '0', allowWatchBookmarks: true, timeoutSeconds: 30 }));
      const r = new Reader(w);
      await store.create(pod('a'));
      await flush();
      const seen = await watchBookmarks(clock, r, 31_000);
      assert.equal(seen.length, 1, 'exactly one (the 60 s one is past the deadline)');
      assert.ok(seen[0]!.at >= 26_500 && seen[0]!.at < 30_000, `deadline bookmark at ${seen[0]!.at}`);
      assert.equal(r.done, true, 'ended by the timeout');
      assert.equal(w.reason, 'timeout');
      assert.ok(r.events.every((e) => e.type !== 'ERROR'));
      assert.equal(cache.watcherCount, 0);
      await cache.stop();
    });
  });

  describe(`ending a watch (${mode})`, () => {
    test('timeoutSeconds ends a for-await loop cleanly', async () => {
      const { cache, store, clock } = await setup({ mode });
      await store.create(pod('a'));
      await flush();
      const w = asWatcher(cache.watch({ resourceVersion: '0', timeoutSeconds: 5 }));
      const got: string[] = [];
      const loop = (async () => {
        for await (const e of w) got.push(e.type);
      })();
      await clock.advance(4999);
      assert.equal(w.stopped, false);
      await clock.advance(1);
      await withTimeout(loop, 5000, 'for-await after timeout');
      assert.deepEqual(got, ['ADDED']);
      await cache.stop();
    });

    test('stop() resolves a pending next() with done', async () => {
      const { cache } = await setup({ mode });
      const w = asWatcher(cache.watch({ resourceVersion: '0' }));
      const p = w.next();
      w.stop();
      assert.deepEqual(await withTimeout(p), { done: true, value: undefined });
      assert.deepEqual(await w.next(), { done: true, value: undefined });
      assert.equal(cache.watcherCount, 0);
      await cache.stop();
    });

    test('an AbortSignal ends it cleanly (also one aborted before the watch)', async () => {
      const { cache, store } = await setup({ mode });
      const ac = new AbortController();
      const w = asWatcher(cache.watch({ resourceVersion: '0', signal: ac.signal }));
      const p = w.next();
      ac.abort();
      assert.equal((await withTimeout(p)).done, true);
      assert.equal(w.reason, 'client');
      await store.create(pod('a'));
      await flush();
      assert.equal((await w.next()).done, true);
      const pre = new AbortController();
      pre.abort();
      const w2 = asWatcher(cache.watch({ resourceVersion: '0', signal: pre.signal }));
      assert.equal((await w2.next()).done, true);
      assert.equal(cache.watcherCount, 0);
      await cache.stop();
    });

    test('leaving a for-await loop stops the watch', async () => {
      const { cache, store } = await setup({ mode });
      await store.create(pod('a'));
      await store.create(pod('b'));
      await flush();
      const w = asWatcher(cache.watch({ resourceVersion: '0' }));
      for await (const e of w) {
        assert.equal(e.type, 'ADDED');
        break;
      }
      assert.equal(w.stopped, true);
      assert.equal(cache.watcherCount, 0);
      await cache.stop();
    });

    test('cache.stop() ends every iterator cleanly, waiting or not', async () => {
      const { cache, store, clock } = await setup({ mode });
      await store.create(pod('a'));
      await flush();
      const ws = [
        asWatcher(cache.watch({ resourceVersion: '0' })),
        asWatcher(cache.watch({ resourceVersion: '1' })),
        asWatcher(cache.watch({ resourceVersion: '99', allowWatchBookmarks: true })),
        asWatcher(
          cache.watch({ resourceVersion: '50', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true }),
        ), // pending a future RV
      ];
      await clock.advance(20);
      const pending = ws.map((w) => w.next());
      await cache.stop();
      const results = await withTimeout(Promise.all(pending));
      // the first watcher had its ADDED ready; everything else is done
      for (const [i, res] of results.entries()) if (i !== 0) assert.equal(res.done, true, `watcher ${i}`);
      for (const w of ws) {
        assert.equal((await withTimeout(w.next())).done, true);
        assert.equal(w.stopped, true);
      }
      assert.equal(cache.watcherCount, 0);
    });
  });
}

describe('BookmarkScheduler (invariant 3)', () => {
  function mk(position: number, capacity = 4): Watcher {
    const w = new Watcher({
      id: 1,
      selection: new Selection({}, {}, undefined),
      capacity,
      allowBookmarks: true,
      owner: new FakeOwner(),
    });
    w.activate(position, undefined);
    return w;
  }

  test('no bookmark while unsynced; delivered again once synced, advancing the position', async () => {
    const clock = new VirtualClock();
    let rv = 10;
    const s = new BookmarkScheduler(clock, 1000, DEFAULT_RESOURCE, () => rv);
    const w = mk(5);
    w.cursor.markUnsynced();
    s.schedule(w);
    await clock.advance(5000);
    assert.equal(w.queue.size, 0, 'nothing while unsynced, even with room');
    w.cursor.markSynced();
    await clock.advance(2500);
    assert.ok(w.queue.size >= 1);
    const first = shiftEvent(w)!;
    assert.equal(first.type, 'BOOKMARK');
    assert.equal(first.object.metadata.resourceVersion, '10');
    assert.equal(w.position, 10);
    rv = 11;
    s.stop();
  });

  test('after resync, a bookmark below the position is skipped', async () => {
    const clock = new VirtualClock();
    const s = new BookmarkScheduler(clock, 1000, DEFAULT_RESOURCE, () => 10);
    const w = mk(3);
    w.cursor.accepted(12); // e.g. resynced at the end of the history, ahead of the last dispatched RV
    s.schedule(w);
    await clock.advance(5000);
    assert.equal(w.queue.size, 0);
    w.cursor.accepted(10);
    await clock.advance(2500);
    assert.ok(w.queue.size >= 1, 'a bookmark at exactly the position is fine');
    s.stop();
  });

  test('a full channel misses the bookmark (never blocks) and the watcher stays scheduled', async () => {
    const clock = new VirtualClock();
    const s = new BookmarkScheduler(clock, 1000, DEFAULT_RESOURCE, () => 10);
    const w = mk(3, 1);
    assert.ok(w.push(new WatchEvent('ADDED', pod('x'), 4)));
    s.schedule(w);
    await clock.advance(3000);
    assert.equal(w.queue.size, 1);
    assert.equal(w.position, 3, 'a missed bookmark does not move the position');
    shiftEvent(w);
    await clock.advance(2500);
    assert.equal(shiftEvent(w)?.type, 'BOOKMARK');
    s.stop();
  });

  test('watchers without allowWatchBookmarks are never scheduled; a stopped scheduler arms nothing', async () => {
    const clock = new VirtualClock();
    const s = new BookmarkScheduler(clock, 1000, DEFAULT_RESOURCE, () => 10);
    const w = new Watcher({
      id: 1,
      selection: new Selection({}, {}, undefined),
      capacity: 4,
      allowBookmarks: false,
      owner: new FakeOwner(),
    });
    w.activate(1, undefined);
    s.schedule(w);
    assert.equal(clock.pending, 0);
    const w2 = mk(1);
    s.stop();
    s.schedule(w2);
    assert.equal(clock.pending, 0);
  });
});
