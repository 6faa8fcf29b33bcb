/**
 * The main thread never transfers (detaches) an ArrayBuffer to the sync
 * worker: the row messages (introduce-rows, adopt-rows, forget) are copied.
 * The first detach in a thread invalidates V8's ArrayBuffer-detaching
 * protector for good, and every optimized function there that touches a
 * typed array (the ring mirror, msgpack, the channels) was thrown away at the
 * first stall (SyncWorkerLink.post).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import diagnostics_channel from 'node:diagnostics_channel';
import { MemoryStore, WatchCache } from '../../src/index.js';
import { asWatcher } from '../../src/watch/watcher.js';
import type { MainToWorker } from '../../src/beta/sync-messages.js';

test('beta (worker thread): row messages reach the worker as copies, their buffers still attached here', async (t) => {
  const store = new MemoryStore();
  const cache = new WatchCache({ store, mode: 'beta' });
  await cache.start();
  t.after(() => cache.stop());
  for (let i = 0; i < 50; i++) await store.create({ metadata: { namespace: 'ns', name: `p${i}` } });
  while (cache.resourceVersion < 50) await sleep(1);

  const posted: { op: string; rows: Float64Array }[] = [];
  const onPost = (m: unknown): void => {
    const { cache: source, from, message } = m as { cache: unknown; from: string; message?: MainToWorker };
    if (source !== cache || from !== 'main' || message === undefined) return;
    if (message.op === 'introduce-rows' || message.op === 'adopt-rows')
      posted.push({ op: message.op, rows: message.rows });
    if (message.op === 'forget') posted.push({ op: message.op, rows: message.ids });
  };
  diagnostics_channel.subscribe('watchcache:worker-post', onPost);
  t.after(() => diagnostics_channel.unsubscribe('watchcache:worker-post', onPost));

  // Watchers from an old RV that read nothing: each is introduced and adopted by the worker; then they end.
  const from = String(cache.resourceVersion - 40);
  const watchers = Array.from({ length: 20 }, () =>
    asWatcher(cache.watch({ resourceVersion: from, channelCapacity: 5 })),
  );
  const ops = (): Set<string> => new Set(posted.map((p) => p.op));
  for (let i = 0; i < 2000 && !(ops().has('introduce-rows') && ops().has('adopt-rows')); i++) await sleep(5);
  for (const w of watchers) w.stop();
  for (let i = 0; i < 2000 && !ops().has('forget'); i++) await sleep(5);

  assert.deepEqual([...ops()].sort(), ['adopt-rows', 'forget', 'introduce-rows']);
  for (const { op, rows } of posted) {
    // A transferred buffer is detached after postMessage: byteLength 0 and no rows left to read.
    assert.ok(rows.buffer.byteLength > 0, `${op}: its buffer was transferred (detached)`);
    assert.ok(rows.length > 0, `${op}: no rows`);
  }
});
