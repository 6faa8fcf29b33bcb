/**
 * SPSC channel, batched read (SpscChannel.popBatched, module doc "Batched
 * read"): the consumer loads TAIL once per burst and publishes HEAD once per
 * quarter of the channel and when it took the last reference it saw. Checked
 * here: the answers are pop()'s (order, variants, drain before end), the
 * producer never sees room before the slots were read (slot reuse), sees it
 * at every quarter, and any other consumer-side call publishes first; and a
 * real producer thread against a batched consumer, each reference once, in order.
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

describe('spsc channel: batched read', () => {
  test('same answers as pop(): order, variants; HEAD published once per quarter and at the last seen', () => {
    const { producer, consumer } = pair(8); // a quarter: 2 pops per publication
    for (let ref = 0; ref < 8; ref++) assert.ok(producer.tryPush(100 + ref, (ref % 3) as Variant));
    assert.equal(producer.tryPush(200), false, 'full');

    assert.equal(consumer.popBatched(), 100);
    assert.equal(consumer.lastVariant, Variant.AS_IS);
    assert.ok(consumer.poppedFromFull);
    assert.equal(consumer.leftAfterPop, 7);
    assert.equal(consumer.headPublished, false, 'the first pop of a quarter publishes nothing');
    // INVARIANT (slot reuse): the producer sees no room for a slot until HEAD is published past it.
    assert.equal(producer.free, 0);
    assert.equal(producer.tryPush(200), false, 'the read slot is not released yet');
    assert.equal(consumer.size, 7, 'the consumer counts its own pops');

    assert.equal(consumer.popBatched(), 101);
    assert.equal(consumer.lastVariant, Variant.ADDED);
    assert.equal(consumer.headPublished, true, 'a quarter popped: published');
    assert.equal(producer.free, 2);

    const rest: number[] = [];
    const published: boolean[] = [];
    for (let ref = consumer.popBatched(); ref >= 0; ref = consumer.popBatched()) {
      rest.push(ref);
      published.push(consumer.headPublished);
      const left: number = consumer.leftAfterPop;
      if (left === 0) break;
    }
    assert.deepEqual(rest, [102, 103, 104, 105, 106, 107], 'each once, in order');
    assert.deepEqual(published, [false, true, false, true, false, true], 'every quarter; the last one seen too');
    assert.equal(consumer.leftAfterPop, 0);
    assert.equal(producer.free, 8, 'everything read is released');
    assert.equal(consumer.popBatched(), POP_EMPTY);
  });

  test("the pop that gives the channel a quarter free publishes at once (the room signal's mark)", () => {
    const { producer, consumer } = pair(8);
    for (let ref = 0; ref < 7; ref++) producer.tryPush(ref); // one slot free
    assert.equal(consumer.popBatched(), 0);
    assert.equal(consumer.headPublished, true, 'two free now: a quarter, the producer must see it');
    assert.equal(producer.free, 2);
    assert.equal(consumer.popBatched(), 1);
    assert.equal(consumer.headPublished, false, 'the producer sees a quarter already: batched');
    assert.equal(producer.free, 2);
  });

  test('TAIL is asked again when the references it saw are used up: pushes meanwhile are found, none lost', () => {
    const { producer, consumer } = pair(8);
    for (let ref = 0; ref < 3; ref++) assert.ok(producer.tryPush(ref));
    assert.equal(consumer.popBatched(), 0);
    assert.equal(consumer.leftAfterPop, 2, 'by the TAIL it loaded');
    for (let ref = 3; ref < 6; ref++) assert.ok(producer.tryPush(ref)); // after its TAIL load
    assert.equal(consumer.popBatched(), 1);
    assert.equal(consumer.leftAfterPop, 1, 'still the TAIL it loaded (a lower bound)');
    assert.equal(consumer.popBatched(), 2);
    assert.equal(consumer.leftAfterPop, 3, 'the last one it saw: TAIL loaded again, so the drained test is right');
    const got: number[] = [];
    for (let ref = consumer.popBatched(); ref >= 0; ref = consumer.popBatched()) got.push(ref);
    assert.deepEqual(got, [3, 4, 5]);
    assert.equal(producer.size, 0);
  });

  test('any other consumer call first publishes what the batch popped', () => {
    const { producer, consumer } = pair(8);
    for (let ref = 0; ref < 8; ref++) producer.tryPush(ref);
    consumer.popBatched();
    assert.equal(producer.free, 0);
    // The Dekker re-check of a wait compares TAIL with the shared HEAD: it must be the consumer's own.
    assert.equal(consumer.announceWait(), false, 'data is there: no wait announced');
    assert.equal(producer.free, 1, 'announceWait published HEAD');
    consumer.popBatched();
    assert.equal(consumer.pop(), 2, 'pop() continues right after the batch');
    assert.equal(producer.free, 3);
    consumer.popBatched();
    assert.ok(consumer.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN));
    assert.equal(producer.free, 4, 'handOff published HEAD');
  });

  test('drain before end: a closed channel answers POP_CLOSED only after every reference', () => {
    const { producer, consumer } = pair(4);
    for (let ref = 0; ref < 3; ref++) producer.tryPush(ref);
    producer.close(Terminal.EXPIRED);
    const got: number[] = [];
    let r = consumer.popBatched();
    for (; r >= 0; r = consumer.popBatched()) got.push(r);
    assert.deepEqual(got, [0, 1, 2]);
    assert.equal(r, POP_CLOSED);
    assert.equal(consumer.terminal, Terminal.EXPIRED);
  });

  test('producer thread → batched consumer on this thread: 200,000 refs, capacity 64, each once and in order', async () => {
    const r = await readFromProducerThread('producer', 64, 200_000);
    assert.equal(r.producer.errors, 0);
    assert.equal(r.errors, 0, 'every reference once, in order, with its variant');
    assert.equal(r.expected, 200_000);
  });
});
