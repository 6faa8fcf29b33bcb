/**
 * The watch cache in front of a real etcd: every mode delivers the exact
 * write sequence; an etcd SIGKILL + restart loses and duplicates nothing;
 * while etcd is down, RV-0 reads are served from the cache and consistent
 * reads fail with 503 and a Retry-After.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EtcdStore, WatchCache, type Mode } from '../../src/index.js';
import { startEtcd } from '../support/etcd-server.js';

const etcd = await startEtcd();

async function collect(
  w: AsyncIterator<{ type: string; object: { metadata: { resourceVersion?: string } } }>,
  n: number,
): Promise<string[]> {
  const out: string[] = [];
  while (out.length < n) {
    const r = await w.next();
    if (r.done) break;
    if (r.value.type !== 'BOOKMARK') out.push(`${r.value.type}@${r.value.object.metadata.resourceVersion}`);
  }
  return out;
}

for (const mode of ['off', 'alpha', 'beta'] as Mode[]) {
  test(
    `cache over etcd (${mode}): a watcher sees exactly the write sequence`,
    { skip: etcd === null ? 'etcd not installed' : false, timeout: 60_000 },
    async () => {
      const store = new EtcdStore({ endpoints: [etcd!.endpoint], prefix: `/registry/${mode}-pods/` });
      const cache = new WatchCache({ store, mode });
      await cache.start();
      // The test reads after writing: a channel that holds them all, so off mode does not force-close.
      const w = cache.watch({ resourceVersion: String(cache.resourceVersion), channelCapacity: 100 });
      const want: string[] = [];
      for (let i = 0; i < 20; i++) {
        const o = await store.create({ metadata: { namespace: 'default', name: `p${i}` }, spec: {} });
        want.push(`ADDED@${o.metadata.resourceVersion}`);
        const u = await store.update({ ...o, spec: { n: i } });
        want.push(`MODIFIED@${u.metadata.resourceVersion}`);
      }
      const d = await store.delete('default', 'p0');
      want.push(`DELETED@${d.metadata.resourceVersion}`);
      assert.deepEqual(await collect(w, want.length), want);
      const list = await cache.list({ resourceVersion: '' }); // consistent read through etcd's current revision
      assert.equal(list.items.length, 19);
      w.stop();
      await cache.stop();
      store.close();
    },
  );
}

test(
  'cache over etcd: SIGKILL + restart loses nothing; while down, RV 0 reads work and consistent reads are 503',
  { skip: etcd === null ? 'etcd not installed' : false, timeout: 90_000 },
  async () => {
    const store = new EtcdStore({
      endpoints: [etcd!.endpoint],
      prefix: '/registry/fault-pods/',
      requestTimeoutMs: 1500,
    });
    const cache = new WatchCache({ store, mode: 'alpha' });
    await cache.start();
    // The engine's timers are unref'd (a server's sockets keep a process alive); keep the test alive.
    const keepAlive = setInterval(() => {}, 1000);
    const w = cache.watch({ resourceVersion: String(cache.resourceVersion) });
    const want: string[] = [];
    for (let i = 0; i < 5; i++)
      want.push(
        `ADDED@${(await store.create({ metadata: { namespace: 'a', name: `before${i}` } })).metadata.resourceVersion}`,
      );
    assert.deepEqual(await collect(w, 5), want);
    await etcd!.kill();
    const cached = await cache.list({ resourceVersion: '0' });
    assert.equal(cached.items.length, 5, 'RV 0 is served from the cache while etcd is down');
    await assert.rejects(
      cache.list({ resourceVersion: '' }),
      (e: { code?: number; retryAfterSeconds?: number }) => e.code === 503 && e.retryAfterSeconds === 1,
    );
    await assert.rejects(
      store.create({ metadata: { namespace: 'a', name: 'down' } }),
      (e: { code?: number }) => e.code === 503,
    );
    await etcd!.restart();
    const after: string[] = [];
    for (let i = 0; i < 5; i++)
      after.push(
        `ADDED@${(await store.create({ metadata: { namespace: 'a', name: `after${i}` } })).metadata.resourceVersion}`,
      );
    assert.deepEqual(await collect(w, 5), after, 'the watch resumes with no loss or duplicate');
    clearInterval(keepAlive);
    w.stop();
    await cache.stop();
    store.close();
  },
);

test('stop etcd', { skip: etcd === null }, async () => {
  await etcd!.stop();
});
