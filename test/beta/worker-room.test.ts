/**
 * The sync worker's scheduling rules around room (issue 13, deliverables 4
 * and 6), on the real endpoint, pass host, ControlBlock and Atomics.waitAsync,
 * with the scheduler on a virtual clock (no test outcome depends on real time):
 *  - a cohort's consumers are told right after its pushes;
 *  - once every member's channel is full the worker parks on the room signal
 *    and runs no pass while nobody reads, however long that lasts;
 *  - a pop that leaves less than a quarter of a channel free does not wake
 *    it; one that leaves a quarter (the low-water mark) does, and the next
 *    pass refills the channel in order;
 *  - the main thread is told of a push only for a consumer that announced it
 *    waits (SpscChannel.announceWait), not for one that is still reading;
 *    the first such consumer of a cohort at its push, not at the cohort's end;
 *  - with a hot wait, after a pass that pushed the worker looks for room
 *    itself before it parks (no ROOM_WAITING, so a pop costs no notify), and
 *    after a pass that pushed nothing it parks at once;
 *  - after the hot wait's spin it sleeps on the room word with the wait
 *    announced, and a consumer on another thread that reads a quarter of the
 *    channel wakes it into the next pass (no park in between).
 * The hot wait's clock is the test's own counter (no real time); the sleep is
 * Atomics.wait, bounded so that a missed wake-up fails the test, not hangs it.
 */
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import assert from 'node:assert/strict';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { SpscChannel } from '../../src/ring/spsc-channel.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import { ControlBlock } from '../../src/beta/control-block.js';
import { initEndpoint } from './endpoint-init.js';
import { SyncWorkerEndpoint, type HotWait } from '../../src/beta/sync-worker-endpoint.js';
import type { WorkerToMain } from '../../src/beta/sync-messages.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { settleAll, settlePass, stopEndpoint } from './endpoint-settle.js';
import { makeEvent, rvOf } from '../ring/ring-fixtures.js';

const CAPACITY = 8;
const EVENTS = 40;

function rig(hotWait?: HotWait, asIs = false) {
  const ring = new HistoryRing({ capacity: 64, arenaBytes: 256 * 1024 });
  // By default each a MODIFIED without a previous object, which a select-everything watcher gets as ADDED: one
  // slot per event, so CAPACITY events fill the channel. `asIs`: the fixtures' events, which it gets as they
  // are, so a stretch of them shares run slots (SpscChannel "Run slots").
  for (let abs = 0; abs < EVENTS; abs++)
    ring.appendEvent(asIs ? makeEvent(abs) : { type: 'MODIFIED', object: makeEvent(abs).object }, { rv: rvOf(abs) });
  ring.publish();
  const control = new ControlBlock();
  control.publish(rvOf(EVENTS - 1), rvOf(0));
  const clock = new VirtualClock();
  const sent: WorkerToMain[] = [];
  const endpoint = new SyncWorkerEndpoint((m) => sent.push(m), clock, true, hotWait);
  initEndpoint(endpoint, ring, control);
  const serving = endpoint.serveRoom();
  // One watcher that selects everything, from before the first event, its channel handed to the worker.
  const channel = SpscChannel.create(CAPACITY, WriterOwner.SYNC_WORKER);
  assert.ok(channel.announceWait(), 'its consumer waits on the empty channel');
  const cell = new SharedArrayBuffer(CELL_BYTES);
  endpoint.handle({
    op: 'adopt',
    watchers: [
      {
        id: 1,
        position: rvOf(0) - 1,
        capacity: CAPACITY,
        reachedLive: false,
        channel: channel.handle,
        cell,
        selection: { namespace: '', name: '', labelSelector: '', fieldSelector: '' },
      },
    ],
  });
  const waiting = (): boolean => Atomics.load(new Int32Array(control.buffer), 7) === 1;
  const passes = (): number => endpoint.host!.scheduler.passes;
  const signal = (): void => control.signalRoom(channel.free, channel.capacity);
  return { clock, sent, endpoint, channel, control, waiting, passes, serving, signal };
}

/** The ids of every `pushed` notice in `sent` from index `from` on. */
function toldIds(sent: WorkerToMain[], from = 0): number[] {
  return sent.slice(from).flatMap((m) => (m.op === 'pushed' ? m.ids : []));
}

/** Let the worker's pass after a room signal run (1 ms of the virtual clock between settles). */
async function runPass(r: ReturnType<typeof rig>): Promise<void> {
  await settlePass(r.clock);
}

/** Signal room, then let the worker's one pass run. */
async function signalAndRunPass(r: ReturnType<typeof rig>): Promise<void> {
  r.signal();
  await runPass(r);
}

/** The consumer got every event once, in order (single delivery); then the worker stops. */
async function assertAllOnceInOrderThenStop(r: ReturnType<typeof rig>, got: number[]): Promise<void> {
  assert.deepEqual(
    got,
    Array.from({ length: EVENTS }, (_, i) => i),
    'single delivery, in order',
  );
  await stopEndpoint(r.endpoint, r.clock);
}

test('worker: a full channel parks it on the room signal (no pass while nobody reads); a quarter of a channel of room wakes it', async () => {
  const r = rig();
  await r.clock.advance(0);
  await settleAll();
  assert.equal(r.channel.size, CAPACITY, 'the first pass filled the channel');
  const pushed = r.sent.filter((m) => m.op === 'pushed');
  assert.ok(pushed.length > 0 && pushed[0]!.op === 'pushed' && pushed[0]!.ids.includes(1), 'the consumer is told');
  assert.equal(r.endpoint.host!.scheduler.periodKind, 'room');
  assert.ok(r.waiting(), 'the worker announced it waits for room');
  const before = r.passes();

  // Nobody reads for a long time: the idle-period timer finds nothing to expire and runs no pass.
  await r.clock.advance(60_000);
  await settleAll();
  assert.equal(r.passes(), before, 'no pass over channels that are all full');
  assert.ok(r.waiting());

  // One pop: less than a quarter of the channel free, not worth a pass.
  const got: number[] = [r.channel.pop()];
  assert.ok(r.channel.poppedFromFull, 'the pop saw the channel full');
  assert.equal(r.channel.leftAfterPop, CAPACITY - 1);
  r.signal();
  await settleAll();
  await r.clock.advance(10);
  assert.equal(r.passes(), before);
  assert.ok(r.waiting(), 'still parked');

  // A quarter of the channel free (the low-water mark): the worker wakes and the next pass refills it.
  while (r.channel.free * 4 < CAPACITY) got.push(r.channel.pop());
  assert.ok(r.channel.size > CAPACITY / 2, 'woken while most of the channel is still to read');
  const sentBefore = r.sent.length;
  r.signal();
  assert.ok(!r.waiting(), 'the signal cleared the wait');
  await runPass(r);
  assert.equal(r.passes(), before + 1, 'one pass after the room signal');
  assert.equal(r.channel.size, CAPACITY, 'refilled');
  assert.deepEqual(toldIds(r.sent, sentBefore), [], 'a consumer still reading is not told of the refill');

  // Drain everything the worker pushes, waking it each time: every event once, in order.
  for (let guard = 0; guard < 100 && got.length < EVENTS; guard++) {
    for (let ref = r.channel.pop(); ref >= 0; ref = r.channel.pop()) got.push(ref);
    await signalAndRunPass(r);
  }
  await assertAllOnceInOrderThenStop(r, got);
});

test('worker: an as-is stretch travels in run slots: one pass, one wake-up, 40 events in 5 slots of CAPACITY; the cap counts slots', async () => {
  const r = rig(undefined, true);
  await r.clock.advance(0);
  await settleAll();
  assert.equal(
    r.channel.size,
    EVENTS / CAPACITY,
    'a run of CAPACITY events per slot: not a full channel of single events',
  );
  assert.deepEqual(toldIds(r.sent), [1], 'the waiting consumer is told once');
  const totals = r.sent.flatMap((m) => (m.op === 'pushed' ? [m.pushes] : m.op === 'handback' ? [m.totals.pushes] : []));
  assert.equal(Math.max(...totals), EVENTS, "the worker's push total counts events, not slots");
  assert.ok(
    r.sent.some((m) => m.op === 'handback' && m.passPushes === EVENTS),
    'handed back at the resync point, its pass pushes counted in events',
  );
  const got: number[] = [];
  for (let ref = r.channel.pop(); ref >= 0; ref = r.channel.pop()) got.push(ref);
  await assertAllOnceInOrderThenStop(r, got);
});

test('worker: a batched reader (popBatched) wakes it at each published quarter; every event once, in order', async () => {
  const r = rig();
  await r.clock.advance(0);
  await settleAll();
  assert.equal(r.channel.size, CAPACITY, 'the first pass filled the channel');
  assert.ok(r.waiting(), 'parked for room');
  const before = r.passes();
  // As SharedWatcherChannel.shift: the room signal only after a pop that published HEAD (the worker sees
  // room only then).
  const got: number[] = [r.channel.popBatched()];
  assert.equal(r.channel.headPublished, false);
  await settleAll();
  await r.clock.advance(10);
  assert.equal(r.passes(), before, 'a pop the worker cannot see yet brings no pass');
  got.push(r.channel.popBatched());
  assert.equal(r.channel.headPublished, true, 'a quarter of the channel read: published');
  r.signal();
  assert.ok(!r.waiting(), 'the signal cleared the wait');
  await runPass(r);
  assert.equal(r.passes(), before + 1, 'one pass after the quarter was published');
  assert.equal(r.channel.size, CAPACITY, 'refilled');
  for (let guard = 0; guard < 200 && got.length < EVENTS; guard++) {
    const ref = r.channel.popBatched();
    if (ref >= 0) got.push(ref);
    if (ref >= 0 && !r.channel.headPublished) continue;
    await signalAndRunPass(r);
  }
  await assertAllOnceInOrderThenStop(r, got);
});

test('worker: with several cohorts, each cohort is reported pushed before the next one scans', async () => {
  const r = rig();
  const host = r.endpoint.host!;
  // Two cohorts: the first watcher's channel is not empty (its consumer has not read the two events it
  // holds), so the empty channel of a watcher far ahead leads (KEP order key 1, free share), and the
  // first, below that lead, cannot join its cohort: it leads the second.
  r.channel.tryPush(0);
  r.channel.tryPush(1);
  assert.ok(!r.channel.announceWait(), 'data there: nothing announced');
  r.endpoint.handle({ op: 'forget', ids: Float64Array.of(1), selections: [] });
  r.channel.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER);
  r.endpoint.handle({
    op: 'adopt',
    watchers: [
      {
        id: 1,
        position: rvOf(1),
        capacity: CAPACITY,
        reachedLive: false,
        channel: r.channel.handle,
        cell: new SharedArrayBuffer(CELL_BYTES),
        selection: { namespace: '', name: '', labelSelector: '', fieldSelector: '' },
      },
    ],
  });
  const ch2 = SpscChannel.create(CAPACITY, WriterOwner.SYNC_WORKER);
  assert.ok(ch2.announceWait(), 'the second consumer waits on its empty channel');
  r.endpoint.handle({
    op: 'adopt',
    watchers: [
      {
        id: 2,
        position: rvOf(30),
        capacity: CAPACITY,
        reachedLive: false,
        channel: ch2.handle,
        cell: new SharedArrayBuffer(CELL_BYTES),
        selection: { namespace: '', name: '', labelSelector: '', fieldSelector: '' },
      },
    ],
  });
  const order: string[] = [];
  const open = host.open.bind(host);
  host.open = (after: number) => {
    order.push(`open after ${after}`);
    return open(after);
  };
  const send = r.sent.push.bind(r.sent);
  r.sent.push = (...m: WorkerToMain[]) => {
    for (const x of m) if (x.op === 'pushed') order.push(`pushed ${x.ids.join(',')}`);
    return send(...m);
  };
  await r.clock.advance(0);
  await settleAll();
  const firstOpen = order.findIndex((s) => s.startsWith('open'));
  const secondOpen = order.findIndex((s, i) => i > firstOpen && s.startsWith('open'));
  assert.ok(secondOpen > firstOpen, `two cohorts: ${order.join(' | ')}`);
  const between = order.slice(firstOpen + 1, secondOpen);
  assert.ok(
    between.some((s) => s.startsWith('pushed')),
    `the first cohort's consumer is woken before the second cohort scans: ${order.join(' | ')}`,
  );
  await stopEndpoint(r.endpoint, r.clock);
});

test('worker: a waiting consumer is told once per run, when its channel is full: not at the first push nor at half', async () => {
  const r = rig();
  const sizes: number[] = [];
  const send = r.sent.push.bind(r.sent);
  r.sent.push = (...m: WorkerToMain[]) => {
    for (const x of m) if (x.op === 'pushed' && x.ids.includes(1)) sizes.push(r.channel.size);
    return send(...m);
  };
  await r.clock.advance(0);
  await settleAll();
  assert.equal(r.channel.size, CAPACITY, 'the first pass filled the channel');
  // At the first push it came back for every few events (a wake-up each); told at half as well, it was
  // woken twice per run (the second half's publication at the run's end woke it again).
  assert.deepEqual(sizes, [CAPACITY], 'told once, at the publication of the whole (full) channel');
  await stopEndpoint(r.endpoint, r.clock);
});

test('worker: hot wait: after a pass that pushed it finds room itself (no wait announced, no signal); after one that pushed nothing it parks at once', async () => {
  // The hot wait's clock: one tick per look for room. The consumer reads a quarter of the channel at
  // the third look (as a consumer on another thread would while the worker looks).
  let looks = 0;
  let announcedWhileLooking = false;
  let readAtLook = 3;
  const got: number[] = [];
  // eslint-disable-next-line prefer-const -- assigned once the rig exists (the clock is its argument)
  let r: ReturnType<typeof rig>;
  const hot: HotWait = {
    ms: 10,
    spinMs: 10, // all of it spent looking (the announced sleep after the spin: the next test)
    now: () => {
      looks++;
      if (r.waiting()) announcedWhileLooking = true;
      if (looks === readAtLook) while (r.channel.free * 4 < CAPACITY) got.push(r.channel.pop());
      return looks;
    },
  };
  r = rig(hot);
  await r.clock.advance(0);
  await settleAll();
  // Pass 1 filled the channel; the hot wait after it found the quarter read at the third look; pass 2
  // refilled it; the hot wait after that found nothing (nobody read again) and the worker parked.
  assert.equal(r.endpoint.hotWaits, 1, 'the hot wait after the pass that pushed found the room');
  assert.ok(!announcedWhileLooking, 'looking for room announced no wait: a pop signals nobody');
  assert.equal(r.passes(), 2, 'the room brought the next pass, without a room signal');
  assert.equal(r.channel.size, CAPACITY, 'refilled');
  assert.ok(looks >= readAtLook + 10, 'after the refill it looked for the whole hot wait');
  assert.ok(r.waiting(), 'then parked');
  readAtLook = -1;
  const looksParked = looks;
  const passesParked = r.passes();
  // The idle-period timer finds nothing to expire: no pass, and no hot wait without a pass that pushed.
  await r.clock.advance(60_000);
  await settleAll();
  assert.equal(r.passes(), passesParked, 'no pass while nobody reads');
  assert.equal(looks, looksParked, 'no hot wait while nobody reads');
  // A reader comes back (the room signal, as before): every event once, in order.
  for (let guard = 0; guard < 100 && got.length < EVENTS; guard++) {
    for (let ref = r.channel.pop(); ref >= 0; ref = r.channel.pop()) got.push(ref);
    await signalAndRunPass(r);
  }
  await assertAllOnceInOrderThenStop(r, got);
});

test('worker: hot wait: after its spin it sleeps on the room word with the wait announced; a quarter read on another thread wakes it into the next pass, without a park', async () => {
  // The spin: three looks of the test's counter. The sleep: real time, up to 30 s until a hot wait found
  // room (only a missed wake-up waits that long, and then the test fails), 5 ms after, for the later ones
  // that nobody reads during (the test's own thread reads only between passes).
  let looks = 0;
  // eslint-disable-next-line prefer-const -- assigned once the rig exists (the hot wait is its argument)
  let r: ReturnType<typeof rig>;
  const hot: HotWait = {
    get ms() {
      return r.endpoint.hotWaits === 0 ? 30_000 : 5;
    },
    spinMs: 3,
    now: () => ++looks,
  };
  r = rig(hot);
  const reader = new Worker(new URL('./room-reader-worker.js', import.meta.url), {
    workerData: { channel: r.channel.handle, control: r.control.buffer },
  });
  try {
    await once(reader, 'message'); // ready: it watches ROOM_WAITING
    const read = once(reader, 'message');
    // Pass 1 fills the channel; the hot wait spins, then announces and sleeps until the reader's signal.
    await r.clock.advance(0);
    await settleAll();
    const [{ got }] = (await read) as [{ got: number[] }];
    assert.equal(got.length, CAPACITY / 4, 'the reader read a quarter, once the worker announced its wait');
    assert.equal(r.endpoint.hotWaits, 1, 'the sleep ended with room: the next pass comes without a park');
    assert.ok(looks < 20, `it looked only for its spin (${looks} looks)`);
    await runPass(r);
    assert.equal(r.passes(), 2, 'the room brought the next pass');
    assert.equal(r.channel.size, CAPACITY, 'refilled');
    // Nobody reads now: the second hot wait's sleep runs out and the worker parks.
    assert.ok(r.waiting(), 'then parked');
    assert.equal(r.endpoint.hotWaits, 1);
    for (let guard = 0; guard < 100 && got.length < EVENTS; guard++) {
      for (let ref = r.channel.pop(); ref >= 0; ref = r.channel.pop()) got.push(ref);
      await signalAndRunPass(r);
    }
    await assertAllOnceInOrderThenStop(r, got);
  } finally {
    await reader.terminate();
  }
});
