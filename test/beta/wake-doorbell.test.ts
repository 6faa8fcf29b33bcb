/**
 * WakeDoorbell (src/beta/wake-doorbell.ts): the sync worker's shared-memory
 * wake-up of main-thread consumers. Ids come out once each, in order; a
 * waiting consumer is woken by the ring that follows its announcement and
 * never misses one across the Dekker race (a real producer thread); a full
 * ring refuses the id, so the caller can fall back to a message.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { WakeDoorbell } from '../../src/beta/wake-doorbell.js';
import type { DoorbellProducerData } from './doorbell-producer-worker.js';

test('doorbell: ids come out once each, in the order they were rung, across the ring wrapping', () => {
  const bell = new WakeDoorbell(8);
  const got: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (let k = 0; k < 5; k++) assert.equal(bell.ring(round * 10 + k), true);
    assert.equal(bell.pending, 5);
    assert.equal(bell.take(got), 5);
    assert.equal(bell.take(got), 0, 'taken once');
  }
  assert.deepEqual(
    got,
    Array.from({ length: 25 }, (_, i) => Math.floor(i / 5) * 10 + (i % 5)),
  );
});

test('doorbell: a full ring refuses the id (nothing appended, nothing lost) and takes it again once drained', () => {
  const bell = new WakeDoorbell(4);
  for (let id = 1; id <= 4; id++) assert.equal(bell.ring(id), true);
  assert.equal(bell.ring(5), false, 'full: the caller must tell the consumer another way');
  const got: number[] = [];
  bell.take(got);
  assert.deepEqual(got, [1, 2, 3, 4]);
  assert.equal(bell.ring(5), true);
  got.length = 0;
  bell.take(got);
  assert.deepEqual(got, [5]);
});

test('doorbell: armWait refuses while ids are pending; a ring after it wakes the wait, one before it does not need to', async () => {
  const bell = new WakeDoorbell(8);
  bell.ring(7);
  assert.equal(bell.armWait(), null, 'ids pending: take them instead of waiting');
  assert.equal(bell.notifies, 0, 'nobody waited: no notify');
  bell.take([]);
  const epoch = bell.armWait();
  assert.notEqual(epoch, null);
  const woken = bell.wait(epoch!);
  bell.ring(8);
  assert.equal(bell.notifies, 1, 'the consumer waited: notified');
  assert.equal(await woken, 'ok');
  bell.ring(9);
  assert.equal(bell.notifies, 1, 'WAITING was cleared by the wake: no second notify until it waits again');
  const got: number[] = [];
  bell.take(got);
  assert.deepEqual(got, [8, 9]);
});

test('doorbell: release settles a pending wait without an id', async () => {
  const bell = new WakeDoorbell(8);
  const epoch = bell.armWait();
  const woken = bell.wait(epoch!);
  bell.release();
  assert.equal(await woken, 'ok');
  assert.equal(bell.pending, 0);
});

test(
  'doorbell: a real producer thread; every id arrives once and in order, no wake lost across the Dekker race',
  { timeout: 60_000 },
  async () => {
    const COUNT = 20_000;
    const bell = new WakeDoorbell(64);
    const data: DoorbellProducerData = { buffer: bell.buffer, count: COUNT, burst: 37 };
    const worker = new Worker(new URL('./doorbell-producer-worker.js', import.meta.url), { workerData: data });
    const done = new Promise<{ notifies: number; full: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const got: number[] = [];
    let waits = 0;
    let arms = 0;
    // The consumer's loop as SyncWorkerLink runs it: arm, wait (no timeout: a lost wake hangs until the
    // test's timeout), take everything.
    while (got.length < COUNT) {
      const epoch = bell.armWait();
      arms++;
      if (epoch !== null) {
        waits++;
        await bell.wait(epoch);
      }
      bell.take(got);
    }
    const { notifies } = await done;
    await worker.terminate();
    assert.equal(got.length, COUNT);
    for (let i = 0; i < COUNT; i++) if (got[i] !== i) assert.fail(`id ${i}: got ${got[i]}`);
    assert.ok(waits > 0 && notifies > 0, `the consumer waited (${waits}) and was woken (${notifies})`);
    // A notify needs WAITING, which only armWait sets (a refused arm may still draw one: harmless, its epoch
    // bump only makes the next wait's promise settle at once).
    assert.ok(notifies <= arms, 'at most one notify per announcement');
  },
);
