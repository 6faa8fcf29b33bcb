/**
 * RingMirror (src/beta/ring-mirror.ts): every mirrored event reads back from
 * the ring with exactly its object and previous object, the previous object
 * referencing the payload that carried it while that payload is in the ring
 * and copied otherwise (an object from the initial list, or one whose last
 * event left the ring, its frame copied out as it left); the frames the
 * mirror tracks stay bounded by the ring; a frame is never encoded twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Unpackr } from 'msgpackr';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import type { KubeObject } from '../../src/core/types.js';
import { RingMirror } from '../../src/beta/ring-mirror.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import type { FrameSource } from '../../src/wire/frame-source.js';
import { msgpack } from '../../src/wire/watch-event.js';
import { Delivery } from '../../src/selection/selection.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { decodeRingPayload, readRingSelection } from '../../src/protocol/ring-payload.js';
import { hash32 } from '../../src/ring/hash32.js';
import { HistoryRingReader, ReadStatus, createRingRecord } from '../../src/ring/ring-reader.js';

const node = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

/** A mirror over a history of `held` events, its encodings counted, and a reader of its ring. */
function mirrorRig(held: number) {
  const history = new EventHistory({ lowerBound: held, upperBound: held });
  const metrics = new CacheMetrics(DEFAULT_RESOURCE);
  const counts = { encodings: 0 };
  metrics.encoded = () => void counts.encodings++;
  const mirror = new RingMirror({
    history,
    metrics,
    indexers: { 'spec.nodeName': node },
    onDesync: (message) => assert.fail(message),
  });
  const reader = new HistoryRingReader(mirror.handle);
  return {
    history,
    metrics,
    counts,
    mirror,
    reader,
    unpackr: new Unpackr({ useRecords: false }),
    rec: createRingRecord(),
  };
}

for (const keys of [5, 40]) {
  test(`ring mirror: previous objects referenced while their carrier is in the ring, else copied (${keys} keys, 16 held)`, () => {
    const { history, counts, mirror, reader, unpackr, rec } = mirrorRig(16);
    const current = new Map<string, { object: KubeObject; frame: FrameSource }>();
    for (let k = 0; k < keys; k++) {
      const object: KubeObject = {
        metadata: { namespace: 'ns', name: `p${k}`, resourceVersion: '1' },
        spec: { nodeName: 'n0' },
      };
      current.set(`p${k}`, { object, frame: mirror.encodeFrame(object) }); // the initial list
    }
    let referenced = 0;
    let copied = 0;
    for (let i = 0; i < 400; i++) {
      const name = `p${(i * 7) % keys}`;
      const prev = current.get(name)!;
      const rv = i + 2;
      const object: KubeObject = {
        metadata: { namespace: 'ns', name, resourceVersion: String(rv) },
        spec: { nodeName: `n${i % 3}`, pad: 'x'.repeat(i % 97) },
      };
      const ev = new WatchCacheEvent('MODIFIED', object, prev.object, rv, 0, node);
      history.append(ev);
      const frame = mirror.appended(ev, prev.frame)!;
      current.set(name, { object, frame });

      assert.equal(reader.read(ev.index, rec), ReadStatus.OK);
      assert.equal(rec.hasPrev, true);
      const d = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
      assert.deepEqual(d.frame.object, object);
      assert.deepEqual(d.prevObject, prev.object);
      if (rec.prevStart >= rec.length) referenced++;
      else copied++;
      // Every held event still reads back its previous object (the oldest ones' carriers left first).
      for (let abs = reader.oldestIndex; abs < reader.publishedIndex; abs++) {
        assert.equal(reader.read(abs, rec), ReadStatus.OK);
        assert.ok(decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength).prevObject !== undefined);
      }
      const m = mirror as unknown as { held: unknown[]; heldHead: number };
      assert.ok(
        m.held.length - m.heldHead <= 16,
        `frames tracked ${m.held.length - m.heldHead}: only events in the ring`,
      );
    }
    // Each event and each listed object encoded exactly once (frames whose carrier left were copied out).
    assert.equal(counts.encodings, keys + 400);
    if (keys === 5) {
      assert.equal(copied, keys, 'only the first event per key (its previous object from the list) copies');
      assert.equal(referenced, 400 - keys);
    } else {
      // 40 keys, 16 held: the previous event on a key has always left the ring.
      assert.equal(referenced, 0);
      assert.equal(copied, 400);
    }
  });
}

test('ring mirror: a msgpack stream sends exactly the ring payload frame, made by the one encoding (held or left the ring)', () => {
  const { history, metrics, counts, mirror, reader, unpackr, rec } = mirrorRig(8);
  const last = new Map<string, { object: KubeObject; frame: FrameSource; ev: WatchCacheEvent }>();
  const ringFrames = new Map<WatchCacheEvent, Buffer>();
  // "idle" changes once, at rv 1, and again at rv 40: its first event leaves the ring (8 held) long before.
  for (let i = 0; i < 40; i++) {
    const name = i === 0 || i === 39 ? 'idle' : `p${i % 3}`;
    const prev = last.get(name);
    const object: KubeObject = {
      metadata: { namespace: 'ns', name, resourceVersion: String(i + 1) },
      spec: { nodeName: `n${i}`, pad: 'y'.repeat(i * 13) },
    };
    const ev = new WatchCacheEvent(prev ? 'MODIFIED' : 'ADDED', object, prev?.object, i + 1, 0, node);
    history.append(ev);
    const before = counts.encodings;
    const frame = mirror.appended(ev, prev?.frame)!;
    assert.equal(counts.encodings, before + 1, 'the event is encoded once, by the mirror (its previous frame reused)');
    assert.equal(reader.read(ev.index, rec), ReadStatus.OK);
    const f = rec.payload[0]! | (rec.payload[1]! << 8) | (rec.payload[2]! << 16) | (rec.payload[3]! << 24);
    ringFrames.set(ev, Buffer.from(rec.payload.subarray(8, 8 + f)));
    assert.deepEqual(decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength).prevObject, prev?.object);
    // Every third event is asked for while its payload is in the ring.
    if (i % 3 === 1) {
      assert.deepEqual(ev.deliver(Delivery.AsIs).msgpackFrame(metrics), ringFrames.get(ev), 'stream = ring frame');
      assert.equal(counts.encodings, before + 1, 'the stream copies the frame: no second encoding');
    }
    last.set(name, { object, frame, ev });
  }
  // The idle key's first event left the ring untaken until rv 40: its frame was copied out as it left, so
  // the stream still gets those bytes without encoding (rv 40 copied them as its previous object, too).
  const idle = [...ringFrames.keys()][0]!;
  const total = counts.encodings;
  assert.deepEqual(idle.deliver(Delivery.AsIs).msgpackFrame(metrics), ringFrames.get(idle));
  assert.equal(counts.encodings, total);
  // Events taken by a later event before they left: a stream re-encodes (counted); the bytes are the same.
  for (const [ev, bytes] of [...ringFrames].slice(1, 20)) {
    assert.deepEqual(ev.deliver(Delivery.AsIs).msgpackFrame(metrics), bytes);
    assert.deepEqual(msgpack.unpack(bytes), { type: ev.type, object: ev.object });
  }
});

test('ring mirror: no msgpack buffer is allocated per event (counted: Buffer.allocUnsafeSlow, msgpackr slabs)', () => {
  const history = new EventHistory({ lowerBound: 4096, upperBound: 4096 });
  const mirror = new RingMirror({
    history,
    metrics: new CacheMetrics(DEFAULT_RESOURCE),
    indexers: { 'spec.nodeName': node },
    onDesync: (message) => assert.fail(message),
  });
  const frames = new Map<string, { object: KubeObject; frame: FrameSource }>();
  const run = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      const name = `p${i % 50}`;
      const prev = frames.get(name);
      const object: KubeObject = {
        metadata: { namespace: 'ns', name, resourceVersion: String(i + 1) },
        spec: { nodeName: `n${i % 7}`, pad: 'z'.repeat(1800) },
      };
      const ev = new WatchCacheEvent(prev ? 'MODIFIED' : 'ADDED', object, prev?.object, i + 1, 0, node);
      history.append(ev);
      frames.set(name, { object, frame: mirror.appended(ev, prev?.frame)! });
    }
  };
  run(0, 100);
  const slow = Object.getOwnPropertyDescriptor(Buffer, 'allocUnsafeSlow')!;
  let allocations = 0;
  Buffer.allocUnsafeSlow = (size: number) => {
    allocations++;
    return (slow.value as (n: number) => Buffer<ArrayBuffer>)(size);
  };
  try {
    run(100, 1100); // 1,000 events of ~1.9 KB frames: msgpackr's own slabs took 100 (an 8 KiB slab per four to five frames)
  } finally {
    Object.defineProperty(Buffer, 'allocUnsafeSlow', slow);
  }
  assert.ok(allocations <= 2, `${allocations} msgpack buffers allocated for 1,000 events`);
});

/** Calls of Uint8Array#set that write into shared memory (the ring's arena) while `fn` runs. */
function sharedCopies(fn: () => void): number {
  const typedArray = Object.getPrototypeOf(Uint8Array.prototype) as object;
  const set = Object.getOwnPropertyDescriptor(typedArray, 'set')!;
  const original = set.value as (this: Uint8Array, src: ArrayLike<number>, offset?: number) => void;
  let copies = 0;
  Object.defineProperty(typedArray, 'set', {
    ...set,
    value: function (this: Uint8Array, src: ArrayLike<number>, offset?: number) {
      if (this.buffer instanceof SharedArrayBuffer) copies++;
      original.call(this, src, offset);
    },
  });
  try {
    fn();
  } finally {
    Object.defineProperty(typedArray, 'set', set);
  }
  return copies;
}

/** `count` events on 50 keys, from `from` on (prevs referenced while held), into `frames`. */
function mirrorRun(
  rig: ReturnType<typeof mirrorRig>,
  frames: Map<string, { object: KubeObject; frame: FrameSource }>,
  from: number,
  count: number,
  pad = (i: number) => 'z'.repeat(1500 + (i % 300)),
): WatchCacheEvent[] {
  const events: WatchCacheEvent[] = [];
  for (let i = from; i < from + count; i++) {
    const name = `p${i % 50}`;
    const prev = frames.get(name);
    const object: KubeObject = {
      metadata: { namespace: 'ns', name, resourceVersion: String(i + 1) },
      spec: { nodeName: `n${i % 7}`, pad: pad(i) },
    };
    const ev = new WatchCacheEvent(prev ? 'MODIFIED' : 'ADDED', object, prev?.object, i + 1, 0, node);
    rig.history.append(ev);
    frames.set(name, { object, frame: rig.mirror.appended(ev, prev?.frame)! });
    events.push(ev);
  }
  return events;
}

test('ring mirror: each frame is packed straight into the arena, never copied into it (no temporary bytes)', () => {
  const rig = mirrorRig(4096);
  const frames = new Map<string, { object: KubeObject; frame: FrameSource }>();
  mirrorRun(rig, frames, 0, 100);
  let events: WatchCacheEvent[] = [];
  // Every previous object is referenced (held): nothing at all needs copying into shared memory.
  const copies = sharedCopies(() => (events = mirrorRun(rig, frames, 100, 1000)));
  assert.equal(copies, 0, `${copies} copies into the arena for 1,000 events`);
  for (const ev of events) {
    assert.equal(rig.reader.read(ev.index, rig.rec), ReadStatus.OK);
    const f = rig.rec.payload[0]! | (rig.rec.payload[1]! << 8) | (rig.rec.payload[2]! << 16);
    // The ring frame is exactly the shared Packr's bytes for {type, object}.
    assert.deepEqual(
      Buffer.from(rig.rec.payload.subarray(8, 8 + f)),
      Buffer.from(msgpack.pack({ type: ev.type, object: ev.object })),
    );
    const d = decodeRingPayload(rig.unpackr, rig.rec.payload, rig.rec.prevStart, rig.rec.prevLength);
    assert.deepEqual(d.prevObject, ev.prevObject);
  }
});

test('ring mirror: after packing in place, msgpack packs elsewhere never write into the ring', () => {
  const rig = mirrorRig(64);
  const frames = new Map<string, { object: KubeObject; frame: FrameSource }>();
  // The 51st event is on a key seen before: its room (from the previous frame) fits it, packed in place.
  const ev = mirrorRun(rig, frames, 0, 51)[50];
  assert.equal(rig.reader.read(ev!.index, rig.rec), ReadStatus.OK);
  const before = Buffer.from(rig.rec.payload.subarray(0, rig.rec.length));
  // Packs by anyone else (a stream, a listed object): msgpackr continues in its last buffer unless moved on.
  for (let i = 0; i < 20; i++) {
    const out = msgpack.pack({ type: 'ADDED', object: { metadata: { name: `other-${i}` }, pad: 'q'.repeat(900) } });
    assert.ok(!(out.buffer instanceof SharedArrayBuffer), 'a pack elsewhere lands in msgpackr’s own buffer');
  }
  assert.equal(rig.reader.read(ev!.index, rig.rec), ReadStatus.OK);
  assert.deepEqual(Buffer.from(rig.rec.payload.subarray(0, rig.rec.length)), before, 'the ring payload is intact');
});

test('ring mirror: a frame that outgrows its reserved room (a long string, a grown object) is placed again and exact', () => {
  const rig = mirrorRig(256);
  const frames = new Map<string, { object: KubeObject; frame: FrameSource }>();
  // Small objects first, so their rooms are small; then every tenth grows 40-fold (and a non-ASCII string).
  mirrorRun(rig, frames, 0, 100, () => 'a');
  const events = mirrorRun(rig, frames, 100, 200, (i) => (i % 10 === 0 ? 'é€'.repeat(3000) : 'b'.repeat(i % 90)));
  for (const ev of events) {
    assert.equal(rig.reader.read(ev.index, rig.rec), ReadStatus.OK);
    const d = decodeRingPayload(rig.unpackr, rig.rec.payload, rig.rec.prevStart, rig.rec.prevLength);
    assert.deepEqual(d.frame, { type: ev.type, object: ev.object });
    assert.deepEqual(d.prevObject, ev.prevObject);
  }
  assert.equal(rig.counts.encodings, 300, 'each event encoded once, spilled or not');
});

/** A pod whose top-level reads (metadata, spec) are counted in `reads.n`. */
function countedPod(name: string, nodeName: string, rv: number, reads: { n: number }): KubeObject {
  const metadata = { namespace: 'ns', name, resourceVersion: String(rv) };
  const spec = { nodeName, pad: 'z'.repeat(300) };
  const o = {};
  Object.defineProperty(o, 'metadata', { enumerable: true, get: () => (reads.n++, metadata) });
  Object.defineProperty(o, 'spec', { enumerable: true, get: () => (reads.n++, spec) });
  return o as KubeObject;
}

test('ring mirror: the previous object is not read again when the mirror carried it (its keys travel with its frame)', () => {
  const { history, mirror, reader, unpackr, rec } = mirrorRig(64);
  let prev: { object: KubeObject; frame: FrameSource; reads: { n: number } } | undefined;
  for (let i = 0; i < 20; i++) {
    const reads = { n: 0 };
    const object = countedPod('p', `n${i % 4}`, i + 1, reads);
    const ev = new WatchCacheEvent(prev ? 'MODIFIED' : 'ADDED', object, prev?.object, i + 1, 0, node);
    history.append(ev);
    const prevReads = prev?.reads.n ?? 0;
    const frame = mirror.appended(ev, prev?.frame)!;
    // Neither its metadata (the exactness check) nor its spec (the indexer) is read: its keys were kept.
    if (prev !== undefined) assert.equal(prev.reads.n, prevReads, `event ${i}: the previous object was read again`);
    assert.equal(reader.read(ev.index, rec), ReadStatus.OK);
    const sel = readRingSelection(rec.payload, 1);
    assert.deepEqual(
      [sel.exact, sel.namespace, sel.name, sel.values[0], sel.prevValues[0]],
      [true, 'ns', 'p', `n${i % 4}`, prev ? `n${(i - 1) % 4}` : undefined],
    );
    assert.deepEqual(
      [rec.nsHash, rec.nameHash, rec.triggerHash, rec.prevTriggerHash],
      [hash32('ns'), hash32('p'), hash32(`n${i % 4}`), prev ? hash32(`n${(i - 1) % 4}`) : 0],
    );
    assert.deepEqual(decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength).frame.object, {
      metadata: { namespace: 'ns', name: 'p', resourceVersion: String(i + 1) },
      spec: { nodeName: `n${i % 4}`, pad: 'z'.repeat(300) },
    });
    prev = { object, frame, reads };
  }
});

test('ring mirror: keys kept for one object are never used for another previous object', () => {
  const { history, mirror, reader, rec } = mirrorRig(64);
  const o1: KubeObject = { metadata: { namespace: 'ns', name: 'p', resourceVersion: '1' }, spec: { nodeName: 'n1' } };
  const e1 = new WatchCacheEvent('ADDED', o1, undefined, 1, 0, node);
  history.append(e1);
  const f1 = mirror.appended(e1, undefined)!;
  // The store's own previous object (another object than the one frame 1 carried, e.g. after a relist).
  const other: KubeObject = {
    metadata: { namespace: 'ns2', name: 'q', resourceVersion: '1' },
    spec: { nodeName: 'n9' },
  };
  const o2: KubeObject = { metadata: { namespace: 'ns', name: 'p', resourceVersion: '2' }, spec: { nodeName: 'n2' } };
  const e2 = new WatchCacheEvent('MODIFIED', o2, other, 2, 0, node);
  history.append(e2);
  mirror.appended(e2, f1);
  assert.equal(reader.read(e2.index, rec), ReadStatus.OK);
  const sel = readRingSelection(rec.payload, 1);
  assert.equal(sel.prevValues[0], 'n9', "the previous object's own value");
  assert.equal(sel.exact, false, "namespace and name differ from the previous object's");
  assert.equal(rec.prevTriggerHash, hash32('n9'));
});
