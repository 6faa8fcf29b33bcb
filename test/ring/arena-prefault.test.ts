/**
 * ArenaPrefault (src/ring/arena-prefault.ts): what the main thread asks for
 * and when, what the worker touches per slice, that a touch never changes a
 * byte, not even under a writer storing into the same words from another
 * thread at the same time, and the wiring in beta with the real worker
 * thread (observed on the `watchcache:worker-post` tool channel).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { Worker } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { ArenaPrefault, PREFAULT_WINDOW_BYTES, PrefaultRequests } from '../../src/ring/arena-prefault.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import type { Clock, TimerHandle } from '../../src/core/clock.js';
import { MemoryStore, WatchCache } from '../../src/index.js';
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import type { MainToWorker } from '../../src/beta/sync-messages.js';

const MiB = 1024 * 1024;
const HALF = PREFAULT_WINDOW_BYTES / 2;

/** PrefaultRequests whose `next` answers the end it asked for on that append, or -1 when it asked nothing. */
function requests(): { next: (writeEnd: number, arenaBytes: number) => number; readonly asked: number } {
  let last = -1;
  const r = new PrefaultRequests((upTo) => (last = upTo));
  return {
    next: (writeEnd, arenaBytes) => {
      last = -1;
      r.afterAppend(writeEnd, arenaBytes);
      return last;
    },
    get asked() {
      return r.asked;
    },
  };
}

test('PrefaultRequests: a window ahead of the writer, again only within half a window of it, never past the arena', () => {
  const r = requests();
  const arena = 64 * MiB;
  assert.equal(r.next(0, arena), PREFAULT_WINDOW_BYTES, 'the first append asks for a window');
  assert.equal(r.next(HALF - 8, arena), -1, 'more than half a window still asked for ahead: nothing');
  assert.equal(r.next(HALF + 8, arena), HALF + 8 + PREFAULT_WINDOW_BYTES, 'within half a window: the next window');
  // A small arena: capped at its size, nothing more while it does not grow, its new half once it does.
  const small = requests();
  assert.equal(small.next(100, 256 * 1024), 256 * 1024);
  assert.equal(small.next(200 * 1024, 256 * 1024), -1, 'all of it asked for already');
  assert.equal(small.next(10, 256 * 1024), -1, 'after a wrap: nothing');
  assert.equal(small.next(10, 512 * 1024), 512 * 1024, 'it doubled: the window covers the new half at once');
  // A large arena, asked for to its end: after a wrap nothing; after it doubles, once the writer nears the old end.
  const large = requests();
  const size = 32 * MiB;
  for (let end = 0; large.asked < size; end += MiB) large.next(end, size);
  assert.equal(large.asked, size);
  assert.equal(large.next(10, size), -1, 'after a wrap: nothing');
  assert.equal(large.next(10, 2 * size), -1, 'doubled, the writer far below the old end: nothing yet');
  assert.equal(
    large.next(size - 100, 2 * size),
    size - 100 + PREFAULT_WINDOW_BYTES,
    'near the old end: the next window',
  );
});

/** A clock whose timers run only when the test says: one turn per `turn()`. */
function turnClock(): { clock: Clock; turn: () => boolean } {
  const queue: (() => void)[] = [];
  const clock = {
    setTimeout: (fn: () => void): TimerHandle => {
      queue.push(fn);
      return 0 as unknown as TimerHandle;
    },
  } as unknown as Clock;
  return { clock, turn: () => (queue.length === 0 ? false : (queue.shift()!(), true)) };
}

test('ArenaPrefault: touches the pages asked for, a slice per turn, changing no byte', () => {
  const { clock, turn } = turnClock();
  const sab = new SharedArrayBuffer(4 * MiB);
  const bytes = new Uint8Array(sab);
  // Live data in the first pages: zero and non-zero words alike.
  for (let i = 0; i < 3 * 4096; i++) bytes[i] = i % 7 === 0 ? 0 : i & 0xff;
  const before = Uint8Array.from(bytes);
  const p = new ArenaPrefault(sab, clock);
  p.request(3 * MiB);
  p.request(3 * MiB + 100); // a second request before its turn: the same slices, further
  assert.equal(p.pages, 0, 'nothing in the calling turn');
  assert.ok(p.pending);
  assert.ok(turn());
  assert.equal(p.pages, 256, 'one slice (1 MiB, 256 pages) in a turn');
  let turns = 1;
  while (turn()) turns++;
  assert.equal(turns, 4, 'three slices of 1 MiB and the rest');
  assert.equal(p.pending, false);
  assert.equal(p.pages, Math.ceil((3 * MiB + 100) / 4096), 'one touch per page up to the end asked for');
  assert.deepEqual(bytes, before, 'no byte changed');
  p.request(2 * MiB);
  assert.equal(turn(), false, 'an end below what it touched asks for nothing');
  p.request(4 * MiB);
  p.stop();
  while (turn());
  assert.equal(p.pages, Math.ceil((3 * MiB + 100) / 4096), 'nothing after stop');
});

test('ArenaPrefault: an end inside a word (any write position plus the window) is reached, and then it stops', () => {
  // The ring mirror asks for its write end plus a window: any byte offset. Rounding the end down to a word
  // once left such a request pending for ever, a slice per turn touching the same page (a spinning worker).
  for (const extra of [1, 2, 3, 4098]) {
    const { clock, turn } = turnClock();
    const sab = new SharedArrayBuffer(4 * MiB);
    const p = new ArenaPrefault(sab, clock);
    const upTo = 2 * MiB + extra;
    p.request(upTo);
    let turns = 0;
    while (turn()) {
      turns++;
      assert.ok(turns <= 3, `end ${upTo}: done in three slices, not ${turns} and counting`);
    }
    assert.equal(p.pending, false, `end ${upTo}: nothing left pending`);
    assert.equal(p.pages, Math.ceil(upTo / 4096), `end ${upTo}: one touch per page up to it`);
    p.request(upTo + 1); // one byte further, inside the same word and page: one more slice, that page again
    while (turn()) turns++;
    assert.equal(p.pending, false);
    assert.ok(turns <= 4, `end ${upTo + 1}: one slice more`);
    assert.equal(p.pages, Math.ceil(upTo / 4096) + 1, `end ${upTo + 1}: one touch, of the page it ends in`);
  }
});

test('ArenaPrefault: never past the buffer, and on into a growable buffer once it grew', async () => {
  const clock = new VirtualClock();
  const Grow = SharedArrayBuffer as unknown as new (
    n: number,
    o: { maxByteLength: number },
  ) => SharedArrayBuffer & {
    grow(n: number): void;
  };
  const sab = new Grow(MiB, { maxByteLength: 4 * MiB });
  const p = new ArenaPrefault(sab, clock);
  p.request(3 * MiB);
  for (let i = 0; i < 8; i++) await clock.advance(0);
  assert.equal(p.pages, MiB / 4096, 'up to the buffer length only');
  sab.grow(4 * MiB);
  p.request(3 * MiB + 4096);
  for (let i = 0; i < 8; i++) await clock.advance(0);
  assert.equal(p.pages, (3 * MiB + 4096) / 4096, 'from where it stopped, once the buffer grew');
});

test('ArenaPrefault: a writer storing into the same words from another thread meanwhile sees no value change and loses no store', async () => {
  const size = 16 * MiB;
  const sab = new SharedArrayBuffer(size);
  const flags = new Int32Array(new SharedArrayBuffer(12)); // 0: the writer started; 1: it finished; 2: values it found changed
  // The writer stores a non-zero value into the first word of every page (the words the prefault touches),
  // front to back, with plain stores, as the ring writer does; the prefault runs meanwhile on this thread.
  const ROUNDS = 400;
  const writer = new Worker(
    `const { workerData } = require('node:worker_threads');
     const w = new Int32Array(workerData.sab); const flags = new Int32Array(workerData.flags);
     Atomics.store(flags, 0, 1); Atomics.notify(flags, 0);
     let changed = 0;
     for (let round = 1; round <= ${ROUNDS}; round++)
       for (let i = 0; i < w.length; i += 1024) {
         // Only this thread changes a value: each word still holds what it stored last round.
         if (w[i] !== (round === 1 ? 0 : (i >>> 10) * ${ROUNDS} + round - 1)) changed++;
         w[i] = (i >>> 10) * ${ROUNDS} + round;
       }
     Atomics.store(flags, 2, changed);
     Atomics.store(flags, 1, 1);`,
    { eval: true, workerData: { sab, flags: flags.buffer } },
  );
  const exited = new Promise<number>((resolve) => writer.on('exit', resolve));
  while (Atomics.load(flags, 0) === 0) await sleep(1);
  // Synchronous slices back to back (a clock whose timers run at once), racing the writer until it is done.
  const immediate = {
    setTimeout: (fn: () => void): TimerHandle => {
      fn();
      return 0 as unknown as TimerHandle;
    },
  } as unknown as Clock;
  let laps = 0;
  while (Atomics.load(flags, 1) === 0) {
    new ArenaPrefault(sab, immediate).request(size);
    laps++;
  }
  assert.equal(await exited, 0);
  assert.ok(laps > 1, `the prefault ran while the writer wrote (${laps} laps)`);
  assert.equal(Atomics.load(flags, 2), 0, 'no word changed between two stores of the writer');
  const w = new Int32Array(sab);
  let lost = 0;
  for (let i = 0; i < w.length; i += 1024) if (w[i] !== (i >>> 10) * ROUNDS + ROUNDS) lost++;
  assert.equal(lost, 0, 'every page holds the writer last store');
});

test(
  'beta (worker thread): the ring mirror asks the worker to commit the arena ahead of its writer',
  { timeout: 60_000 },
  async (t) => {
    const store = new MemoryStore();
    const cache = new WatchCache({ store, mode: 'beta' });
    const asked: number[] = [];
    const listener = (m: unknown): void => {
      const x = m as { cache: object; from: string; message?: MainToWorker };
      if (x.cache === cache && x.from === 'main' && x.message?.op === 'prefault') asked.push(x.message.upTo);
    };
    diagnostics_channel.subscribe('watchcache:worker-post', listener);
    t.after(() => diagnostics_channel.unsubscribe('watchcache:worker-post', listener));
    const errors: string[] = [];
    betaSyncOf(cache)!.onWorkerError = (m) => errors.push(m);
    await cache.start();
    t.after(() => cache.stop());
    const pad = 'x'.repeat(2000);
    for (let i = 0; i < 3000; i++) await store.create({ metadata: { namespace: 'ns', name: `p${i}` }, spec: { pad } });
    while (cache.resourceVersion < 3000) await sleep(1);
    await sleep(20); // the deferred mirror's turn
    assert.ok(asked.length >= 1, 'at least one request');
    for (let i = 1; i < asked.length; i++) assert.ok(asked[i]! > asked[i - 1]!, 'each request reaches further');
    const arena = betaSyncOf(cache)!.ringHandle.arena.byteLength;
    assert.ok(asked.at(-1)! <= arena, `never past the arena (${asked.at(-1)} > ${arena})`);
    assert.deepEqual(errors, []);
  },
);
