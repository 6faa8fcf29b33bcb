/**
 * The observer API (docs/observability.md): each catch-up transition is
 * published on its watchcache:… channel, for the cache that made it, with
 * the numbers the engine used; and the phase split covers every event.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { observe } from '../../src/observe/channels.js';
import { Reader, churn, flush, setup } from './support/harness.js';
import { asWatcher } from '../../src/watch/watcher.js';

for (const mode of ['alpha', 'beta'] as const) {
  describe(`observer channels (${mode})`, () => {
    test('a stall, then its resync, each published once for this cache only', async () => {
      const { cache, store, clock } = await setup({ mode });
      const other = await setup({ mode });
      const seen: string[] = [];
      const offs = [
        observe(cache, 'stall', (m) => seen.push(`stall:${m.watcherId}@${m.position}:${m.cause}:${m.unsynced}`)),
        observe(cache, 'resync', (m) => seen.push(`resync:${m.watcherId}:${m.passPushes > 0}`)),
        observe(other.cache, 'stall', () => seen.push('other')),
      ];
      const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 2 }));
      await churn(store, 5); // RVs 1..5: 3 does not fit
      await flush();
      assert.equal(w.unsynced, true);
      assert.deepEqual(seen, [`stall:${w.id}@2:full:1`]);
      const r = new Reader(w);
      for (let t = 0; t < 10_000 && w.unsynced; t += 5) {
        await r.drain();
        await clock.advance(5);
      }
      assert.equal(w.unsynced, false, 'resynced');
      assert.deepEqual(seen, [`stall:${w.id}@2:full:1`, `resync:${w.id}:true`]);
      for (const off of offs) off();
      w.stop();
      await cache.stop();
      await other.cache.stop();
    });

    test('an expiry publishes the numbers its 410 carries', async () => {
      const { cache, store } = await setup({
        mode,
        history: { lowerBound: 4, upperBound: 4, eventFreshDurationMs: 1 },
      });
      await churn(store, 10);
      const seen: string[] = [];
      const off = observe(cache, 'expire', (m) => seen.push(`${m.kind}:${m.position}:${m.oldestMinus1}`));
      const w = asWatcher(cache.watch({ resourceVersion: '2' }));
      const r = new Reader(w);
      await r.drain();
      off();
      assert.equal(seen.length, 1);
      assert.match(seen[0]!, /^at-start:2:\d+$/);
      const status = r.events[0]!.object as unknown as { code: number; message: string };
      assert.equal(status.code, 410);
      assert.equal(status.message, `too old resource version: 2 (${seen[0]!.split(':')[2]})`);
      await cache.stop();
    });
  });
}

test('watchcache:event: one phase split per ingested event, published only while subscribed', async () => {
  const { cache, store } = await setup({ mode: 'beta' });
  let events = 0;
  let rvs: number[] = [];
  const off = observe(cache, 'event', (m) => {
    events++;
    rvs.push(m.rv);
    assert.ok(m.appendMs >= 0 && m.ringMs >= 0 && m.encodeMs >= 0 && m.fanoutMs >= 0);
  });
  await churn(store, 3);
  await flush();
  off();
  await churn(store, 2);
  await flush();
  assert.equal(events, 3);
  assert.deepEqual(rvs, [1, 2, 3]);
  rvs = [];
  await cache.stop();
});
