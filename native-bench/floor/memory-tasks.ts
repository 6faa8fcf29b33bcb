/**
 * Floor tasks that stay on one thread: the SharedArrayBuffer history ring
 * (append+publish, read, readMeta), a watcher channel push+pop (EventQueue,
 * SpscChannel), the fan-out floor (one reference into N channels), encoding
 * the same pod with JSON and msgpackr, and a microtask hop (the in-process
 * delivery floor). Each task does `ops` operations per call so that
 * tinybench's own per-call cost does not dominate nanosecond operations.
 */
import { EventTypeCode } from '../../src/ring/ring-layout.js';
import { createRingRecord } from '../../src/ring/ring-reader.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { SpscChannel } from '../../src/ring/spsc-channel.js';
import { EventQueue } from '../../src/watch/event-queue.js';
import { ChannelSlabs } from '../../src/beta/channel-slabs.js';
import { SharedWatcherChannel } from '../../src/beta/shared-watcher-channel.js';
import { EventHistory } from '../../src/history/event-history.js';
import { msgpack, WatchEvent } from '../../src/wire/watch-event.js';
import { makePod } from '../lib/pod.js';

export interface FloorTask {
  name: string;
  group: string;
  unit: 'ns/op' | 'us/op';
  /** Operations per call of fn. */
  ops: number;
  fn: () => unknown;
}

export function ringTasks(): FloorTask[] {
  const packr = msgpack;
  // Beta's ring payload is the event's one msgpack frame (its previous object is a reference, not a copy).
  const payload = packr.pack({ type: 'MODIFIED', object: makePod(1) });
  const ring = new HistoryRing({ capacity: 4096, arenaBytes: 4096 * (payload.length + 64) });
  const reader = ring.reader();
  const rec = createRingRecord(payload.length + 64);
  let rv = 0;
  const meta = { rv: 0, type: EventTypeCode.MODIFIED, nsHash: 1, nameHash: 2, triggerHash: 0, prevTriggerHash: 0 };
  const append = (): void => {
    meta.rv = ++rv;
    ring.append(meta, payload);
    ring.publish();
  };
  for (let i = 0; i < 4096; i++) append();
  const OPS = 256;
  return [
    {
      name: `ring append+publish (${payload.length} B msgpack frame)`,
      group: 'SAB history ring',
      unit: 'ns/op',
      ops: OPS,
      fn: () => {
        for (let i = 0; i < OPS; i++) append();
      },
    },
    {
      name: `ring read (copy ${payload.length} B out)`,
      group: 'SAB history ring',
      unit: 'ns/op',
      ops: OPS,
      fn: () => {
        const last = reader.publishedIndex - 1;
        for (let i = 0; i < OPS; i++) reader.read(last - (i & 1023), rec);
      },
    },
    {
      name: 'ring readMeta (scan step)',
      group: 'SAB history ring',
      unit: 'ns/op',
      ops: OPS,
      fn: () => {
        const last = reader.publishedIndex - 1;
        for (let i = 0; i < OPS; i++) reader.readMeta(last - (i & 1023), rec);
      },
    },
  ];
}

interface TimedPushes {
  overriddenDuration: number;
  overriddenIterationCost: number;
}

// Two copies of one loop, one per channel type: each push site then sees one class, as the engine's live
// push does in one mode (a loop shared by both would be polymorphic and charge both modes for it).
function timedAlphaPushes(chans: EventQueue[], ev: WatchEvent): () => TimedPushes {
  return () => {
    const start = performance.now();
    for (let i = 0; i < chans.length; i++) chans[i]!.push(ev);
    const pushed = performance.now();
    for (let i = 0; i < chans.length; i++) chans[i]!.clear();
    return { overriddenDuration: pushed - start, overriddenIterationCost: performance.now() - start };
  };
}

function timedBetaPushes(chans: SharedWatcherChannel[], ev: WatchEvent): () => TimedPushes {
  return () => {
    const start = performance.now();
    for (let i = 0; i < chans.length; i++) chans[i]!.push(ev);
    const pushed = performance.now();
    for (let i = 0; i < chans.length; i++) chans[i]!.clear();
    return { overriddenDuration: pushed - start, overriddenIterationCost: performance.now() - start };
  };
}

export function channelTasks(big: number): FloorTask[] {
  const ev = new WatchEvent('MODIFIED', makePod(1), 1);
  const q = new EventQueue(100);
  const spsc = SpscChannel.create(100);
  const OPS = 256;
  const fanout = (n: number): FloorTask => {
    const qs = Array.from({ length: n }, () => new EventQueue(100));
    return {
      name: `fan-out: one ref into ${n.toLocaleString('en-US')} EventQueues (push, then drain)`,
      group: 'watcher channel',
      unit: 'ns/op',
      ops: n,
      fn: () => {
        for (let i = 0; i < n; i++) qs[i]!.push(ev);
        for (let i = 0; i < n; i++) qs[i]!.shift();
      },
    };
  };
  const spscFanout = (n: number): FloorTask => {
    const cs = Array.from({ length: n }, () => SpscChannel.create(16));
    return {
      name: `fan-out: one ref into ${n.toLocaleString('en-US')} SpscChannels (tryPush, then pop)`,
      group: 'watcher channel',
      unit: 'ns/op',
      ops: n,
      fn: () => {
        for (let i = 0; i < n; i++) cs[i]!.tryPush(7);
        for (let i = 0; i < n; i++) cs[i]!.pop();
      },
    };
  };
  // The engines' live push, one event into 10,000 channels (issue 13, goal 2: beta <= 1.3x alpha):
  // alpha's EventQueue, and beta's SharedWatcherChannel of a synced watcher (pooled, main-owned).
  const livePush = (kind: 'alpha' | 'beta', n: number): FloorTask => {
    const slabs = new ChannelSlabs(() => {});
    const history = new EventHistory();
    const chans = Array.from({ length: n }, () => {
      if (kind === 'alpha') return new EventQueue(100);
      const slot = slabs.allocate(100);
      return new SharedWatcherChannel(100, history, undefined, { slot, buffer: slabs.bufferOf(slot) });
    });
    const shared = new WatchEvent('MODIFIED', makePod(1), 1, 0);
    return {
      name: `live push: one event into ${n.toLocaleString('en-US')} ${kind === 'alpha' ? 'EventQueues (alpha)' : 'SharedWatcherChannels (beta, main-owned)'} (push only; the drain is not timed)`,
      group: 'watcher channel',
      unit: 'ns/op',
      ops: n,
      // Timed: the pushes alone, in both modes alike; the drain after them keeps room and is charged to the
      // time budget only (the consumer's cost is measured apart above).
      fn:
        kind === 'alpha'
          ? timedAlphaPushes(chans as EventQueue[], shared)
          : timedBetaPushes(chans as SharedWatcherChannel[], shared),
    };
  };
  return [
    livePush('alpha', 10_000),
    livePush('beta', 10_000),
    {
      name: 'EventQueue push+shift (alpha/off channel)',
      group: 'watcher channel',
      unit: 'ns/op',
      ops: OPS,
      fn: () => {
        for (let i = 0; i < OPS; i++) {
          q.push(ev);
          q.shift();
        }
      },
    },
    {
      name: 'SpscChannel tryPush+pop, same thread (beta channel)',
      group: 'watcher channel',
      unit: 'ns/op',
      ops: OPS,
      fn: () => {
        for (let i = 0; i < OPS; i++) {
          spsc.tryPush(i);
          spsc.pop();
        }
      },
    },
    fanout(1000),
    fanout(big),
    spscFanout(1000),
    spscFanout(Math.min(big, 10_000)),
  ];
}

export function encodeTasks(): FloorTask[] {
  const pods = Array.from({ length: 64 }, (_, i) => makePod(i));
  const packr = msgpack; // the engine's encoder (its options): the floor of the engine's one encode
  const strings = pods.map((p) => JSON.stringify({ type: 'MODIFIED', object: p }));
  const packed = pods.map((p) => packr.pack({ type: 'MODIFIED', object: p }));
  const bytes = Buffer.byteLength(strings[0]!);
  let k = 0;
  const next = (): number => (k = (k + 1) & 63);
  return [
    {
      name: `JSON.stringify event (${bytes} B)`,
      group: 'encode pod',
      unit: 'us/op',
      ops: 1,
      fn: () => JSON.stringify({ type: 'MODIFIED', object: pods[next()] }),
    },
    {
      name: 'jsonLine form: Buffer.from(JSON.stringify + "\\n")',
      group: 'encode pod',
      unit: 'us/op',
      ops: 1,
      fn: () => Buffer.from(JSON.stringify({ type: 'MODIFIED', object: pods[next()] }) + '\n'),
    },
    {
      name: `msgpackr pack event (${packed[0]!.length} B, the engine's Packr)`,
      group: 'encode pod',
      unit: 'us/op',
      ops: 1,
      fn: () => packr.pack({ type: 'MODIFIED', object: pods[next()] }),
    },
    {
      name: 'JSON.parse event',
      group: 'decode pod',
      unit: 'us/op',
      ops: 1,
      fn: () => JSON.parse(strings[next()]!) as unknown,
    },
    {
      name: 'msgpackr unpack event',
      group: 'decode pod',
      unit: 'us/op',
      ops: 1,
      fn: () => packr.unpack(packed[next()]!) as unknown,
    },
  ];
}

/** Resolve a pending promise and run its continuation: the floor of in-process delivery. */
export function hopTask(): FloorTask {
  const OPS = 64;
  return {
    name: 'microtask hop: resolve a pending promise, await it',
    group: 'in-process delivery',
    unit: 'ns/op',
    ops: OPS,
    fn: async () => {
      for (let i = 0; i < OPS; i++) {
        let resolve!: () => void;
        const p = new Promise<void>((r) => (resolve = r));
        resolve();
        await p;
      }
    },
  };
}
