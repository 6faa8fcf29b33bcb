/**
 * Beta's deferred mirror (src/beta/deferred-mirror.ts): the shared ring is
 * written after the live dispatch, so a healthy watcher has its event before
 * the ~30 µs of msgpack and ring copy are spent. What must still hold:
 * - the control block never tells the sync worker of an RV the ring does
 *   not hold yet;
 * - encode once: each event is msgpack-encoded exactly once, and an event on
 *   an object updated earlier in the same turn takes that event's frame as
 *   its previous object (no second encoding);
 * - a watcher handed to the worker while events wait finds them in the ring
 *   at once (the adopt flushes first).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Unpackr } from 'msgpackr';
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import { ControlBlock, type ControlSnapshot } from '../../src/beta/control-block.js';
import { decodeRingPayload } from '../../src/protocol/ring-payload.js';
import { createRingRecord, HistoryRingReader, ReadStatus } from '../../src/ring/ring-reader.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { flush, pod, Reader, setup } from '../unit/support/harness.js';

const MSGPACK = { format: 'msgpack' };
const ENCODINGS = 'apiserver_watch_cache_event_encodings_total';

test('beta: the ring is written after the live dispatch, once per event, and the control block never runs ahead of it', async () => {
  const { cache, store, clock } = await setup({ mode: 'beta' });
  const beta = betaSyncOf(cache)!;
  const first = await store.create(pod('a'));
  await flush();
  await clock.advance(0); // the first event's mirror
  const ring = new HistoryRingReader(beta.ringHandle);
  const control = new ControlBlock(beta.roomSignal);
  const snap: ControlSnapshot = { lastDispatchedRV: 0, oldestServableRV: undefined };
  const rv0 = cache.resourceVersion;
  assert.equal(ring.lastRV, rv0);
  assert.equal(control.read(snap).lastDispatchedRV, rv0);
  const healthy = new Reader(asWatcher(cache.watch({ resourceVersion: String(rv0) })));
  await healthy.drain();
  const published0 = ring.publishedIndex;
  const encodings0 = await cache.metricValue(ENCODINGS, MSGPACK);

  // Three updates of the same object in one turn: the live path delivers them before the ring has any.
  let obj = first;
  for (let i = 1; i <= 3; i++) obj = await store.update({ ...obj, spec: { step: i } });
  await healthy.drain();
  assert.deepEqual(
    healthy.summary,
    [1, 2, 3].map((i) => `MODIFIED:${rv0 + i}`),
  );
  assert.equal(ring.publishedIndex, published0, 'nothing mirrored before the consumers ran');
  assert.equal(control.read(snap).lastDispatchedRV, rv0, 'the control block waits for the ring');

  await clock.advance(0); // the deferred flush
  assert.equal(ring.publishedIndex, published0 + 3);
  assert.equal(ring.lastRV, rv0 + 3);
  assert.equal(control.read(snap).lastDispatchedRV, rv0 + 3);
  assert.equal((await cache.metricValue(ENCODINGS, MSGPACK)) - encodings0, 3, 'one msgpack encoding per event');

  // Each event's previous object is the one before it (from the pending frame of the event that carried it).
  const unpackr = new Unpackr({ useRecords: false });
  const rec = createRingRecord(1024);
  for (let i = 1; i <= 3; i++) {
    assert.equal(ring.read(published0 + i - 1, rec), ReadStatus.OK);
    assert.equal(rec.hasPrev, true);
    const d = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
    assert.deepEqual(d.frame.object.spec, { step: i });
    assert.deepEqual(d.prevObject?.spec, i === 1 ? {} : { step: i - 1 });
  }
  await cache.stop();
});

test('beta: a watch from an old RV started while events wait for the mirror finds them in the ring at once', async () => {
  const { cache, store } = await setup({ mode: 'beta' });
  const beta = betaSyncOf(cache)!;
  const first = await store.create(pod('a'));
  await flush();
  const from = cache.resourceVersion;
  let obj = first;
  for (let i = 1; i <= 2; i++) obj = await store.update({ ...obj, spec: { step: i } });
  await flush(); // dispatched; the mirror waits for its turn (the virtual clock has not moved)
  const ring = new HistoryRingReader(beta.ringHandle);
  assert.ok(ring.lastRV < from + 2, 'still pending');
  const w = asWatcher(cache.watch({ resourceVersion: String(from) })); // behind: adopted by the worker
  assert.equal(ring.lastRV, from + 2, 'the adopt flushed the mirror first');
  assert.ok(w.unsynced);
  await cache.stop();
});
