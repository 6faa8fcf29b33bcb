/**
 * Beta's deferred mirror (src/beta/deferred-mirror.ts): the turn's events
 * are written into the shared ring once the consumers the turn woke have
 * read them, so a healthy watcher has every event of a writer's burst
 * before the msgpack and ring append are spent on any of them (a mirror per
 * event in a microtask ran k mirrors ahead of each event of a k-event burst
 * after the first). What must still hold:
 * - the control block never tells the sync worker of an RV the ring does
 *   not hold yet;
 * - encode once: each event is msgpack-encoded exactly once, and an event on
 *   an object updated earlier in the same turn takes that event's frame as
 *   its previous object (no second encoding);
 * - a watcher handed to the worker while events wait finds them in the ring
 *   at once (the adopt flushes first);
 * - a long burst does not wait whole for the turn's end: its first
 *   MAX_DEFERRED_EVENTS are mirrored as the next event comes in;
 * - a live-first walk that goes on over many turns does not hold the
 *   mirror back until it ends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { Unpackr } from 'msgpackr';
import { MemoryStore, WatchCache } from '../../src/index.js';
import { withEngineOptions } from '../../src/cache/engine-options.js';
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import { ControlBlock, type ControlSnapshot } from '../../src/beta/control-block.js';
import { MAX_DEFERRED_EVENTS } from '../../src/beta/deferred-mirror.js';
import { decodeRingPayload } from '../../src/protocol/ring-payload.js';
import { createRingRecord, HistoryRingReader, ReadStatus } from '../../src/ring/ring-reader.js';
import { asWatcher } from '../../src/watch/watcher.js';
import type { WatchEvent } from '../../src/wire/watch-event.js';
import { flush, pod, setup, VirtualClock } from '../unit/support/harness.js';

const MSGPACK = { format: 'msgpack' };
const ENCODINGS = 'apiserver_watch_cache_event_encodings_total';

/** What the sync worker sees of a beta cache: its ring, and the last dispatched RV its control block tells. */
function workerView(cache: WatchCache): { ring: HistoryRingReader; lastDispatched: () => number } {
  const beta = betaSyncOf(cache)!;
  const control = new ControlBlock(beta.roomSignal);
  const snap: ControlSnapshot = { lastDispatchedRV: 0, oldestServableRV: undefined };
  return { ring: new HistoryRingReader(beta.ringHandle), lastDispatched: () => control.read(snap).lastDispatchedRV };
}

test("beta: the turn's events are mirrored after the consumers it woke, once per event, and the control block never runs ahead of the ring", async () => {
  const { cache, store, clock } = await setup({ mode: 'beta' });
  const first = await store.create(pod('a'));
  for (const name of ['b', 'c']) await store.create(pod(name));
  await flush();
  await clock.advance(0);
  const { ring, lastDispatched } = workerView(cache);
  const rv0 = cache.resourceVersion;
  assert.equal(ring.lastRV, rv0);
  assert.equal(lastDispatched(), rv0);
  const published0 = ring.publishedIndex;
  const encodings0 = await cache.metricValue(ENCODINGS, MSGPACK);

  // One watcher per object, each waiting: one store burst of three updates wakes all three.
  const seen: string[] = [];
  const loops = ['a', 'b', 'c'].map(async (name) => {
    for await (const ev of cache.watch({ resourceVersion: String(rv0), fieldSelector: `metadata.name=${name}` })) {
      const rv = Number(ev.object.metadata.resourceVersion);
      const told = lastDispatched();
      assert.ok(told <= ring.lastRV, `the control block says ${told}, the ring holds ${ring.lastRV}`);
      seen.push(`${name}@${rv - rv0}: ring ${ring.lastRV - rv0}`);
      break;
    }
  });
  await flush();
  for (const name of ['a', 'b', 'c']) void store.update({ ...(await store.get('default', name)), spec: { step: 1 } });
  await Promise.all(loops);
  // Every consumer the burst woke had its event before the ring had any of the burst.
  assert.deepEqual(seen, ['a@1: ring 0', 'b@2: ring 0', 'c@3: ring 0']);
  await clock.advance(0); // the turn's setImmediate (setTimeout(0) on the virtual clock)
  assert.equal(ring.publishedIndex, published0 + 3, 'all mirrored within the turn');
  assert.equal(lastDispatched(), rv0 + 3);

  // Three updates of the same object in one turn: each takes the frame before it as its previous object.
  let obj = await store.get('default', 'a');
  assert.equal(obj.metadata.uid, first.metadata.uid);
  const published1 = ring.publishedIndex;
  for (let i = 2; i <= 4; i++) obj = await store.update({ ...obj, spec: { step: i } });
  await flush();
  await clock.advance(0);
  assert.equal(ring.publishedIndex, published1 + 3);
  assert.equal(ring.lastRV, rv0 + 6);
  assert.equal(lastDispatched(), rv0 + 6);
  assert.equal((await cache.metricValue(ENCODINGS, MSGPACK)) - encodings0, 6, 'one msgpack encoding per event');

  // Each event's previous object is the one before it (from the pending frame of the event that carried it).
  const unpackr = new Unpackr({ useRecords: false });
  const rec = createRingRecord(1024);
  for (let i = 2; i <= 4; i++) {
    assert.equal(ring.read(published1 + i - 2, rec), ReadStatus.OK);
    assert.equal(rec.hasPrev, true);
    const d = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
    assert.deepEqual(d.frame.object.spec, { step: i });
    assert.deepEqual(d.prevObject?.spec, { step: i - 1 });
  }
  await cache.stop();
});

test('beta: one consumer reads every event of a store burst before any of them is mirrored', async () => {
  const { cache, store, clock } = await setup({ mode: 'beta' });
  const BURST = 5;
  const objs = [];
  for (let i = 1; i <= BURST; i++) objs.push(await store.create(pod(`p${i}`)));
  await flush();
  await clock.advance(0);
  const { ring } = workerView(cache);
  const rv0 = cache.resourceVersion;
  assert.equal(ring.lastRV, rv0);
  const ringAtReceipt: number[] = [];
  // It awaits next() after each event, as a stream writer does: events 2..5 are each one continuation away.
  const loop = (async () => {
    for await (const ev of cache.watch({ resourceVersion: String(rv0) })) {
      ringAtReceipt.push(ring.lastRV - rv0);
      if (ev.rv - rv0 === BURST) break;
    }
  })();
  await flush();
  // The burst: BURST updates dispatched in one synchronous run, as the bench writer catches up after a pause.
  for (const obj of objs) void store.update({ ...obj, spec: { step: 1 } });
  await loop;
  assert.deepEqual(ringAtReceipt, [0, 0, 0, 0, 0], 'no mirror ran ahead of an event of the burst');
  await clock.advance(0);
  assert.equal(ring.lastRV, rv0 + BURST, 'the whole burst is in the ring at the end of the turn');
  await cache.stop();
});

test('beta: a burst longer than MAX_DEFERRED_EVENTS has its first ones mirrored during the burst, each once, in order', async () => {
  const { cache, store, clock } = await setup({ mode: 'beta' });
  const BURST = MAX_DEFERRED_EVENTS + 8;
  const objs = [];
  for (let i = 1; i <= BURST; i++) objs.push(await store.create(pod(`p${i}`)));
  await flush();
  await clock.advance(0);
  const { ring, lastDispatched } = workerView(cache);
  const rv0 = cache.resourceVersion;
  const published0 = ring.publishedIndex;
  const encodings0 = await cache.metricValue(ENCODINGS, MSGPACK);
  const ringAtReceipt: number[] = [];
  const loop = (async () => {
    // Room for the whole burst: it stays on the live path (no stall).
    for await (const ev of cache.watch({ resourceVersion: String(rv0), channelCapacity: BURST + 1 })) {
      const told = lastDispatched();
      assert.ok(told <= ring.lastRV, `the control block says ${told}, the ring holds ${ring.lastRV}`);
      ringAtReceipt.push(ring.lastRV - rv0);
      if (ev.rv - rv0 === BURST) break;
    }
  })();
  await flush();
  for (const obj of objs) void store.update({ ...obj, spec: { step: 1 } });
  await loop;
  // The burst's first MAX_DEFERRED_EVENTS were mirrored as the next event came in, before the consumer ran;
  // the rest wait for the turn's end.
  assert.deepEqual(ringAtReceipt, new Array<number>(BURST).fill(MAX_DEFERRED_EVENTS));
  assert.equal(lastDispatched(), rv0 + MAX_DEFERRED_EVENTS);
  await clock.advance(0);
  assert.equal(ring.lastRV, rv0 + BURST, 'the whole burst is in the ring at the end of the turn');
  assert.equal(ring.publishedIndex, published0 + BURST);
  assert.equal(lastDispatched(), rv0 + BURST);
  assert.equal((await cache.metricValue(ENCODINGS, MSGPACK)) - encodings0, BURST, 'one msgpack encoding per event');
  // In order: ring event i carries update i of the burst.
  const unpackr = new Unpackr({ useRecords: false });
  const rec = createRingRecord(1024);
  for (let i = 0; i < BURST; i++) {
    assert.equal(ring.read(published0 + i, rec), ReadStatus.OK);
    assert.equal(rec.rv, rv0 + i + 1);
    const d = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
    assert.equal(d.frame.object.metadata.name, `p${i + 1}`);
  }
  await cache.stop();
});

test('beta: a watch from an old RV started while events wait for the mirror finds them in the ring at once', async () => {
  const { cache, store, clock } = await setup({ mode: 'beta' });
  const a = await store.create(pod('a'));
  const b = await store.create(pod('b'));
  await flush();
  await clock.advance(0); // the creates' mirror (the turn's setImmediate: setTimeout(0) on the virtual clock)
  const from = cache.resourceVersion;
  const { ring } = workerView(cache);
  let behind: ReturnType<typeof asWatcher> | undefined;
  let pendingAtWatch = -1;
  // The consumer of the first event runs before that event is mirrored: it opens the watch from there.
  const loop = (async () => {
    for await (const _ev of cache.watch({ resourceVersion: String(from) })) {
      pendingAtWatch = from + 2 - ring.lastRV;
      behind = asWatcher(cache.watch({ resourceVersion: String(from) })); // behind: adopted by the worker
      assert.equal(ring.lastRV, from + 2, 'the adopt flushed the mirror first');
      break;
    }
  })();
  await flush();
  void store.update({ ...a, spec: { step: 1 } });
  void store.update({ ...b, spec: { step: 1 } });
  await loop;
  assert.equal(pendingAtWatch, 2, 'both events were still waiting for the mirror');
  assert.ok(behind?.unsynced);
  await cache.stop();
});

test('beta: a burst longer than MAX_DEFERRED_EVENTS keeps live first: publishing the control block mid-burst does not walk the batch', async () => {
  const { cache, store, clock } = await setup({ mode: 'beta' });
  const BURST = MAX_DEFERRED_EVENTS + 8;
  const a = await store.create(pod('a'));
  await flush();
  await clock.advance(0);
  const rv0 = cache.resourceVersion;
  // 300 watchers whose consumers never read (over live first's threshold of 256) and one that waits.
  const idle = Array.from({ length: 300 }, () =>
    asWatcher(cache.watch({ resourceVersion: String(rv0), channelCapacity: BURST + 2 })),
  );
  const healthy = asWatcher(cache.watch({ resourceVersion: String(rv0), channelCapacity: BURST + 2 }));
  await flush();
  // Updates without a resourceVersion precondition, as a burst of writers would send them.
  const { resourceVersion: _rv, ...metadata } = a.metadata;
  const base = { ...a, metadata };
  await store.update({ ...base, spec: { step: 0 } }); // walked at once: it counts 300 not waiting
  await flush();
  await clock.advance(0);
  assert.equal(rvOf(await healthy.next()), rv0 + 1);
  const first = healthy.next(); // waits: the burst is a live-first batch
  for (let i = 1; i <= BURST; i++) void store.update({ ...base, spec: { step: i } });
  const r = await first;
  assert.equal(rvOf(r), rv0 + 2);
  // The mirror published the control block at event MAX_DEFERRED_EVENTS + 1 of the burst; had that walked the
  // batch, the idle channels would hold those events before the waiting consumer ran.
  for (const w of idle) assert.equal(w.queue.size, 1, 'the walk waits for the turn: only the first update queued');
  await clock.advance(0);
  await flush();
  for (const w of idle) assert.equal(w.queue.size, 1 + BURST, 'the walk gave every idle watcher the whole burst');
  const rest: number[] = [];
  while (rest.length < BURST - 1) rest.push(rvOf(await healthy.next()));
  assert.deepEqual(
    rest,
    Array.from({ length: BURST - 1 }, (_, i) => rv0 + 3 + i),
    'the rest of the burst, in order',
  );
  await cache.stop();
});

/** The RV an iterator result delivers (-1: the watch ended). */
function rvOf(r: IteratorResult<WatchEvent>): number {
  return r.done === true ? -1 : r.value.rv;
}

test("beta: a live-first walk that goes on over turns does not hold the mirror back: the event's turn mirrors it", async () => {
  const clock = new VirtualClock();
  const store = new MemoryStore({ clock });
  // Live first from one busy candidate, its walk one candidate a turn (engine options, as the harness sets them).
  const options = withEngineOptions(
    { store, clock, mode: 'beta' as const },
    { liveFirstMinWatchers: 1, liveFirstWalkChunk: 1 },
  );
  const cache = new WatchCache(options);
  await cache.start();
  const a = await store.create(pod('a'));
  await flush();
  await clock.advance(0);
  const rv0 = cache.resourceVersion;
  // Four watchers nobody reads (the walk's candidates) and one whose consumer waits.
  const idle = [1, 2, 3, 4].map(() => asWatcher(cache.watch({ resourceVersion: String(rv0) })));
  const waiter = asWatcher(cache.watch({ resourceVersion: String(rv0) }));
  await flush();
  const got = waiter.next();
  const offeredAtMirror: number[] = [];
  const onMirror = (m: unknown): void => {
    if ((m as { cache: object }).cache === cache) offeredAtMirror.push(idle.filter((w) => w.queue.size > 0).length);
  };
  diagnostics_channel.subscribe('watchcache:mirror', onMirror);
  try {
    void store.update({ ...a, spec: { step: 1 } });
    const r = await got;
    assert.equal(r.done, false);
    assert.equal(
      idle.filter((w) => w.queue.size > 0).length,
      0,
      'offered ahead to the waiting consumer; the walk is due',
    );
    await clock.advance(0);
  } finally {
    diagnostics_channel.unsubscribe('watchcache:mirror', onMirror);
  }
  assert.deepEqual(offeredAtMirror, [0], 'mirrored in the first turn, before the walk reached the idle watchers');
  for (const w of idle) assert.equal(w.queue.size, 1, 'the walk offered it to every idle watcher, over its turns');
  await cache.stop();
});
