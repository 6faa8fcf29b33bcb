/**
 * SPSC channel: unit tests (full/empty, order, variants, close/terminal,
 * cancel, owner hand-off CAS, wait/notify) and real two-thread tests (a
 * producer worker and a consumer worker exchanging 1,000,000 refs; a
 * main-thread → worker producer hand-off), plus the channel + history ring
 * contract: a popped ref whose event was evicted reads as OVERWRITTEN.
 */
import { Worker } from 'node:worker_threads';
import test, { describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SLOT_REF, POP_CLOSED, POP_EMPTY, SpscChannel } from '../../src/ring/spsc-channel.js';
import { deliveryOf, Terminal, Variant, variantOf, WriterOwner } from '../../src/protocol/channel-variants.js';
import { Delivery } from '../../src/selection/selection.js';
import { ReadStatus, createRingRecord } from '../../src/ring/ring-reader.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { makeEvent, rvOf } from './ring-fixtures.js';
import type { SpscWorkerData, SpscWorkerResult } from './spsc-worker.js';

function startWorker(data: SpscWorkerData): { worker: Worker; result: Promise<SpscWorkerResult> } {
  const worker = new Worker(new URL('./spsc-worker.js', import.meta.url), { workerData: data });
  const result = new Promise<SpscWorkerResult>((resolve, reject) => {
    worker.once('message', (m: SpscWorkerResult) => resolve(m));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`spsc worker exited with ${code}`)));
  });
  return { worker, result };
}

describe('spsc channel: single thread', () => {
  test('full and empty, FIFO order, variants, size/free', () => {
    const ch = SpscChannel.create(4);
    assert.equal(ch.size, 0);
    assert.equal(ch.free, 4);
    assert.equal(ch.pop(), POP_EMPTY);
    assert.ok(ch.tryPush(10, Variant.AS_IS));
    assert.ok(ch.tryPush(MAX_SLOT_REF, Variant.ADDED)); // absolute indices far beyond 2^32, up to the slot bound
    assert.ok(ch.tryPush(12, Variant.DELETED));
    assert.ok(ch.tryPush(13));
    assert.equal(ch.tryPush(14), false, 'full');
    assert.equal(ch.size, 4);
    assert.equal(ch.free, 0);
    assert.equal(ch.pop(), 10);
    assert.equal(ch.lastVariant, Variant.AS_IS);
    assert.equal(ch.pop(), MAX_SLOT_REF);
    assert.equal(ch.lastVariant, Variant.ADDED);
    assert.ok(ch.tryPush(14));
    assert.equal(ch.pop(), 12);
    assert.equal(ch.lastVariant, Variant.DELETED);
    assert.equal(ch.pop(), 13);
    assert.equal(ch.pop(), 14);
    assert.equal(ch.pop(), POP_EMPTY);
    assert.equal(ch.size, 0);
  });

  test('a reference a slot cannot hold exactly is refused with a RangeError, and nothing is pushed', () => {
    const ch = SpscChannel.create(4);
    assert.throws(() => ch.tryPush(MAX_SLOT_REF + 1), RangeError);
    assert.throws(() => ch.pushLocal(-1, Variant.AS_IS), RangeError);
    assert.throws(() => ch.tryPush(Number.NaN), RangeError);
    assert.equal(ch.size, 0);
    assert.equal(ch.popLocal(), POP_EMPTY);
  });

  test('owner-local push of references past the small-integer fast check: exact up to the slot bound, refused past it', () => {
    const ch = SpscChannel.create(4);
    const refs = [2 ** 30 - 1, 2 ** 30, 2 ** 40 + 3, MAX_SLOT_REF];
    for (const [i, ref] of refs.entries()) assert.ok(ch.pushLocal(ref, (i % 3) as Variant));
    assert.equal(ch.pushLocal(5, Variant.AS_IS), false, 'full');
    assert.throws(() => ch.pushLocal(MAX_SLOT_REF + 1, Variant.AS_IS), RangeError);
    for (const [i, ref] of refs.entries()) {
      assert.equal(ch.popLocal(), ref);
      assert.equal(ch.lastVariant, i % 3);
    }
    assert.throws(() => ch.pushLocal(MAX_SLOT_REF + 1, Variant.AS_IS), RangeError, 'refused with room too');
    assert.equal(ch.popLocal(), POP_EMPTY, 'nothing was pushed by a refused reference');
  });

  test('owner-local push and pop: FIFO, variants, size/free, wrap, O(1) discard', () => {
    const ch = SpscChannel.create(3);
    let next = 0;
    let expect = 0;
    for (let round = 0; round < 300; round++) {
      const n = 1 + (round % 3);
      for (let i = 0; i < n; i++) assert.ok(ch.pushLocal(next, (next++ % 3) as Variant));
      if (n === 3) assert.equal(ch.pushLocal(99, Variant.AS_IS), false, 'full');
      assert.equal(ch.size, n);
      assert.equal(ch.free, 3 - n);
      for (let i = 0; i < n; i++) {
        assert.equal(ch.popLocal(), expect);
        assert.equal(ch.lastVariant, expect++ % 3);
      }
      assert.equal(ch.popLocal(), POP_EMPTY);
    }
    assert.ok(ch.pushLocal(7, Variant.AS_IS));
    assert.ok(ch.pushLocal(8, Variant.DELETED));
    assert.equal(ch.lastPushedRef(), 8);
    assert.equal(ch.lastPushedVariant, Variant.DELETED);
    ch.discardLocal();
    assert.equal(ch.size, 0);
    assert.equal(ch.popLocal(), POP_EMPTY);
    ch.close(Terminal.END);
    assert.equal(ch.pushLocal(9, Variant.AS_IS), false, 'closed');
    assert.equal(ch.popLocal(), POP_CLOSED);
  });

  test('variantOf and deliveryOf: each delivery has its variant and back; None delivers as is', () => {
    const table: [Delivery, Variant][] = [
      [Delivery.AsIs, Variant.AS_IS],
      [Delivery.Added, Variant.ADDED],
      [Delivery.Deleted, Variant.DELETED],
    ];
    for (const [d, v] of table) {
      assert.equal(variantOf(d), v);
      assert.equal(deliveryOf(v), d);
    }
    assert.equal(variantOf(Delivery.None), Variant.AS_IS);
  });

  test('owner-local at every position (full, wrapped): hand-off publishes the exact positions', () => {
    for (let start = 0; start < 6; start++) {
      const ch = SpscChannel.create(3, WriterOwner.MAIN);
      const other = new SpscChannel(ch.handle);
      for (let i = 0; i < start; i++) {
        assert.ok(ch.tryPush(1000 + i));
        assert.equal(ch.pop(), 1000 + i);
      }
      // Enter owner-local at position `start`, fill, free one, fill again.
      for (let ref = 0; ref < 3; ref++) assert.ok(ch.pushLocal(ref, (ref % 3) as Variant));
      assert.equal(ch.pushLocal(99, Variant.AS_IS), false, 'full');
      assert.equal(ch.popLocal(), 0);
      assert.ok(ch.pushLocal(3, Variant.AS_IS));
      assert.equal(ch.lastPushedRef(), 3);
      assert.equal(ch.size, 3);
      assert.ok(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
      assert.equal(other.size, 3, `start ${start}`);
      assert.equal(other.lastPushedRef(), 3);
      assert.equal(other.tryPush(98), false, 'still full for the next producer');
      assert.deepEqual([ch.pop(), ch.pop(), ch.pop(), ch.pop()], [1, 2, 3, POP_EMPTY]);
      assert.ok(other.tryPush(4));
      assert.ok(other.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
      assert.equal(ch.size, 1);
      assert.equal(ch.popLocal(), 4);
      assert.equal(ch.popLocal(), POP_EMPTY);
    }
  });

  test('owner-local pushes, then a hand-off to another producer and back: nothing lost, nothing twice', () => {
    // `other` is the sync worker's view of the same channel (its own instance, as in its thread).
    const ch = SpscChannel.create(8, WriterOwner.MAIN);
    const other = new SpscChannel(ch.handle);
    const seen: number[] = [];
    for (let ref = 0; ref < 6; ref++) assert.ok(ch.pushLocal(ref, (ref % 3) as Variant));
    seen.push(ch.popLocal(), ch.popLocal());
    assert.ok(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
    // The other producer starts exactly after the owner-local pushes, and sees the consumer's pops.
    assert.equal(other.writerOwner, WriterOwner.SYNC_WORKER);
    assert.equal(other.size, 4);
    assert.equal(other.lastPushedRef(), 5);
    let ref = 6;
    while (other.tryPush(ref, (ref % 3) as Variant)) ref++;
    assert.equal(ref, 10, 'it filled exactly the free slots');
    // The consumer now pops through the shared words (the Atomics side).
    for (let i = 0; i < 5; i++) {
      const r = ch.pop();
      assert.equal(ch.lastVariant, r % 3);
      seen.push(r);
    }
    assert.ok(other.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
    assert.equal(ch.writerOwner, WriterOwner.MAIN);
    // Back to owner-local: it resumes from the shared positions.
    for (; ref < 13; ref++) assert.ok(ch.pushLocal(ref, (ref % 3) as Variant));
    assert.equal(ch.size, 8 - 5 + 3);
    for (let r = ch.popLocal(); r >= 0; r = ch.popLocal()) seen.push(r);
    assert.deepEqual(
      seen,
      Array.from({ length: 13 }, (_, i) => i),
    );
    assert.ok(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
    assert.equal(other.size, 0, 'the owner-local pops were published with the hand-off');
  });

  test('positions wrap for a capacity that is not a power of two', () => {
    const ch = SpscChannel.create(3);
    let next = 0;
    let expect = 0;
    for (let round = 0; round < 1000; round++) {
      const n = 1 + (round % 3);
      for (let i = 0; i < n; i++) assert.ok(ch.tryPush(next++));
      assert.equal(ch.size, n);
      for (let i = 0; i < n; i++) assert.equal(ch.pop(), expect++);
    }
    assert.equal(ch.pop(), POP_EMPTY);
  });

  test('close: the consumer drains, then POP_CLOSED with the terminal code', () => {
    const ch = SpscChannel.create(8);
    ch.tryPush(1);
    ch.tryPush(2);
    assert.equal(ch.terminal, Terminal.NONE);
    ch.close(Terminal.EXPIRED);
    assert.ok(ch.closed);
    assert.equal(ch.tryPush(3), false, 'no push after close');
    ch.close(Terminal.END); // idempotent: the first code wins
    assert.equal(ch.pop(), 1);
    assert.equal(ch.pop(), 2);
    assert.equal(ch.pop(), POP_CLOSED);
    assert.equal(ch.pop(), POP_CLOSED);
    assert.equal(ch.terminal, Terminal.EXPIRED);

    const clean = SpscChannel.create(2);
    clean.close();
    assert.equal(clean.pop(), POP_CLOSED);
    assert.equal(clean.terminal, Terminal.END);
  });

  test('cancel is visible to the producer and wakes a producer waiting for space', async () => {
    const ch = SpscChannel.create(1);
    assert.ok(ch.tryPush(1));
    const waiting = ch.waitForSpace(5000);
    ch.cancel();
    assert.equal(await waiting, 'ok');
    assert.ok(ch.cancelled);
  });

  test('writer owner hand-off is a compare-and-swap', () => {
    const ch = SpscChannel.create(4, WriterOwner.MAIN);
    assert.equal(ch.writerOwner, WriterOwner.MAIN);
    assert.equal(ch.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN), false, 'not the holder');
    assert.equal(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER), true);
    assert.equal(ch.writerOwner, WriterOwner.SYNC_WORKER);
    assert.equal(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER), false, 'second hand-off loses');
    assert.equal(ch.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN), true);
    assert.equal(new SpscChannel(structuredClone(ch.handle)).writerOwner, WriterOwner.MAIN);
    assert.equal(SpscChannel.create(1, WriterOwner.SYNC_WORKER).writerOwner, WriterOwner.SYNC_WORKER);
  });

  test('notify only when the consumer may be waiting', async () => {
    const ch = SpscChannel.create(2048);
    for (let i = 0; i < 1000; i++) assert.ok(ch.tryPush(i));
    assert.equal(ch.wakeups, 0, 'nobody waiting: no Atomics.notify');
    assert.equal(await ch.waitForData(10), 'ok', 'data present: no park');
    for (let i = 0; i < 1000; i++) ch.pop();
    assert.equal(await ch.waitForData(5), 'timed-out');
    // Consumer parked (another instance on the same memory plays the producer).
    const producer = new SpscChannel(ch.handle);
    const parked = ch.waitForData(5000);
    producer.tryPush(7);
    producer.tryPush(8);
    assert.equal(await parked, 'ok');
    assert.equal(producer.wakeups, 1, 'one wake-up for two pushes');
    assert.equal(ch.pop(), 7);
    // close() wakes a parked consumer too.
    ch.pop();
    const parked2 = ch.waitForData(5000);
    producer.close(Terminal.END);
    assert.equal(await parked2, 'ok');
    assert.equal(ch.pop(), POP_CLOSED);
  });

  test('a popped ref whose history event was evicted reads as OVERWRITTEN (→ 410)', () => {
    const ring = new HistoryRing({ capacity: 4, arenaBytes: 64 * 1024 });
    const reader = ring.reader();
    const ch = SpscChannel.create(8);
    for (let abs = 0; abs < 4; abs++) {
      ring.appendEvent(makeEvent(abs), { rv: rvOf(abs) });
      ch.tryPush(abs, Variant.AS_IS);
    }
    ring.publish();
    const rec = createRingRecord();
    assert.equal(reader.read(0, rec), ReadStatus.OK);
    for (let abs = 4; abs < 7; abs++) ring.appendEvent(makeEvent(abs), { rv: rvOf(abs) });
    ring.publish();
    const statuses: number[] = [];
    for (let ref = ch.pop(); ref >= 0; ref = ch.pop()) statuses.push(reader.read(ref, rec));
    assert.deepEqual(statuses, [ReadStatus.OVERWRITTEN, ReadStatus.OVERWRITTEN, ReadStatus.OVERWRITTEN, ReadStatus.OK]);
  });
});

describe('spsc channel: two threads', () => {
  test('producer thread → consumer thread: 1,000,000 refs, capacity 64, each once and in order', async () => {
    const count = 1_000_000;
    const start = 2 ** 40; // refs beyond 32 bits
    const ch = SpscChannel.create(64, WriterOwner.SYNC_WORKER);
    const consumer = startWorker({ role: 'consumer', handle: ch.handle, start, count });
    const producer = startWorker({ role: 'producer', handle: ch.handle, start, count });
    const [c, p] = await Promise.all([consumer.result, producer.result]);
    await Promise.all([consumer.worker.terminate(), producer.worker.terminate()]);
    assert.equal(p.count, count);
    assert.equal(c.firstError, null);
    assert.equal(c.errors, 0);
    assert.equal(c.count, count);
    assert.equal(c.terminal, Terminal.END);
    assert.equal(ch.size, 0);
    console.log(
      `# spsc 1M: consumer parks=${c.parks} wakeups=${c.wakeups}; producer parks=${p.parks} wakeups=${p.wakeups}`,
    );
  });

  /**
   * A channel of which the main thread produces the first half (`mainSide`, which also consumes until
   * the channel closes) and a worker, once handed the producer role, the second: every reference arrives
   * once and in order.
   */
  async function handOffToWorker(
    mainSide: (ch: SpscChannel, half: number, seen: number[]) => Promise<void>,
  ): Promise<void> {
    const ch = SpscChannel.create(16, WriterOwner.MAIN);
    const total = 20_000;
    const half = total / 2;
    const worker = startWorker({ role: 'handoff-producer', handle: ch.handle, start: half, count: half });
    const seen: number[] = [];
    await mainSide(ch, half, seen);
    const r = await worker.result;
    await worker.worker.terminate();
    assert.equal(r.count, half);
    assert.equal(ch.terminal, Terminal.END);
    assert.equal(seen.length, total);
    for (let i = 0; i < total; i++) if (seen[i] !== i) assert.fail(`position ${i}: ${seen[i]}`);
  }

  test('hand-off after owner-local pushes: a worker continues the stream, nothing lost or duplicated', () =>
    handOffToWorker(async (ch, half, seen) => {
      let next = 0;
      // Main is the owner-local producer and consumer of the first half, then the consumer of the worker's.
      while (next < half) {
        while (next < half && ch.pushLocal(next, (next % 3) as Variant)) next++;
        // Leave a few queued at the hand-off: the worker must push behind them.
        while (ch.size > (next === half ? 5 : 0)) {
          const ref = ch.popLocal();
          assert.equal(ch.lastVariant, ref % 3);
          seen.push(ref);
        }
      }
      assert.ok(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
      for (;;) {
        const ref = ch.pop();
        if (ref >= 0) seen.push(ref);
        else if (ref === POP_CLOSED) break;
        else await ch.waitForData(50);
      }
    }));

  test('hand-off: main thread pushes, hands the producer role to a worker, which continues', () =>
    handOffToWorker(async (ch, half, seen) => {
      let next = 0;
      // Main is the producer for the first half and the consumer throughout.
      for (;;) {
        while (next < half && ch.tryPush(next)) next++;
        if (next === half && ch.writerOwner === WriterOwner.MAIN) {
          assert.ok(ch.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER));
        }
        const ref = ch.pop();
        if (ref >= 0) seen.push(ref);
        else if (ref === POP_CLOSED) break;
        else if (next === half) await ch.waitForData(50);
      }
    }));
});
