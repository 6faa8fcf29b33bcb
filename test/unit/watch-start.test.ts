/**
 * Watch start semantics (API.md "Watch start", semantics §3), in every mode.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError, ServiceUnavailableError, WatchCache, MemoryStore } from '../../src/index.js';
import { PausableStore, Reader, VirtualClock, flush, pod, setup } from './support/harness.js';
import { asWatcher } from '../../src/watch/watcher.js';

const MODES = ['off', 'alpha', 'beta'] as const;

for (const mode of MODES) {
  describe(`watch start (${mode})`, () => {
    test("'0': the current state as ADDED events (own RVs, key order), then live", async () => {
      const { cache, store, clock } = await setup({ mode }, undefined, {
        seed: [pod('b'), pod('a', { ns: 'z' }), pod('c')],
      });
      const b = await store.get('default', 'b');
      await store.update({ ...b, spec: { v: 4 } }); // 4
      await flush();
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
      await store.create(pod('d')); // 5
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(
        r.events.map(
          (e) =>
            `${e.type}:${e.object.metadata.namespace}/${e.object.metadata.name}:${e.object.metadata.resourceVersion}`,
        ),
        ['ADDED:default/b:4', 'ADDED:default/c:3', 'ADDED:z/a:2', 'ADDED:default/d:5'],
      );
      r.w.stop();
      await cache.stop();
    });

    test("'': the cache first catches up to the store's current RV", async () => {
      const { cache, store, clock, backing } = await setup({ mode }, (s) => new PausableStore(s));
      const ps = backing as PausableStore;
      const a = await store.create(pod('a'));
      await flush();
      ps.pause();
      await store.update({ ...a, spec: { v: 2 } }); // 2, not yet in the cache
      await flush();
      assert.equal(cache.resourceVersion, 1);
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '' })));
      await flush();
      await clock.advance(500);
      assert.deepEqual(await r.drain(), [], 'nothing before the cache has RV 2');
      ps.resume();
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(r.summary, ['ADDED:2'], 'the state at RV 2, not ADDED:1 then MODIFIED:2');
      r.w.stop();
      await cache.stop();
    });

    test("'' times out after blockTimeoutMs with one ERROR 504 when the cache never catches up", async () => {
      const { cache, store, clock, backing } = await setup({ mode, blockTimeoutMs: 1000 }, (s) => new PausableStore(s));
      (backing as PausableStore).pause();
      await store.create(pod('a'));
      await flush();
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '' })));
      await flush();
      await clock.advance(1000);
      await r.drain();
      assert.equal(r.events.length, 1);
      assert.equal(r.events[0]!.type, 'ERROR');
      assert.equal(r.events[0]!.object.code, 504);
      assert.equal(r.done, true);
      await cache.stop();
    });

    test("'N': every event after N", async () => {
      const { cache, store, clock } = await setup({ mode });
      const a = await store.create(pod('a')); // 1
      await store.update({ ...a, spec: { v: 2 } }); // 2
      await store.create(pod('b')); // 3
      await flush();
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '1' })));
      await clock.advance(20);
      await store.delete('default', 'b'); // 4
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(r.summary, ['MODIFIED:2', 'ADDED:3', 'DELETED:4']);
      const cur = new Reader(asWatcher(cache.watch({ resourceVersion: '4' })));
      await clock.advance(20);
      assert.deepEqual(await cur.drain(), []);
      r.w.stop();
      cur.w.stop();
      await cache.stop();
    });

    test("a future 'N' starts at once and delivers only events above N", async () => {
      const { cache, store, clock } = await setup({ mode });
      await store.create(pod('a')); // 1
      await flush();
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '3' })));
      assert.equal(r.w.state, 'active', 'started at once, no wait');
      const before = clock.pending;
      await store.create(pod('b')); // 2
      await store.create(pod('c')); // 3
      await store.create(pod('d')); // 4
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(r.summary, ['ADDED:4']);
      assert.ok(clock.pending <= before + 2, 'no freshness wait armed for a plain future watch');
      r.w.stop();
      await cache.stop();
    });

    test('sendInitialEvents=true (NotOlderThan) with bookmarks: ADDED events, one annotated BOOKMARK, then live', async () => {
      const { cache, store, clock } = await setup({ mode }, undefined, { seed: [pod('a'), pod('b')] });
      const r = new Reader(
        asWatcher(
          cache.watch({
            resourceVersion: '1',
            resourceVersionMatch: 'NotOlderThan',
            sendInitialEvents: true,
            allowWatchBookmarks: true,
          }),
        ),
      );
      await flush();
      await store.create(pod('c')); // 3
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(r.summary, ['ADDED:1', 'ADDED:2', 'BOOKMARK:2', 'ADDED:3']);
      const bm = r.events[2]!;
      assert.deepEqual(bm.object, {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: { resourceVersion: '2', annotations: { 'k8s.io/initial-events-end': 'true' } },
      });
      r.w.stop();
      await cache.stop();
    });

    test("sendInitialEvents=true with '' and '0' also sends the state then the end bookmark", async () => {
      const { cache, clock } = await setup({ mode }, undefined, { seed: [pod('a')] });
      for (const rv of ['', '0']) {
        const r = new Reader(
          asWatcher(
            cache.watch({
              resourceVersion: rv,
              resourceVersionMatch: 'NotOlderThan',
              sendInitialEvents: true,
              allowWatchBookmarks: true,
            }),
          ),
        );
        await flush();
        await clock.advance(20);
        await r.drain();
        assert.deepEqual(r.summary, ['ADDED:1', 'BOOKMARK:1'], `rv ${JSON.stringify(rv)}`);
        assert.equal(r.events[1]!.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
        r.w.stop();
      }
      await cache.stop();
    });

    test('sendInitialEvents=true without allowWatchBookmarks: no end bookmark', async () => {
      const { cache, store, clock } = await setup({ mode }, undefined, { seed: [pod('a')] });
      const r = new Reader(
        asWatcher(cache.watch({ resourceVersion: '0', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true })),
      );
      await flush();
      await store.create(pod('b'));
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(r.summary, ['ADDED:1', 'ADDED:2']);
      r.w.stop();
      await cache.stop();
    });

    test('sendInitialEvents=true at a future N waits for it, then serves the state at >= N', async () => {
      const { cache, store, clock } = await setup({ mode }, undefined, { seed: [pod('a')] });
      const r = new Reader(
        asWatcher(
          cache.watch({
            resourceVersion: '2',
            resourceVersionMatch: 'NotOlderThan',
            sendInitialEvents: true,
            allowWatchBookmarks: true,
          }),
        ),
      );
      await clock.advance(1000);
      assert.deepEqual(await r.drain(), []);
      await store.create(pod('b')); // 2
      await flush();
      await clock.advance(20);
      await r.drain();
      assert.deepEqual(r.summary, ['ADDED:1', 'ADDED:2', 'BOOKMARK:2']);
      r.w.stop();
      await cache.stop();
    });

    test('sendInitialEvents=true at a future N that never comes: one ERROR 504 Timeout, then the end', async () => {
      const { cache, clock } = await setup({ mode, blockTimeoutMs: 2000 });
      const r = new Reader(
        asWatcher(
          cache.watch({
            resourceVersion: '9',
            resourceVersionMatch: 'NotOlderThan',
            sendInitialEvents: true,
            allowWatchBookmarks: true,
          }),
        ),
      );
      await clock.advance(1999);
      assert.deepEqual(await r.drain(), []);
      await clock.advance(1);
      await r.drain();
      assert.equal(r.events.length, 1);
      const st = r.events[0]!.object;
      assert.equal(r.events[0]!.type, 'ERROR');
      assert.equal(st.kind, 'Status');
      assert.equal(st.code, 504);
      assert.equal(st.reason, 'Timeout');
      assert.equal((st.details as { causes: { type: string }[] }).causes[0]!.type, 'ResourceVersionTooLarge');
      assert.equal(r.done, true);
      await cache.stop();
    });

    test("sendInitialEvents=false with '0' or '' starts now with no initial events", async () => {
      const { cache, store, clock } = await setup({ mode }, undefined, { seed: [pod('a')] });
      const r0 = new Reader(
        asWatcher(
          cache.watch({ resourceVersion: '0', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: false }),
        ),
      );
      const re = new Reader(
        asWatcher(cache.watch({ resourceVersion: '', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: false })),
      );
      await flush();
      await store.create(pod('b'));
      await flush();
      await clock.advance(20);
      await r0.drain();
      await re.drain();
      assert.deepEqual(r0.summary, ['ADDED:2']);
      assert.deepEqual(re.summary, ['ADDED:2']);
      r0.w.stop();
      re.w.stop();
      await cache.stop();
    });
  });
}

describe('watch option validation (synchronous BadRequestError)', () => {
  test('sendInitialEvents without resourceVersionMatch', async () => {
    const { cache } = await setup();
    assert.throws(() => asWatcher(cache.watch({ sendInitialEvents: true })), BadRequestError);
    assert.throws(
      () => asWatcher(cache.watch({ sendInitialEvents: true, resourceVersion: '0', allowWatchBookmarks: true })),
      BadRequestError,
    );
    assert.throws(() => asWatcher(cache.watch({ sendInitialEvents: false, resourceVersion: '0' })), BadRequestError);
    assert.equal(cache.watcherCount, 0);
    await cache.stop();
  });

  test('other malformed options', async () => {
    const { cache } = await setup();
    const bad: Parameters<WatchCache['watch']>[0][] = [
      { resourceVersion: 'abc' },
      { resourceVersion: '-3' },
      { resourceVersionMatch: 'NotOlderThan', resourceVersion: '1' },
      { resourceVersionMatch: 'Exact', sendInitialEvents: true, resourceVersion: '1' },
      { timeoutSeconds: -1 },
      { channelCapacity: 0 },
      { labelSelector: '!!' },
    ];
    for (const o of bad) assert.throws(() => asWatcher(cache.watch(o)), BadRequestError, JSON.stringify(o));
    await cache.stop();
  });

  test('unknown mode is BadRequestError; the default mode is beta', async () => {
    const clock = new VirtualClock();
    const store = new MemoryStore({ clock });
    assert.throws(() => new WatchCache({ store, clock, mode: 'gamma' as never }), BadRequestError);
    assert.throws(() => new WatchCache({ store, clock, mode: 'Beta' as never }), BadRequestError);
    const c = new WatchCache({ store, clock });
    assert.equal(c.mode, 'beta');
    await c.stop();
  });

  test('after cache.stop(), watch throws a 503 WatchCacheError', async () => {
    const { cache } = await setup();
    await cache.stop();
    assert.throws(
      () => asWatcher(cache.watch({ resourceVersion: '0' })),
      (err: unknown) => err instanceof ServiceUnavailableError && err.code === 503,
    );
  });

  test('watch before the first list still works once the cache is started', async () => {
    const clock = new VirtualClock();
    const store = new MemoryStore({ clock });
    await store.create(pod('a'));
    const cache = new WatchCache({ store, clock, mode: 'alpha' });
    await cache.start();
    const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    await r.drain();
    assert.deepEqual(r.summary, ['ADDED:1']);
    r.w.stop();
    await cache.stop();
  });
});
