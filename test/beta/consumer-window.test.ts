/**
 * The consumer window (src/beta/consumer-window.ts): what the sync worker
 * keeps queued at once for the consumers that read on the main thread.
 *  - ConsumerWindow alone: it counts only local members whose consumer read
 *    or was fed within READING_MS; it shuts at its limit and opens again at
 *    half of it; a limit of 0 bounds nothing.
 *  - On the real endpoint, pass host, pooled channel regions and ring (the
 *    scheduler on a virtual clock): a pass queues no more than the window
 *    for reading consumers, and each consumer still gets every event once,
 *    in order; a consumer that stops reading leaves the window, so the others
 *    are fed on (liveness), while the one that stopped keeps its position.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsumerWindow, READING_MS, type WindowMember } from '../../src/beta/consumer-window.js';
import { ChannelSlabs, openRegion } from '../../src/beta/channel-slabs.js';
import { ControlBlock } from '../../src/beta/control-block.js';
import { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { SpscChannel } from '../../src/ring/spsc-channel.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { initEndpoint } from './endpoint-init.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { settleAll, settlePass, stopEndpoint } from './endpoint-settle.js';
import { makeEvent, rvOf } from '../ring/ring-fixtures.js';

function member(queuedEvents: number, local = true): WindowMember & { queuedEvents: number; consumerHead: number } {
  return { local, queuedEvents, consumerHead: 0, headSeen: -1, activeAt: -Infinity };
}

test('ConsumerWindow: counts reading local members only; shuts at the limit, opens at half; limit 0 bounds nothing', () => {
  const w = new ConsumerWindow(100);
  const a = member(60);
  const b = member(50);
  const remote = member(1000, false);
  w.measure([a, b, remote], 0);
  assert.ok(w.shut, 'two reading members, 110 queued: shut (a remote one never counts)');

  a.queuedEvents = 45;
  a.consumerHead = 3;
  w.measure([a, b, remote], 10);
  assert.ok(w.shut, '95 queued: below the limit but above half, still shut');

  a.queuedEvents = 0;
  a.consumerHead = 5;
  w.measure([a, b, remote], 20);
  assert.ok(!w.shut, '50 queued: at half, open again');
  for (let i = 0; i < 49; i++) w.take();
  assert.ok(!w.shut, 'one event left');
  w.take();
  assert.ok(w.shut, 'the pass used the rest: shut');

  // b has not read since it was first seen at t = 0: after READING_MS it stops counting.
  b.queuedEvents = 100;
  a.queuedEvents = 0;
  w.measure([a, b], READING_MS);
  assert.ok(w.shut, 'b still reading at READING_MS');
  w.measure([a, b], READING_MS + 1);
  assert.ok(!w.shut, 'b idle for longer than READING_MS: its 100 queued events leave the window');
  b.activeAt = READING_MS + 1; // fed (WorkerPassHost.publish marks that)
  w.measure([a, b], READING_MS + 2);
  assert.ok(w.shut, 'fed again: it counts again');

  const none = new ConsumerWindow(0);
  none.measure([member(1e9)], 0);
  none.take();
  assert.ok(!none.shut);
});

const CAPACITY = 8;
const EVENTS = 40;
const WINDOW = 12;

/**
 * A ring of EVENTS MODIFIED events without a previous object (one slot each), a worker endpoint whose
 * window is `window`, and `members` pooled watchers from before the first event, adopted together (one
 * cohort: the scan offers each event to each of them in turn).
 */
function rig(members: number, window = WINDOW) {
  const ring = new HistoryRing({ capacity: 64, arenaBytes: 256 * 1024 });
  for (let abs = 0; abs < EVENTS; abs++)
    ring.appendEvent({ type: 'MODIFIED', object: makeEvent(abs).object }, { rv: rvOf(abs) });
  ring.publish();
  const control = new ControlBlock();
  control.publish(rvOf(EVENTS - 1), rvOf(0));
  const clock = new VirtualClock();
  const endpoint = new SyncWorkerEndpoint(() => {}, clock, true);
  initEndpoint(endpoint, ring, control, { consumerWindow: window });
  void endpoint.serveRoom();
  const slabs = new ChannelSlabs((id, buffer) => endpoint.handle({ op: 'slab', id, buffer }), 64 * 1024);
  const channels: SpscChannel[] = [];
  const rows: number[] = [];
  for (let id = 1; id <= members; id++) {
    const s = slabs.allocate(CAPACITY);
    SpscChannel.initRegion(slabs.bufferOf(s), s.offset + CELL_BYTES, CAPACITY, WriterOwner.SYNC_WORKER);
    const { channel } = openRegion(slabs.bufferOf(s), s);
    channel.announceWait(); // its consumer waits on the empty channel
    channels.push(channel);
    rows.push(id, s.slab, s.offset, CAPACITY, 7);
  }
  const everything = { namespace: '', name: '', labelSelector: '', fieldSelector: '' };
  endpoint.handle({ op: 'introduce-rows', selections: [{ id: 7, spec: everything }], rows: Float64Array.from(rows) });
  const adopt: number[] = [];
  for (let id = 1; id <= members; id++) adopt.push(id, rvOf(0) - 1, CAPACITY, 0);
  endpoint.handle({ op: 'adopt-rows', rows: Float64Array.from(adopt) });
  const queued = (): number => channels.reduce((n, c) => n + c.size, 0);
  return { clock, endpoint, control, channels, queued };
}

test('worker: the window bounds what a pass queues for reading consumers; each still gets every event once, in order', async () => {
  const r = rig(3);
  await r.clock.advance(0);
  await settleAll();
  assert.equal(r.queued(), WINDOW, 'the first pass queued the window (4 each), not three channels of 8');
  assert.ok(r.endpoint.host!.window.shut);
  const got: number[][] = [[], [], []];
  for (let guard = 0; guard < 200 && got.some((g) => g.length < EVENTS); guard++) {
    for (let i = 0; i < 3; i++) {
      const c = r.channels[i]!;
      for (let ref = c.pop(); ref >= 0; ref = c.pop()) got[i]!.push(ref);
      r.control.signalRoom(c.free, c.capacity);
    }
    await settlePass(r.clock);
    assert.ok(r.queued() <= WINDOW, `never more than the window queued (${r.queued()})`);
  }
  for (const g of got)
    assert.deepEqual(
      g,
      Array.from({ length: EVENTS }, (_, i) => i),
      'single delivery, in order',
    );
  await stopEndpoint(r.endpoint, r.clock);
});

test('worker: a consumer that stops reading leaves the window within READING_MS; the others are fed on, it gets no more than its channel', async () => {
  // A window of 7: the first pass gives the two members events 0-3 and 0-2 in turn.
  const r = rig(2, 7);
  await r.clock.advance(0);
  await settleAll();
  const [stalled, reader] = r.channels as [SpscChannel, SpscChannel];
  assert.equal(stalled.size, 4);
  assert.equal(reader.size, 3);
  const got: number[] = [];
  for (let ref = reader.pop(); ref >= 0; ref = reader.pop()) got.push(ref);
  // The first member never reads. Its 4 events are more than half the window, which stays shut while it
  // may still read; once it has not for READING_MS (the virtual clock), the worker's next measure leaves
  // them out and feeds the reader on.
  r.control.signalRoom(reader.free, reader.capacity);
  await settlePass(r.clock);
  assert.equal(reader.size, 0, 'not fed while the stalled consumer may still read');
  assert.ok(r.endpoint.host!.window.shut);
  for (let guard = 0; guard < 400 && got.length < EVENTS; guard++) {
    r.control.signalRoom(reader.free, reader.capacity);
    await settleAll();
    await r.clock.advance(5);
    await settleAll();
    // The worker parked behind the shut window re-measures after READING_MS of real time too.
    if (reader.size === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    for (let ref = reader.pop(); ref >= 0; ref = reader.pop()) got.push(ref);
  }
  assert.deepEqual(
    got,
    Array.from({ length: EVENTS }, (_, i) => i),
    'the reader got every event once, in order, past a consumer that stopped',
  );
  // Out of the window it is fed like any member with room: its channel filled up (each feed counted it as
  // reading again for READING_MS), and nothing past it, nor any event twice.
  assert.equal(stalled.size, CAPACITY, 'the stalled one holds a full channel');
  const held: number[] = [];
  for (let ref = stalled.pop(); ref >= 0; ref = stalled.pop()) held.push(ref);
  assert.deepEqual(held, [0, 1, 2, 3, 4, 5, 6, 7]);
  const m = r.endpoint.host!.members.get(1)!;
  assert.equal(m.cursor.position, rvOf(CAPACITY - 1), 'its position: the last event it got');
  await stopEndpoint(r.endpoint, r.clock);
});
