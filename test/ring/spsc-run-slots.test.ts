/**
 * SPSC channel, run slots (SpscChannel.pushBatchedRun, module doc "Run
 * slots"): one slot standing for consecutive history references delivered as
 * is. Checked here: the encoding (a run word is negative, never a single
 * reference's or a bookmark's word; the pops never return it; references above
 * MAX_RUN_REF fall back to single slots); coalescing (only into the last slot,
 * only while it is unpublished, only the next reference as is; RUN_MAX; a
 * publication in the middle splits); expansion, in order and exactly once, in
 * every pop path (pop, popBatched, popLocal after the hand-back; over several
 * pops, across a quarter publication, at the slot array's wrap, with a
 * bookmark after the run) with the bookkeeping the consumers read
 * (leftAfterPop, poppedFromFull, headPublished, size); lastPushedRef; a run
 * consumed through SharedWatcherChannel.shift (OVERWRITTEN for a reference of
 * a run the history dropped, clear() in the middle of a run); and a consumer
 * in the RemoteWatch shape (WatchPort), which reads with pop().
 */
import test, { describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_RUN_LENGTH,
  MAX_RUN_REF,
  MAX_SLOT_REF,
  POP_CLOSED,
  POP_EMPTY,
  RunPush,
  SpscChannel,
} from '../../src/ring/spsc-channel.js';
import { Terminal, Variant, WriterOwner } from '../../src/protocol/channel-variants.js';
import { SharedWatcherChannel } from '../../src/beta/shared-watcher-channel.js';
import type { EventHistory } from '../../src/history/event-history.js';
import { OVERWRITTEN } from '../../src/watch/watcher-channel.js';
import type { WatchEvent } from '../../src/wire/watch-event.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { openWatch } from '../../src/beta/watch-port.js';
import { newPortState } from '../../src/protocol/port-state-cells.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { DEFAULT_RESOURCE } from '../../src/core/types.js';
import { RingPayloadWriter } from '../../src/protocol/ring-payload.js';
import { EventTypeCode } from '../../src/ring/ring-layout.js';
import { msgpack } from '../../src/wire/watch-event.js';
import type { KubeObject, WatchEventLike } from '../../src/core/types.js';

/** The producer's and the consumer's instances of one channel (as two threads open it). */
function pair(capacity: number): { producer: SpscChannel; consumer: SpscChannel } {
  const producer = SpscChannel.create(capacity, WriterOwner.SYNC_WORKER);
  return { producer, consumer: new SpscChannel(producer.handle) };
}

/** The raw slot words of a channel made by SpscChannel.create (header: 64 bytes). */
function slotWords(ch: SpscChannel): Float64Array {
  return new Float64Array(ch.handle.buffer, 64, ch.capacity);
}

/** pushBatchedRun of refs from .. to (inclusive), each asserted to answer `expect(ref)`. */
function pushRange(ch: SpscChannel, from: number, to: number): RunPush[] {
  const out: RunPush[] = [];
  for (let ref = from; ref <= to; ref++) out.push(ch.pushBatchedRun(ref));
  return out;
}

/** Every reference the consumer can pop() now, with its variant. */
function drain(consumer: SpscChannel, pop: () => number = () => consumer.pop()): [number, Variant][] {
  const got: [number, Variant][] = [];
  for (let r = pop(); r >= 0; r = pop()) got.push([r, consumer.lastVariant]);
  return got;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('spsc channel: run slots', () => {
  test('encoding: a run word is negative (≤ -2), single and bookmark words are not; pops return references only', () => {
    const { producer, consumer } = pair(8);
    assert.deepEqual(pushRange(producer, 5, 7), [RunPush.SLOT, RunPush.GREW, RunPush.GREW]);
    assert.ok(producer.pushBatched(8, Variant.BOOKMARK)); // a bookmark's RV right after: its own slot
    producer.publishPushes();
    assert.ok(producer.tryPush(0, Variant.BOOKMARK), 'RV 0 bookmark: word 3');
    const words = slotWords(producer);
    assert.ok(words[0]! <= -2, `run word ${words[0]} is negative`);
    assert.equal(words[1], 8 * 4 + Variant.BOOKMARK);
    assert.equal(words[2], Variant.BOOKMARK);
    assert.equal(consumer.size, 3, 'three slots for five references');
    assert.deepEqual(drain(consumer), [
      [5, Variant.AS_IS],
      [6, Variant.AS_IS],
      [7, Variant.AS_IS],
      [8, Variant.BOOKMARK],
      [0, Variant.BOOKMARK],
    ]);
    assert.equal(consumer.pop(), POP_EMPTY, 'no sentinel is ever taken for a run');
    producer.close(Terminal.END);
    assert.equal(consumer.pop(), POP_CLOSED);
  });

  test('bounds: runs up to MAX_RUN_REF; above it single slots; references up to MAX_SLOT_REF still pushed', () => {
    {
      const { producer, consumer } = pair(8);
      // A run whose first reference is the bound, and one starting right below it that grows past it.
      assert.deepEqual(pushRange(producer, MAX_RUN_REF, MAX_RUN_REF + 3), [
        RunPush.SLOT,
        RunPush.GREW,
        RunPush.GREW,
        RunPush.GREW,
      ]);
      producer.publishPushes();
      assert.deepEqual(
        drain(consumer).map(([r]) => r),
        range(MAX_RUN_REF, MAX_RUN_REF + 3),
        'exact references at the bound',
      );
    }
    {
      const { producer, consumer } = pair(8);
      assert.deepEqual(pushRange(producer, MAX_RUN_REF + 1, MAX_RUN_REF + 3), [
        RunPush.SLOT,
        RunPush.SLOT,
        RunPush.SLOT,
      ]);
      assert.equal(producer.pushBatchedRun(MAX_SLOT_REF), RunPush.SLOT);
      assert.equal(producer.pendingPushes, 4, 'one slot each above MAX_RUN_REF');
      producer.publishPushes();
      assert.deepEqual(
        drain(consumer).map(([r]) => r),
        [...range(MAX_RUN_REF + 1, MAX_RUN_REF + 3), MAX_SLOT_REF],
      );
      assert.throws(() => producer.pushBatchedRun(MAX_SLOT_REF + 1), RangeError);
      assert.throws(() => producer.pushBatchedRun(-1), RangeError);
    }
  });

  test('coalescing: only the next reference, as is, into the last unpublished slot; a publication splits', () => {
    const { producer, consumer } = pair(8);
    assert.deepEqual(pushRange(producer, 10, 12), [RunPush.SLOT, RunPush.GREW, RunPush.GREW]);
    assert.equal(producer.pushBatchedRun(14), RunPush.SLOT, 'a gap (an event it skipped) ends the run');
    assert.ok(producer.pushBatched(15, Variant.ADDED), 'ADDED: a slot of its own');
    assert.equal(producer.pushBatchedRun(16), RunPush.SLOT, 'nothing grows past a single push');
    assert.equal(producer.pushBatchedRun(17), RunPush.GREW);
    producer.publishPushes();
    assert.equal(
      producer.pushBatchedRun(18),
      RunPush.SLOT,
      'INVARIANT (publish ordering): a published slot never grows',
    );
    assert.equal(producer.pushBatchedRun(19), RunPush.GREW);
    assert.equal(producer.pushBatchedRun(19), RunPush.SLOT, 'not the next reference: no run');
    producer.publishPushes();
    assert.equal(producer.size, 6);
    assert.deepEqual(drain(consumer), [
      [10, Variant.AS_IS],
      [11, Variant.AS_IS],
      [12, Variant.AS_IS],
      [14, Variant.AS_IS],
      [15, Variant.ADDED],
      [16, Variant.AS_IS],
      [17, Variant.AS_IS],
      [18, Variant.AS_IS],
      [19, Variant.AS_IS],
      [19, Variant.AS_IS],
    ]);
  });

  test('RUN_MAX: a run holds at most min(CAPACITY, MAX_RUN_LENGTH) references, so a channel holds ≤ CAPACITY·RUN_MAX', () => {
    const { producer, consumer } = pair(4);
    const outcomes = pushRange(producer, 0, 15);
    assert.deepEqual(
      outcomes.map((o, i) => (i % 4 === 0 ? o === RunPush.SLOT : o === RunPush.GREW)),
      new Array<boolean>(16).fill(true),
      'a new slot every CAPACITY references',
    );
    assert.equal(producer.free, 0, 'full: 4 slots of 4');
    assert.equal(producer.pushBatchedRun(16), RunPush.REFUSED, 'the last run is at RUN_MAX: no slot left');
    producer.publishPushes();
    assert.deepEqual(
      drain(consumer).map(([r]) => r),
      range(0, 15),
    );
    // A channel larger than MAX_RUN_LENGTH: runs stop at MAX_RUN_LENGTH.
    const big = pair(MAX_RUN_LENGTH + 8);
    for (let ref = 0; ref < MAX_RUN_LENGTH + 1; ref++) big.producer.pushBatchedRun(ref);
    assert.equal(big.producer.pendingPushes, 2);
    big.producer.publishPushes();
    assert.equal(drain(big.consumer).length, MAX_RUN_LENGTH + 1);
  });

  test('a run grows while the channel is full (it takes no slot); a full channel refuses a new slot only', () => {
    const { producer, consumer } = pair(2);
    assert.ok(producer.pushBatched(0, Variant.ADDED));
    assert.equal(producer.pushBatchedRun(1), RunPush.SLOT);
    assert.equal(producer.free, 0);
    assert.equal(producer.pushBatchedRun(2), RunPush.GREW, 'no room needed to grow the last slot');
    assert.equal(producer.pushBatchedRun(4), RunPush.REFUSED);
    producer.publishPushes();
    assert.deepEqual(
      drain(consumer).map(([r]) => r),
      [0, 1, 2],
    );
  });

  test('pop(): a run over several pops; its slot stays until the last; leftAfterPop, poppedFromFull, size, queuedEvents', () => {
    const { producer, consumer } = pair(4);
    pushRange(producer, 20, 22);
    assert.ok(producer.pushBatched(30, Variant.DELETED));
    assert.ok(producer.pushBatched(31, Variant.ADDED));
    assert.ok(producer.pushBatched(32, Variant.ADDED));
    producer.publishPushes();
    assert.equal(consumer.size, 4);
    assert.equal(consumer.queuedEvents, 6, 'a run of 3 and three single references');
    assert.equal(consumer.pop(), 20);
    assert.equal(consumer.queuedEvents, 5, 'less what was taken of the head run');
    assert.equal(consumer.lastVariant, Variant.AS_IS);
    assert.equal(consumer.poppedFromFull, false, 'no slot released: not a pop from full');
    assert.equal(consumer.leftAfterPop, 4, 'the run is still queued');
    assert.equal(producer.free, 0, 'INVARIANT (slot reuse): the run slot is not released yet');
    assert.equal(consumer.pop(), 21);
    assert.equal(consumer.size, 4);
    assert.equal(consumer.pop(), 22);
    assert.equal(consumer.queuedEvents, 3);
    assert.equal(consumer.poppedFromFull, true, 'its last reference released the slot of a full channel');
    assert.equal(consumer.leftAfterPop, 3);
    assert.equal(producer.free, 1);
    assert.equal(consumer.pop(), 30);
    assert.equal(consumer.lastVariant, Variant.DELETED, 'the variant after a run is its own');
    assert.deepEqual(drain(consumer), [
      [31, Variant.ADDED],
      [32, Variant.ADDED],
    ]);
    assert.equal(consumer.leftAfterPop, 0);
    assert.equal(consumer.queuedEvents, 0);
    assert.equal(consumer.pop(), POP_EMPTY);
  });

  test('popBatched(): a run across quarter publications; HEAD only when its slot is released', () => {
    const { producer, consumer } = pair(8); // a quarter: 2 slots
    pushRange(producer, 0, 2); // slot 0: run of 3
    assert.ok(producer.pushBatched(3, Variant.ADDED)); // slot 1
    pushRange(producer, 4, 5); // slot 2: run of 2
    producer.publishPushes();
    const seen: [number, Variant, boolean, number][] = [];
    for (let r = consumer.popBatched(); r >= 0; r = consumer.popBatched())
      seen.push([r, consumer.lastVariant, consumer.headPublished, consumer.leftAfterPop]);
    assert.deepEqual(seen, [
      [0, Variant.AS_IS, false, 3],
      [1, Variant.AS_IS, false, 3],
      [2, Variant.AS_IS, false, 2], // the run's slot taken, not yet a quarter since the last publication
      [3, Variant.ADDED, true, 1], // a quarter of slots: published
      [4, Variant.AS_IS, false, 1],
      [5, Variant.AS_IS, true, 0], // the last seen: published
    ]);
    assert.equal(producer.free, 8);
  });

  test('every reference once and in order at the slot array wrap, runs and singles mixed, all pop paths', () => {
    for (const path of ['pop', 'popBatched'] as const) {
      const { producer, consumer } = pair(3);
      const got: number[] = [];
      const want: number[] = [];
      let next = 0;
      for (let round = 0; round < 60; round++) {
        const len = 1 + (round % 4); // runs of 1 to 4 (3 is RUN_MAX: a 4 is a run and a single)
        for (let k = 0; k < len; k++) {
          if (producer.pushBatchedRun(next) === RunPush.REFUSED) {
            producer.publishPushes();
            for (const [r] of drain(consumer, () => consumer[path]())) got.push(r);
            assert.notEqual(producer.pushBatchedRun(next), RunPush.REFUSED);
          }
          want.push(next++);
        }
        next++; // a gap: the next run starts a slot
        if (round % 3 === 0) {
          producer.publishPushes();
          for (const [r] of drain(consumer, () => consumer[path]())) got.push(r);
        }
      }
      producer.publishPushes();
      for (const [r] of drain(consumer, () => consumer[path]())) got.push(r);
      assert.deepEqual(got, want, path);
    }
  });

  test('popLocal(): runs the worker queued are expanded after the hand-back, before the live pushes', () => {
    const main = SpscChannel.create(4, WriterOwner.MAIN);
    assert.ok(main.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
    const worker = new SpscChannel(main.handle);
    pushRange(worker, 40, 43);
    worker.publishPushes();
    pushRange(worker, 50, 51);
    assert.equal(main.popBatched(), 40, 'the consumer read one while the worker fed it');
    assert.equal(worker.lastPushedRef(), 43, 'published only: the run pending is not yet the channel’s');
    worker.publishPushes();
    assert.equal(worker.lastPushedRef(), 51, 'lastPushedRef: the run’s last reference');
    assert.equal(worker.lastPushedVariant, Variant.AS_IS);
    assert.ok(worker.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
    assert.ok(main.pushLocal(60, Variant.ADDED), 'the live push after the hand-back: a single slot');
    assert.equal(main.lastPushedRef(), 60);
    const got: number[] = [];
    for (let r = main.popLocal(); r >= 0; r = main.popLocal()) got.push(r);
    assert.deepEqual(got, [41, 42, 43, 50, 51, 60], 'the first run resumes where the batched read left it');
    assert.equal(main.popLocal(), POP_EMPTY);
    // discardLocal in the middle of a run forgets it: the next run starts at its first reference.
    assert.ok(main.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
    pushRange(worker, 70, 72);
    worker.publishPushes();
    assert.ok(worker.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
    assert.equal(main.popLocal(), 70);
    main.discardLocal();
    assert.equal(main.popLocal(), POP_EMPTY);
    assert.ok(main.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
    pushRange(worker, 80, 81);
    worker.publishPushes();
    assert.deepEqual(
      drain(main).map(([r]) => r),
      [80, 81],
    );
  });

  test('lastPushedRef: a run partly taken still answers its last reference; a bookmark after it, its RV', () => {
    const { producer, consumer } = pair(4);
    pushRange(producer, 7, 9);
    producer.publishPushes();
    assert.equal(consumer.pop(), 7);
    assert.equal(consumer.lastPushedRef(), 9);
    assert.ok(producer.tryPush(123, Variant.BOOKMARK));
    assert.equal(consumer.lastPushedRef(), 123);
    assert.equal(consumer.lastPushedVariant, Variant.BOOKMARK);
    assert.deepEqual(drain(consumer), [
      [8, Variant.AS_IS],
      [9, Variant.AS_IS],
      [123, Variant.BOOKMARK],
    ]);
    assert.equal(consumer.lastPushedRef(), -1);
  });
});

/** A stand-in history for SharedWatcherChannel: indices [start, end) are held; an event is its index. */
function fakeHistory(start: number, end: number): { history: EventHistory; drop(to: number): void } {
  const h = {
    startIndex: start,
    endIndex: end,
    at: (i: number) => ({ deliver: () => ({ ref: i }) as unknown as WatchEvent }),
  };
  return {
    history: h as unknown as EventHistory,
    drop(to: number) {
      h.startIndex = to;
    },
  };
}

describe('SharedWatcherChannel: runs through shift()', () => {
  test('a run is shifted once per event while the worker feeds it and after the hand-back; OVERWRITTEN mid-run', () => {
    const fake = fakeHistory(0, 1000);
    const ch = new SharedWatcherChannel(8, fake.history); // a quarter: 2 slots per HEAD publication
    assert.ok(ch.handToWorker());
    const worker = new SpscChannel(ch.handle);
    let freed = 0;
    ch.onRoomForWorker = () => freed++;
    pushRange(worker, 100, 103);
    pushRange(worker, 110, 113);
    worker.publishPushes();
    const refOf = (e: ReturnType<SharedWatcherChannel['shift']>): unknown =>
      e === OVERWRITTEN || e === undefined ? e : (e as unknown as { ref: number }).ref;
    assert.deepEqual([refOf(ch.shift()), refOf(ch.shift())], [100, 101]);
    assert.equal(ch.leftAfterShift, 2);
    assert.equal(freed, 0, 'no room signal before a slot is released');
    assert.deepEqual([refOf(ch.shift()), refOf(ch.shift())], [102, 103]);
    assert.equal(freed, 0, 'released, but the HEAD publication waits for a quarter');
    assert.equal(refOf(ch.shift()), 110);
    ch.onRoomForWorker = undefined;
    // The history drops 111 and 112 before the consumer reaches them: an honest 410, never wrong data.
    fake.drop(113);
    assert.equal(ch.shift(), OVERWRITTEN);
    assert.equal(ch.shift(), OVERWRITTEN);
    assert.equal(refOf(ch.shift()), 113);
    assert.equal(ch.shift(), undefined);
    assert.equal(ch.leftAfterShift, 0);
    // Hand-back with a run queued: the main thread's shifts (owner-local) go on expanding it.
    pushRange(worker, 200, 203);
    worker.publishPushes();
    assert.ok(worker.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
    assert.equal(refOf(ch.shift()), 200);
    assert.ok(ch.push({ ref: 204, slotWord: 204 * 4, delivery: 1, type: 'MODIFIED', rv: 0 } as unknown as WatchEvent));
    assert.deepEqual(
      [refOf(ch.shift()), refOf(ch.shift()), refOf(ch.shift()), refOf(ch.shift())],
      [201, 202, 203, 204],
    );
    assert.equal(ch.shift(), undefined);
  });

  test('clear() in the middle of a run drops the whole backlog, the run included', () => {
    const fake = fakeHistory(0, 1000);
    const ch = new SharedWatcherChannel(4, fake.history);
    assert.ok(ch.handToWorker());
    const worker = new SpscChannel(ch.handle);
    pushRange(worker, 0, 5);
    worker.publishPushes();
    ch.shift();
    ch.clear();
    assert.equal(ch.size, 0);
    assert.equal(ch.shift(), undefined);
    pushRange(worker, 10, 11);
    worker.publishPushes();
    assert.equal((ch.shift() as unknown as { ref: number }).ref, 10, 'the next run from its first reference');
  });
});

/** Event `abs` (RV abs + 1) appended to `ring` as the beta mirror writes it (a ring payload). */
function appendPod(ring: HistoryRing, writer: RingPayloadWriter, abs: number): void {
  const object: KubeObject = { metadata: { namespace: 'ns', name: `p${abs}`, resourceVersion: String(abs + 1) } };
  const frame = msgpack.pack({ type: 'ADDED', object });
  const meta = { rv: abs + 1, type: EventTypeCode.ADDED, nsHash: 0, nameHash: 0, triggerHash: 0, prevTriggerHash: 0 };
  ring.appendPayload(meta, writer.set(frame, object, undefined));
}

describe('RemoteWatch (a consumer in another thread) reads runs with pop()', () => {
  test('every event of a run once and in order; a run reference the ring overwrote ends it with its 410', async () => {
    const ring = new HistoryRing({ capacity: 16 });
    const writer = new RingPayloadWriter({});
    const rvOf = (abs: number): number => abs + 1;
    for (let abs = 0; abs < 8; abs++) appendPod(ring, writer, abs);
    ring.publish();
    const producer = SpscChannel.create(16, WriterOwner.SYNC_WORKER);
    const watch = openWatch({
      kind: 'watchcache.watch-port',
      version: 1,
      channel: producer.handle,
      ring: ring.handle,
      state: newPortState(),
      cursor: new Float64Array(new SharedArrayBuffer(CELL_BYTES)),
      initial: null,
      resource: DEFAULT_RESOURCE,
    });
    pushRange(producer, 0, 3);
    pushRange(producer, 4, 5);
    producer.publishPushes();
    /** The next event (not the end). */
    const next = async (): Promise<WatchEventLike> => {
      const r = await watch.next();
      assert.equal(r.done, false);
      return r.value;
    };
    const rvs: number[] = [];
    for (let i = 0; i < 6; i++) rvs.push(Number((await next()).object.metadata.resourceVersion));
    assert.deepEqual(rvs, range(0, 5).map(rvOf));
    // A run of 6..9; the ring then overwrites them (16 slots: 26 events) before the consumer reads 7.
    for (let abs = 8; abs < 10; abs++) appendPod(ring, writer, abs);
    ring.publish();
    pushRange(producer, 6, 9);
    producer.publishPushes();
    assert.equal(Number((await next()).object.metadata.resourceVersion), rvOf(6));
    for (let abs = 10; abs < 26; abs++) appendPod(ring, writer, abs);
    ring.publish();
    assert.equal((await next()).type, 'ERROR', 'the 410, not event 7');
    assert.equal((await watch.next()).done, true);
  });
});
