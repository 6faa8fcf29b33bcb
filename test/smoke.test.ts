import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, WatchCache, type WatchEventLike } from '../src/index.js';

for (const mode of ['off', 'alpha', 'beta'] as const) {
  test(`smoke ${mode}: write, list, watch`, async () => {
    const store = new MemoryStore();
    const cache = new WatchCache({ store, mode });
    await cache.start();
    const a = await store.create({ metadata: { namespace: 'default', name: 'a', labels: { app: 'x' } }, spec: {} });
    const w = cache.watch({ resourceVersion: '0' });
    await store.update({ ...a, spec: { nodeName: 'n1' } });
    await store.delete('default', 'a');
    const got: string[] = [];
    for await (const ev of w) {
      got.push(`${ev.type}:${ev.object.metadata.resourceVersion}`);
      if (got.length === 3) break;
    }
    assert.deepEqual(got, ['ADDED:1', 'MODIFIED:2', 'DELETED:3']);
    const list = await cache.list({ resourceVersion: '' });
    assert.equal(list.metadata.resourceVersion, '3');
    assert.equal(list.items.length, 0);
    const w2 = cache.watch({ resourceVersion: '1' });
    const it = w2[Symbol.asyncIterator]();
    assert.equal(((await it.next()).value as WatchEventLike | undefined)?.type, 'MODIFIED');
    assert.equal(((await it.next()).value as WatchEventLike | undefined)?.type, 'DELETED');
    w2.stop();
    await cache.stop();
  });
}
