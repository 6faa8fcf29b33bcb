/**
 * The sync worker's warm-up rehearsal (src/beta/worker-warm-up.ts,
 * src/beta/warm-up-ring.ts): a new worker runs catch-up passes over a ring
 * of synthetic events the main thread wrote, privately, before real work.
 *  - it completes its rounds, and of all it did the main thread hears only
 *    the closing `warmed-up` totals: no hand-back, no pushed notice, no
 *    expiry of a rehearsal member reaches it, then or later;
 *  - the warm-up ring holds an event at every RV, published;
 *  - the first real adopt ends it before that adopt is handled, and the
 *    real watcher is then served in full, in order;
 *  - a beta cache on a worker thread sends it, and the worker reports it.
 * In-process endpoints on a virtual clock, and one real worker thread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { ControlBlock } from '../../src/beta/control-block.js';
import { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import type { WorkerToMain } from '../../src/beta/sync-messages.js';
import { WARM_UP_EVENTS, WARM_UP_SELECTIONS, warmUpMessage } from '../../src/beta/warm-up-ring.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { HistoryRingReader, ReadStatus, createRingRecord } from '../../src/ring/ring-reader.js';
import { POP_CLOSED, POP_EMPTY, SpscChannel } from '../../src/ring/spsc-channel.js';
import { resolvePassOptions } from '../../src/sync/pass-options.js';
import { VirtualClock, settle } from '../../src/sim/virtual-clock.js';
import { MemoryStore, WatchCache } from '../../src/index.js';
import { initEndpoint } from './endpoint-init.js';

/**
 * An endpoint on a virtual clock whose real ring is another warm-up ring (WARM_UP_EVENTS events, RV 1
 * up), or none at all (`withEvents` false: an empty ring).
 */
function endpointWith(withEvents: boolean) {
  const clock = new VirtualClock();
  const sent: WorkerToMain[] = [];
  const endpoint = new SyncWorkerEndpoint((m) => sent.push(m), clock, true);
  if (withEvents) {
    const real = warmUpMessage({}, undefined);
    endpoint.handle({
      op: 'init',
      ring: real.ring,
      control: real.control,
      pass: resolvePassOptions({}, 'beta'),
      indexerFields: [],
      triggerField: undefined,
    });
  } else initEndpoint(endpoint, new HistoryRing({ capacity: 1024, arenaBytes: 1 << 16 }), new ControlBlock());
  return { clock, sent, endpoint };
}

async function until(clock: VirtualClock, done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000 && !done(); i++) await clock.advance(1);
  assert.ok(done(), `${what} within 20 s of virtual time`);
}

test('the rehearsal completes its rounds, and the main thread hears only its totals', async () => {
  const { clock, sent, endpoint } = endpointWith(false);
  endpoint.handle(warmUpMessage({}, undefined));
  assert.ok(endpoint.warmUp !== undefined, 'it runs');
  await until(clock, () => endpoint.warmUp === undefined, 'the rehearsal ends');
  assert.deepEqual(
    sent.map((m) => m.op),
    ['warmed-up'],
  );
  const t = sent[0] as Extract<WorkerToMain, { op: 'warmed-up' }>;
  assert.equal(t.aborted, false);
  assert.equal(t.rounds, 4);
  assert.ok(t.passes > 0);
  // Every member of every round got at least what an everything-member gets of half the ring.
  assert.ok(t.pushes > (4 * 12 * WARM_UP_EVENTS) / 2, `pushes ${t.pushes}`);
  assert.equal(endpoint.hasMembers, false, 'the real host never had a member');
  // Its host rings a doorbell of its own and sends its totals on a timer: nothing of it comes later either.
  for (let i = 0; i < 1000; i++) await clock.advance(1);
  assert.deepEqual(
    sent.map((m) => m.op),
    ['warmed-up'],
    'nothing after the rehearsal ended',
  );
  endpoint.handle({ op: 'stop' });
  await settle();
});

test('the warm-up ring holds what each rehearsal selection selects, and a payload for every event', () => {
  const msg = warmUpMessage({}, undefined);
  const reader = new HistoryRingReader(msg.ring);
  const rec = createRingRecord(4096);
  let read = 0;
  for (let abs = 0; abs < WARM_UP_EVENTS; abs++) {
    assert.equal(reader.read(abs, rec), ReadStatus.OK, `event ${abs}`);
    assert.equal(rec.rv, abs + 1);
    read++;
  }
  assert.equal(read, WARM_UP_EVENTS);
  const snap = new ControlBlock(msg.control).read({ lastDispatchedRV: 0, oldestServableRV: undefined });
  assert.equal(snap.lastDispatchedRV, WARM_UP_EVENTS);
  assert.equal(snap.oldestServableRV, 1);
  assert.equal(WARM_UP_SELECTIONS.length, 5);
});

test('a real adopt ends the rehearsal first; the real watcher then gets every event, in order', async () => {
  const EVENTS = WARM_UP_EVENTS;
  const { clock, sent, endpoint } = endpointWith(true);
  void endpoint.serveRoom();
  endpoint.handle(warmUpMessage({}, undefined));
  await clock.advance(0); // a pass or two of the rehearsal
  assert.ok(endpoint.warmUp !== undefined, 'still rehearsing');
  const channel = SpscChannel.create(1024, WriterOwner.SYNC_WORKER); // up to 16 events a slot: room for all
  endpoint.handle({
    op: 'adopt',
    watchers: [
      {
        id: 7,
        position: 0,
        capacity: 1024,
        reachedLive: false,
        channel: channel.handle,
        cell: new SharedArrayBuffer(CELL_BYTES),
        selection: { namespace: '', name: '', labelSelector: '', fieldSelector: '' },
      },
    ],
  });
  assert.equal(endpoint.warmUp, undefined, 'the adopt ended it');
  const ended = sent.findIndex((m) => m.op === 'warmed-up');
  assert.ok(ended >= 0);
  assert.equal((sent[ended] as Extract<WorkerToMain, { op: 'warmed-up' }>).aborted, true);
  await until(clock, () => sent.some((m) => m.op === 'handback' && m.id === 7), 'the real watcher is handed back');
  // Invariant 2 (order and single delivery): 1..EVENTS - handOffDistance at least, each once, in order.
  const got: number[] = [];
  for (let r = channel.pop(); r !== POP_EMPTY && r !== POP_CLOSED; r = channel.pop()) got.push(r + 1);
  assert.ok(got.length >= EVENTS - 16, `got ${got.length}`);
  got.forEach((rv, i) => assert.equal(rv, i + 1));
  // Nothing of the rehearsal reached the main thread but its totals.
  for (const m of sent) if (m.op === 'handback' || m.op === 'expire') assert.equal(m.id, 7);
  endpoint.handle({ op: 'stop' });
  await settle();
});

test('a warm-up after real members arrived is not started', async () => {
  const { sent, endpoint } = endpointWith(true);
  const channel = SpscChannel.create(64, WriterOwner.SYNC_WORKER);
  endpoint.handle({
    op: 'adopt',
    watchers: [
      {
        id: 1,
        position: 0,
        capacity: 64,
        reachedLive: false,
        channel: channel.handle,
        cell: new SharedArrayBuffer(CELL_BYTES),
        selection: { namespace: '', name: '', labelSelector: '', fieldSelector: '' },
      },
    ],
  });
  endpoint.handle(warmUpMessage({}, undefined));
  assert.equal(endpoint.warmUp, undefined);
  assert.ok(!sent.some((m) => m.op === 'warmed-up'));
  endpoint.handle({ op: 'stop' });
  await settle();
});

test('a beta cache on a worker thread has its worker rehearse, and hears that it did', async () => {
  const heard: WorkerToMain[] = [];
  const listen = (m: unknown): void => {
    const msg = (m as { message?: WorkerToMain }).message;
    if (msg?.op === 'warmed-up') heard.push(msg);
  };
  diagnostics_channel.subscribe('watchcache:worker-post', listen);
  const cache = new WatchCache({ store: new MemoryStore(), mode: 'beta' });
  try {
    await cache.start();
    for (let i = 0; i < 300 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(heard.length, 1, 'one warmed-up report');
    const t = heard[0] as Extract<WorkerToMain, { op: 'warmed-up' }>;
    assert.equal(t.aborted, false);
    assert.equal(t.rounds, 4);
  } finally {
    diagnostics_channel.unsubscribe('watchcache:worker-post', listen);
    await cache.stop();
  }
});
