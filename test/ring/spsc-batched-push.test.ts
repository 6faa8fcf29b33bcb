/**
 * SPSC channel, batched push (SpscChannel.pushBatched / publishPushes,
 * module doc "Batched push"): the producer writes a run of slots and stores
 * TAIL once for it. Checked here: the consumer sees nothing of a run before
 * its publication and then all of it, in order, with its variants; positions
 * wrap over 2·CAPACITY; a full channel (by the HEAD the producer saw)
 * refuses, sees room only after the consumer published HEAD (slot reuse),
 * and room it saw is used without a HEAD load per push; a parked consumer is
 * woken by the publication, not by the pushes; every other producer-side
 * call (tryPush, close, handOff) publishes first; and a real producer
 * thread pushing batched into a consumer here, each reference once, in order.
 */
import test, { describe } from 'node:test';
import assert from 'node:assert/strict';
import { POP_CLOSED, POP_EMPTY, SpscChannel } from '../../src/ring/spsc-channel.js';
import { Terminal, Variant, WriterOwner } from '../../src/protocol/channel-variants.js';
import { readFromProducerThread } from './read-from-producer-thread.js';

/** The producer's and the consumer's instances of one channel (as two threads open it). */
function pair(capacity: number): { producer: SpscChannel; consumer: SpscChannel } {
  const producer = SpscChannel.create(capacity, WriterOwner.SYNC_WORKER);
  return { producer, consumer: new SpscChannel(producer.handle) };
}

/** Every reference the consumer can pop now, with its variant. */
function drain(consumer: SpscChannel): [number, Variant][] {
  const got: [number, Variant][] = [];
  for (let r = consumer.pop(); r >= 0; r = consumer.pop()) got.push([r, consumer.lastVariant]);
  return got;
}

describe('spsc channel: batched push', () => {
  test('a run is invisible until published, then all of it in order with its variants', () => {
    const { producer, consumer } = pair(8);
    for (let ref = 0; ref < 5; ref++) assert.ok(producer.pushBatched(10 + ref, (ref % 3) as Variant));
    assert.equal(producer.pendingPushes, 5);
    assert.equal(consumer.pop(), POP_EMPTY, 'INVARIANT (publish ordering): nothing before the TAIL store');
    assert.equal(consumer.size, 0);
    assert.equal(producer.size, 5, 'the producer counts its own run');
    assert.equal(producer.free, 3);
    producer.publishPushes();
    assert.equal(producer.pendingPushes, 0);
    assert.deepEqual(drain(consumer), [
      [10, Variant.AS_IS],
      [11, Variant.ADDED],
      [12, Variant.DELETED],
      [13, Variant.AS_IS],
      [14, Variant.ADDED],
    ]);
    producer.publishPushes(); // nothing pending: no-op
    assert.equal(consumer.pop(), POP_EMPTY);
  });

  test('wrap-around: positions run over 2·CAPACITY, each reference once and in order', () => {
    const { producer, consumer } = pair(3);
    const got: number[] = [];
    let next = 0;
    for (let round = 0; round < 40; round++) {
      const run = 1 + (round % 3); // runs of 1, 2, 3: every offset of the wrap
      for (let k = 0; k < run; k++) assert.ok(producer.pushBatched(next++));
      producer.publishPushes();
      for (const [r] of drain(consumer)) got.push(r);
    }
    assert.deepEqual(
      got,
      Array.from({ length: next }, (_, i) => i),
    );
  });

  test('full: refused by the HEAD it saw; room only after the consumer published HEAD (slot reuse)', () => {
    const { producer, consumer } = pair(4);
    for (let ref = 0; ref < 4; ref++) assert.ok(producer.pushBatched(ref));
    assert.equal(producer.pushBatched(99), false, 'full');
    assert.equal(producer.pendingPushes, 4, 'a refused push leaves the run pending (the producer publishes it)');
    producer.publishPushes();
    // The consumer reads one (a batched read: a quarter of 4 is 1, so this pop publishes HEAD).
    assert.equal(consumer.popBatched(), 0);
    assert.equal(consumer.headPublished, true);
    assert.ok(producer.pushBatched(4), 'the HEAD it published is room');
    assert.equal(producer.pushBatched(5), false, 'INVARIANT (slot reuse): no room beyond the published HEAD');
    producer.publishPushes();
    assert.deepEqual(
      drain(consumer).map(([r]) => r),
      [1, 2, 3, 4],
    );
    // Room it saw is spent without a fresh HEAD load per push: four pushes into an empty channel.
    for (let ref = 6; ref < 10; ref++) assert.ok(producer.pushBatched(ref));
    assert.equal(producer.pushBatched(10), false);
    producer.publishPushes();
    assert.deepEqual(
      drain(consumer).map(([r]) => r),
      [6, 7, 8, 9],
    );
  });

  test('a parked consumer is woken by the publication, not by the pushes', async () => {
    const { producer, consumer } = pair(8);
    let woke = false;
    const parked = consumer.waitForData(5000, false).then((r) => {
      woke = true;
      return r;
    });
    assert.ok(producer.consumerWaiting, 'the producer sees that its consumer waits');
    assert.ok(producer.pushBatched(1));
    assert.ok(producer.pushBatched(2));
    await new Promise((r) => setImmediate(r));
    assert.equal(woke, false, 'no wake-up per push');
    assert.equal(producer.wakeups, 0);
    producer.publishPushes();
    assert.equal(producer.wakeups, 1, 'one wake-up for the run');
    assert.equal(await parked, 'ok');
    assert.equal(producer.consumerWaiting, false, 'the wake-up cleared DATA_WAITING');
    assert.deepEqual(
      drain(consumer).map(([r]) => r),
      [1, 2],
    );
    // A consumer that announced its wait without parking (the in-process watcher) is counted the same way.
    assert.ok(consumer.announceWait());
    assert.ok(producer.pushBatched(3));
    assert.equal(producer.wakeups, 1);
    producer.publishPushes();
    assert.equal(producer.wakeups, 2);
  });

  test('tryPush, close and handOff publish the run first; drain before end', () => {
    {
      const { producer, consumer } = pair(8);
      producer.pushBatched(1);
      producer.pushBatched(2);
      assert.ok(producer.tryPush(3));
      assert.deepEqual(
        drain(consumer).map(([r]) => r),
        [1, 2, 3],
        'the run before the tryPush, in order',
      );
    }
    {
      const { producer, consumer } = pair(8);
      producer.pushBatched(1);
      producer.pushBatched(2);
      producer.close(Terminal.EXPIRED);
      assert.equal(producer.pushBatched(3), false, 'closed');
      assert.deepEqual(
        drain(consumer).map(([r]) => r),
        [1, 2],
      );
      assert.equal(consumer.pop(), POP_CLOSED);
      assert.equal(consumer.terminal, Terminal.EXPIRED);
    }
    {
      const { producer, consumer } = pair(8);
      producer.pushBatched(1);
      assert.ok(producer.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
      assert.equal(producer.pendingPushes, 0);
      assert.deepEqual(
        drain(consumer).map(([r]) => r),
        [1],
        'the next producer starts after the run',
      );
      // The next producer (here the main thread's instance) pushes after the published run.
      assert.ok(consumer.tryPush(2));
      assert.equal(consumer.pop(), 2);
    }
  });

  test('batched producer thread → consumer on this thread: 200,000 refs, capacity 64, each once and in order', async () => {
    const r = await readFromProducerThread('batched-producer', 64, 200_000);
    assert.equal(r.producer.errors, 0);
    assert.equal(r.errors, 0, 'every reference once, in order, with its variant');
    assert.equal(r.expected, 200_000);
    assert.equal(r.terminal, Terminal.END, 'close() published the last run first');
  });
});
