/**
 * waitUntilFresh (seed 001) and the consistent-read fallback.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Freshness } from '../../src/cache/freshness.js';
import { ServiceUnavailableError, TooLargeResourceVersionError, TooManyRequestsError } from '../../src/index.js';
import {
  LaggingStore,
  PausableStore,
  VirtualClock,
  flush,
  isSettled,
  pod,
  rejection,
  setup,
} from './support/harness.js';

function freshness(clock: VirtualClock, rv: { v: number }, observed: number[], timeout = 3000): Freshness {
  return new Freshness(
    clock,
    timeout,
    () => rv.v,
    (s) => observed.push(s),
  );
}

describe('Freshness.wait (waitUntilFresh)', () => {
  test('resolves when the RV arrives within the timeout, observing the wait', async () => {
    const clock = new VirtualClock();
    const rv = { v: 5 };
    const observed: number[] = [];
    const f = freshness(clock, rv, observed);
    const p = f.wait(7);
    assert.equal(f.waiting, 1);
    await clock.advance(1200);
    assert.equal(await isSettled(p), false);
    rv.v = 6;
    f.advanced(6);
    assert.equal(await isSettled(p), false, 'RV 6 does not satisfy a wait for 7');
    await clock.advance(800);
    rv.v = 7;
    f.advanced(7);
    await p;
    assert.equal(f.waiting, 0);
    assert.deepEqual(observed, [2]);
  });

  test('an RV the cache already holds resolves at once and is observed as 0', async () => {
    const clock = new VirtualClock();
    const observed: number[] = [];
    const f = freshness(clock, { v: 9 }, observed);
    const before = clock.pending;
    await f.wait(9);
    await f.wait(3);
    assert.equal(clock.pending, before);
    assert.deepEqual(observed, [0, 0]);
  });

  test('times out after blockTimeout with TooLargeResourceVersionError (504 Timeout, retry 1 s, ResourceVersionTooLarge)', async () => {
    const clock = new VirtualClock();
    const observed: number[] = [];
    const f = freshness(clock, { v: 5 }, observed);
    const p = f.wait(12);
    await clock.advance(2999);
    assert.equal(await isSettled(p), false, 'still waiting just before the timeout');
    await clock.advance(1);
    const err = await rejection(p);
    assert.ok(err instanceof TooLargeResourceVersionError);
    assert.equal(err.code, 504);
    assert.equal(err.reason, 'Timeout');
    assert.equal(err.retryAfterSeconds, 1);
    assert.equal(err.status.code, 504);
    assert.equal(err.status.reason, 'Timeout');
    assert.equal(err.status.details?.retryAfterSeconds, 1);
    assert.equal(err.status.details?.causes?.[0]?.type, 'ResourceVersionTooLarge');
    assert.match(err.message, /Too large resource version: 12, current: 5/);
    assert.deepEqual(observed, [3]);
    assert.equal(f.waiting, 0);
  });

  test('RV 0 never waits, never arms a timer and is not observed', async () => {
    const clock = new VirtualClock();
    const observed: number[] = [];
    const f = freshness(clock, { v: 0 }, observed);
    const before = clock.pending;
    await f.wait(0);
    assert.equal(clock.pending, before);
    assert.equal(f.waiting, 0);
    assert.deepEqual(observed, []);
  });

  test('a real wait arms exactly one timer and clears it when satisfied', async () => {
    const clock = new VirtualClock();
    const rv = { v: 1 };
    const f = freshness(clock, rv, []);
    const before = clock.pending;
    const p = f.wait(2);
    assert.equal(clock.pending, before + 1);
    rv.v = 2;
    f.advanced(2);
    await p;
    assert.equal(clock.pending, before);
  });

  test('stop() rejects every waiter and later waits with 503', async () => {
    const clock = new VirtualClock();
    const f = freshness(clock, { v: 1 }, []);
    const p = f.wait(5);
    f.stop();
    const err = await rejection(p);
    assert.ok(err instanceof ServiceUnavailableError);
    assert.equal(err.code, 503);
    await assert.rejects(f.wait(0), ServiceUnavailableError);
  });

  test('asks the store for progress while something waits, every 100 ms', async () => {
    const clock = new VirtualClock();
    let asked = 0;
    const rv = { v: 1 };
    const f = new Freshness(
      clock,
      3000,
      () => rv.v,
      () => {},
      () => asked++,
    );
    const p = f.wait(2);
    assert.equal(asked, 1);
    await clock.advance(250);
    assert.equal(asked, 3);
    rv.v = 2;
    f.advanced(2);
    await p;
    await clock.advance(1000);
    assert.equal(asked, 3, 'no progress requests once nothing waits');
  });
});

describe('waitUntilFresh through the cache', () => {
  test('a NotOlderThan list at a future RV succeeds when the RV arrives; read_wait observed', async () => {
    const { cache, store, clock } = await setup();
    await store.create(pod('a'));
    await flush();
    const before = await cache.metricValue('apiserver_watch_cache_read_wait_seconds');
    const p = cache.list({ resourceVersion: '2', resourceVersionMatch: 'NotOlderThan' });
    await clock.advance(500);
    assert.equal(await isSettled(p), false);
    await store.create(pod('b'));
    await flush();
    const list = await p;
    assert.equal(list.metadata.resourceVersion, '2');
    assert.deepEqual(
      list.items.map((o) => o.metadata.name),
      ['a', 'b'],
    );
    assert.equal(await cache.metricValue('apiserver_watch_cache_read_wait_seconds'), before + 1);
    const text = await cache.metrics.getSingleMetricAsString('apiserver_watch_cache_read_wait_seconds');
    assert.match(text, /apiserver_watch_cache_read_wait_seconds_bucket\{le="0\.6",group="",resource="pods"\} 1/);
    assert.match(text, /le="0\.4",group="",resource="pods"\} 0/);
    await cache.stop();
  });

  test('a list at a future RV that never arrives fails with 504 after blockTimeoutMs', async () => {
    const { cache, clock } = await setup({ blockTimeoutMs: 1000 });
    const p = cache.list({ resourceVersion: '50', resourceVersionMatch: 'NotOlderThan' });
    await clock.advance(999);
    assert.equal(await isSettled(p), false);
    await clock.advance(1);
    const err = await rejection(p);
    assert.ok(err instanceof TooLargeResourceVersionError);
    assert.match((err as Error).message, /50, current: 0/);
    await cache.stop();
  });

  test('a get at RV 0 never arms a timer', async () => {
    const { cache, store, clock } = await setup();
    await store.create(pod('a'));
    await flush();
    const before = clock.pending;
    const obj = await cache.get('default', 'a', { resourceVersion: '0' });
    assert.equal(obj.metadata.name, 'a');
    await cache.list({ resourceVersion: '0' });
    assert.equal(clock.pending, before);
    assert.equal(await cache.metricValue('apiserver_watch_cache_read_wait_seconds'), 0);
    await cache.stop();
  });

  test('a get at a future RV waits for it', async () => {
    const { cache, store, clock } = await setup();
    const a = await store.create(pod('a'));
    await flush();
    const p = cache.get('default', 'a', { resourceVersion: '2' });
    await clock.advance(10);
    assert.equal(await isSettled(p), false);
    await store.update({ ...a, spec: { v: 2 } });
    await flush();
    const got = await p;
    assert.equal(got.metadata.resourceVersion, '2');
    await cache.stop();
  });
});

describe('consistent reads (seed 001 delegator)', () => {
  test('served from the cache when it catches up: success=true, fallback=false', async () => {
    const { cache, store } = await setup();
    await store.create(pod('a'));
    await flush();
    const list = await cache.list({ resourceVersion: '' });
    assert.equal(list.metadata.resourceVersion, '1');
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_consistent_read_total', { success: 'true', fallback: 'false' }),
      1,
    );
    assert.equal(await cache.metricValue('apiserver_watch_cache_consistent_read_total', { fallback: 'true' }), 0);
    await cache.stop();
  });

  test('a consistent list waits for the cache to reach the store RV (store watch held back)', async () => {
    const { cache, store, clock, backing } = await setup({}, (s) => new PausableStore(s));
    const ps = backing as PausableStore;
    await store.create(pod('a'));
    await flush();
    ps.pause();
    await store.create(pod('b'));
    await flush();
    assert.equal(cache.resourceVersion, 1);
    const p = cache.list({ resourceVersion: '' });
    await clock.advance(1000);
    assert.equal(await isSettled(p), false, 'waits for the cache to catch up');
    ps.resume();
    await flush();
    const list = await p;
    assert.equal(list.metadata.resourceVersion, '2');
    assert.deepEqual(
      list.items.map((o) => o.metadata.name),
      ['a', 'b'],
    );
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_consistent_read_total', { success: 'true', fallback: 'false' }),
      1,
    );
    await cache.stop();
  });

  test('falls back to the store on timeout and counts success=true, fallback=true', async () => {
    const { cache, store, clock } = await setup({}, (s) => new LaggingStore(s, 100));
    await store.create(pod('a'));
    await store.create(pod('b'));
    await flush();
    const p = cache.list({ resourceVersion: '' });
    await flush(); // the store is asked for its RV first; the wait starts after that
    await clock.advance(2999);
    assert.equal(await isSettled(p), false);
    await clock.advance(1);
    const list = await p;
    assert.deepEqual(
      list.items.map((o) => o.metadata.name),
      ['a', 'b'],
    );
    assert.equal(list.kind, 'PodList');
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_consistent_read_total', { success: 'true', fallback: 'true' }),
      1,
    );
    assert.equal(await cache.metricValue('apiserver_watch_cache_consistent_read_total', { fallback: 'false' }), 0);
    await cache.stop();
  });

  test('a consistent get falls back to the store too', async () => {
    const { cache, store, clock } = await setup({}, (s) => new LaggingStore(s, 5));
    await store.create(pod('a'));
    await flush();
    const p = cache.get('default', 'a', { resourceVersion: '' });
    await flush();
    await clock.advance(3000);
    const obj = await p;
    assert.equal(obj.metadata.name, 'a');
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_consistent_read_total', { success: 'true', fallback: 'true' }),
      1,
    );
    await cache.stop();
  });

  test('skipTimeoutFallback: 429 TooManyRequests with retry 1 s, counted fallback=skipped', async () => {
    const { cache, store, clock } = await setup({ skipTimeoutFallback: true }, (s) => new LaggingStore(s, 100));
    await store.create(pod('a'));
    await flush();
    const errP = rejection(cache.list({ resourceVersion: '' }));
    await flush();
    await clock.advance(3000);
    const err = await errP;
    assert.ok(err instanceof TooManyRequestsError);
    assert.equal(err.code, 429);
    assert.equal(err.retryAfterSeconds, 1);
    assert.equal(await cache.metricValue('apiserver_watch_cache_consistent_read_total', { fallback: 'skipped' }), 1);
    assert.equal(
      await cache.metricValue('apiserver_watch_cache_consistent_read_total', { success: 'false', fallback: 'skipped' }),
      1,
    );
    assert.equal(await cache.metricValue('apiserver_watch_cache_consistent_read_total', { fallback: 'true' }), 0);
    await cache.stop();
  });
});
