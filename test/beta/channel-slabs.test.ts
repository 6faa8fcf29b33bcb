/**
 * Pooled channels (issue 13, deliverable 1): a beta watcher's channel and
 * position cell live in a shared slab the sync worker receives once, so an
 * introduction or a stall sends it numbers, never a SharedArrayBuffer; an
 * ended watcher's region is reused, and only once the worker no longer holds
 * its writer side.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelSlabs, regionBytes } from '../../src/beta/channel-slabs.js';
import { SpscChannel } from '../../src/ring/spsc-channel.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import { ControlBlock } from '../../src/beta/control-block.js';
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { churn, flush, pod, setup, VirtualClock } from '../unit/support/harness.js';
import { recordingEndpointMessages } from './endpoint-messages.js';

function buffersIn(value: unknown, seen = new Set<unknown>()): number {
  if (value instanceof SharedArrayBuffer) return 1;
  if (value === null || typeof value !== 'object' || seen.has(value)) return 0;
  seen.add(value);
  return Object.values(value).reduce((n: number, v) => n + buffersIn(v, seen), 0);
}

test('ChannelSlabs: regions are carved from a few slabs, reused by size, and big ones get a slab of their own', () => {
  const made: number[] = [];
  const slabs = new ChannelSlabs((id) => made.push(id), 64 * 1024);
  const a = slabs.allocate(100);
  const b = slabs.allocate(100);
  assert.equal(a.slab, b.slab);
  assert.equal(b.offset - a.offset, regionBytes(100));
  const per = Math.floor((64 * 1024) / regionBytes(100));
  for (let i = 2; i < per + 1; i++) slabs.allocate(100);
  assert.equal(made.length, 2, 'a second slab once the first is full');
  slabs.release(a);
  const again = slabs.allocate(100);
  assert.deepEqual(again, a, 'a released region of the same size is reused');
  const big = slabs.allocate(100_000);
  assert.equal(big.offset, 0);
  assert.equal(slabs.bufferOf(big).byteLength, regionBytes(100_000));
  // A reused region is a fresh channel: the header is reset.
  const buf = slabs.bufferOf(a);
  const c1 = SpscChannel.createIn(buf, a.offset + 16, 100, WriterOwner.MAIN);
  assert.ok(c1.tryPush(7));
  c1.close();
  const c2 = SpscChannel.createIn(buf, a.offset + 16, 100, WriterOwner.MAIN);
  assert.equal(c2.size, 0);
  assert.equal(c2.closed, false);
});

test('beta: introductions and stalls carry no SharedArrayBuffer; each slab is sent once; ended regions are reused', async () => {
  await recordingEndpointMessages(async (sent) => {
    const clock = new VirtualClock();
    const { cache, store } = await setup({ mode: 'beta', channelCapacity: 10 }, undefined, { clock });
    const beta = betaSyncOf(cache)!;
    await store.create(pod('a'));
    await flush();
    const from = String(cache.resourceVersion);
    const stalled = Array.from({ length: 2000 }, () =>
      asWatcher(cache.watch({ resourceVersion: from, channelCapacity: 10 })),
    );
    await clock.advance(5);
    await churn(store, 20); // every one of them overflows and stalls
    await clock.advance(50);
    await flush();
    assert.ok(
      stalled.every((w) => w.unsynced),
      'they all stalled',
    );
    const perWatcher = sent.filter(
      (m) => m.op === 'introduce' || m.op === 'introduce-rows' || m.op === 'adopt' || m.op === 'adopt-rows',
    );
    assert.ok(perWatcher.length > 0);
    assert.ok(
      sent.some((m) => m.op === 'adopt-rows'),
      'the mass stall travels as rows of numbers',
    );
    assert.equal(buffersIn(perWatcher), 0, 'no SharedArrayBuffer in any introduction or adopt');
    const slabMessages = sent.filter((m) => m.op === 'slab');
    assert.equal(slabMessages.length, beta.slabCount, 'each slab sent once');
    assert.ok(beta.slabCount <= 2, `2,000 channels of 10 slots fit in a slab or two (got ${beta.slabCount})`);
    assert.equal(beta.pooledChannels, 2000);
    for (const w of stalled) w.stop();
    await clock.advance(50); // the worker hands their writer sides back on forget
    await flush();
    const slabsBefore = beta.slabCount;
    const again = Array.from({ length: 2000 }, () =>
      asWatcher(cache.watch({ resourceVersion: String(cache.resourceVersion), channelCapacity: 10 })),
    );
    await flush();
    assert.equal(beta.slabCount, slabsBefore, "the ended watchers' regions were reused: no new slab");
    assert.equal(beta.pooledChannels, 2000);
    // The reused channels work: every new watcher gets the next event.
    await store.create(pod('b'));
    await flush();
    assert.ok(
      again.every((w) => w.queue.size === 1),
      'every reused channel holds the new event',
    );
    for (const w of again) w.stop();
    await cache.stop();
  });
});

test('ControlBlock room signal: a pop wakes the worker only while it announced it waits, once a quarter of the channel is free', () => {
  const c = new ControlBlock();
  const { array, index } = c.roomWord;
  const e0 = Atomics.load(array, index);
  c.signalRoom(25, 100);
  assert.equal(Atomics.load(array, index), e0, 'nobody waits: no wake-up, no epoch change');
  const epoch = c.armRoomWait();
  assert.equal(epoch, e0);
  c.signalRoom(24, 100);
  assert.equal(Atomics.load(array, index), e0, 'less than a quarter free: not worth a pass, the worker sleeps on');
  c.signalRoom(25, 100);
  assert.equal(
    Atomics.load(array, index),
    e0 + 1,
    'a quarter free (the low-water mark): the waiting worker is woken once',
  );
  c.signalRoom(100, 100);
  assert.equal(Atomics.load(array, index), e0 + 1, 'and only once');
  c.armRoomWait();
  c.signalRoom(1, 1);
  assert.equal(Atomics.load(array, index), e0 + 2, 'a channel of one slot: its one free slot is worth a pass');
});
