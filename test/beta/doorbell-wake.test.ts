/**
 * Beta with the real sync worker thread: a main-thread consumer of a
 * worker-fed channel is woken through the shared-memory doorbell
 * (src/beta/wake-doorbell.ts), never by a 'pushed' message naming it, and
 * the worker's totals still arrive complete (at the hand-back). Observed on
 * the engine's `watchcache:worker-post` tool channel (both directions and
 * the doorbell's turns), not by patching.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore, WatchCache, observe } from '../../src/index.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import type { WorkerToMain } from '../../src/beta/sync-messages.js';

const WORKER_POST = 'watchcache:worker-post';

test(
  'beta (worker thread): a waiting main-thread consumer is woken through the doorbell, with no pushed message',
  { timeout: 120_000 },
  async (t) => {
    const store = new MemoryStore();
    const cache = new WatchCache({ store, mode: 'beta', history: { lowerBound: 100, upperBound: 102400 } });
    const errors: string[] = [];
    betaSyncOf(cache)!.onWorkerError = (m) => errors.push(m);
    await cache.start();
    t.after(() => cache.stop());
    const N = 3000;
    for (let i = 0; i < N; i++) await store.create({ metadata: { namespace: 'ns', name: `p${i}` }, spec: { i } });
    while (cache.resourceVersion < N) await sleep(1);

    const fromWorker: WorkerToMain[] = [];
    let doorbellTurns = 0;
    let doorbellIds = 0;
    const listener = (m: unknown): void => {
      const x = m as { cache: object; from: string; message?: WorkerToMain; ids?: readonly number[] };
      if (x.cache !== cache) return;
      if (x.from === 'worker') fromWorker.push(x.message!);
      if (x.from === 'doorbell') {
        doorbellTurns++;
        doorbellIds += x.ids!.length;
      }
    };
    diagnostics_channel.subscribe(WORKER_POST, listener);
    t.after(() => diagnostics_channel.unsubscribe(WORKER_POST, listener));
    let passPushes = 0;
    t.after(observe(cache, 'pass', (m) => (passPushes += m.pushes)));
    // What the engine reports the moment the watcher is back on the live path (the bench reads it then).
    let atResync: { passPushes: number; workerPushes: number } | undefined;
    t.after(
      observe(cache, 'resync', (m) => {
        atResync = { passPushes: m.passPushes, workerPushes: betaSyncOf(cache)!.workerStats.pushes };
      }),
    );

    // From the oldest RV: adopted by the worker (one resync path), through a small channel it refills often.
    const w = asWatcher(cache.watch({ resourceVersion: '1', channelCapacity: 10 }));
    const rvs: number[] = [];
    let waits = 0;
    while (rvs.length < N - 1) {
      const p = w.next();
      // A next() that found the channel empty is still pending after one turn of the microtask queue.
      let settled = false;
      void p.then(() => (settled = true));
      await Promise.resolve();
      if (!settled) waits++;
      const r = await p;
      if (r.done === true) break;
      if (r.value.type === 'BOOKMARK') continue;
      rvs.push(Number(r.value.object.metadata.resourceVersion));
    }
    assert.deepEqual(
      rvs,
      Array.from({ length: N - 1 }, (_, i) => i + 2),
      'every event after RV 1 once, in order',
    );
    // Caught up: the worker hands it back (its totals flushed with it).
    for (let i = 0; i < 200 && !fromWorker.some((m) => m.op === 'handback'); i++) await sleep(25);
    assert.ok(
      fromWorker.some((m) => m.op === 'handback'),
      'the worker handed the watcher back (seen on the channel)',
    );
    assert.ok(waits > 0, 'the consumer waited on an empty channel');
    assert.ok(doorbellTurns > 0 && doorbellIds >= doorbellTurns, `woken through the doorbell (${doorbellTurns} turns)`);
    const named = fromWorker.filter((m) => m.op === 'pushed' && m.ids.length > 0);
    assert.equal(named.length, 0, `no 'pushed' message named a consumer: ${JSON.stringify(named.slice(0, 3))}`);
    // The main thread applies a hand-back in a later turn (src/beta/hand-back-slices.ts).
    for (let i = 0; i < 200 && atResync === undefined; i++) await sleep(5);
    assert.ok(atResync !== undefined, 'resynced');
    // The hand-back carries the worker's totals: every push made for the watcher is counted by then (the
    // main thread itself delivers at most the hand-off distance, 16 events, after it).
    assert.ok(
      atResync.workerPushes >= atResync.passPushes - 16,
      `complete totals at the resync: ${JSON.stringify(atResync)}`,
    );
    const stats = betaSyncOf(cache)!.workerStats;
    // The worker pushed most of the backlog (the main thread delivers the last events of the hand-off distance).
    assert.ok(stats.pushes >= N / 2, `the worker's totals arrived (${stats.pushes} pushes)`);
    assert.equal(passPushes, stats.pushes, "the 'pass' observer channel saw the same totals");
    assert.deepEqual(errors, []);
    w.stop();
  },
);
