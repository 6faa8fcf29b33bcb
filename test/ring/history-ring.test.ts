/**
 * History ring: unit tests (append/publish/read, wrap, arena policy, growth,
 * indexAfterRV, oversize payloads) and real second-thread tests (a reader
 * worker racing a writer that wraps the ring many times).
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import test, { describe } from 'node:test';
import assert from 'node:assert/strict';
import { EventTypeCode, eventTypeName } from '../../src/ring/ring-layout.js';
import { HistoryRingReader, ReadStatus, TOO_OLD, createRingRecord } from '../../src/ring/ring-reader.js';
import { HistoryRing, type AppendMeta } from '../../src/ring/ring-writer.js';
import { NO_VALUE_HASH, hash32 } from '../../src/ring/hash32.js';
import { appendRef, checkEvent, makeEvent, namespaceOf, refPrevTable, rvOf, typeCodeOf } from './ring-fixtures.js';
import type { ReaderWorkerData, ReaderWorkerResult } from './history-ring-reader-worker.js';

function appendRange(ring: HistoryRing, from: number, to: number, publishEach = true): void {
  for (let abs = from; abs < to; abs++) {
    const got = ring.appendEvent(makeEvent(abs), { rv: rvOf(abs) });
    assert.equal(got, abs);
    if (publishEach) ring.publish();
  }
}

function meta(rv: number): AppendMeta {
  return { rv, type: EventTypeCode.MODIFIED, nsHash: 1, nameHash: 2, triggerHash: 0, prevTriggerHash: 0 };
}

function bytes(len: number, fill: number): Uint8Array {
  return new Uint8Array(len).fill(fill & 255);
}

/** Every held index reads back exactly; everything below oldest is OVERWRITTEN. */
function assertAllIntact(ring: HistoryRing, reader: HistoryRingReader): void {
  for (let abs = 0; abs < ring.publishedIndex; abs++) {
    const d = reader.decode(abs);
    if (abs < ring.oldestIndex) {
      assert.equal(d.status, ReadStatus.OVERWRITTEN, `index ${abs} should be overwritten`);
    } else {
      assert.equal(d.status, ReadStatus.OK, `index ${abs} should be readable`);
      if (d.status === ReadStatus.OK) assert.equal(checkEvent(abs, d.rv, d.event), null);
    }
  }
}

describe('history ring: single thread', () => {
  test('append, publish, read, decode', () => {
    const ring = new HistoryRing({ capacity: 8 });
    const reader = ring.reader();
    const rec = createRingRecord(4);
    const abs = ring.appendEvent(makeEvent(0), { rv: rvOf(0), trigger: 'node-a' });
    assert.equal(abs, 0);
    assert.equal(reader.read(0, rec), ReadStatus.NOT_PUBLISHED, 'invisible before publish');
    const before = reader.publishCount;
    ring.publish();
    assert.equal(reader.publishCount, before + 1);
    assert.equal(reader.publishedIndex, 1);
    assert.equal(reader.read(0, rec), ReadStatus.OK);
    assert.equal(rec.absIndex, 0);
    assert.equal(rec.rv, rvOf(0));
    assert.equal(eventTypeName(rec.type), 'ADDED');
    assert.equal(rec.nsHash, hash32('ns-0'));
    assert.equal(rec.nameHash, hash32('pod-0'));
    assert.equal(rec.triggerHash, hash32('node-a'));
    assert.equal(rec.prevTriggerHash, NO_VALUE_HASH);
    assert.ok(rec.payload.length >= rec.length, 'payload buffer grown to fit');
    const d = reader.decode(0);
    assert.equal(d.status, ReadStatus.OK);
    if (d.status === ReadStatus.OK) {
      assert.equal(checkEvent(0, d.rv, d.event), null);
      assert.deepEqual(d.event, makeEvent(0));
    }
    assert.equal(reader.read(1, rec), ReadStatus.NOT_PUBLISHED);
    assert.equal(reader.lastRV, rvOf(0));
  });

  test('readMeta does not touch the payload; MODIFIED carries prevObject', () => {
    const ring = new HistoryRing({ capacity: 4 });
    appendRange(ring, 0, 2);
    const reader = ring.reader();
    const rec = createRingRecord(8);
    rec.payload.fill(9);
    assert.equal(reader.readMeta(1, rec), ReadStatus.OK);
    assert.equal(rec.type, EventTypeCode.MODIFIED);
    assert.deepEqual([...rec.payload], [9, 9, 9, 9, 9, 9, 9, 9]);
    const d = reader.decode(1);
    assert.ok(d.status === ReadStatus.OK && d.event.prevObject !== undefined);
  });

  test('batch publish: nothing visible until publish(), then all', () => {
    const ring = new HistoryRing({ capacity: 16 });
    appendRange(ring, 0, 10, false);
    const reader = ring.reader();
    assert.equal(reader.publishedIndex, 0);
    ring.publish();
    assert.equal(reader.publishedIndex, 10);
    assertAllIntact(ring, reader);
  });

  test('index wrap: only the last `capacity` events remain, older ones are OVERWRITTEN', () => {
    const ring = new HistoryRing({ capacity: 8, arenaBytes: 64 * 1024 });
    appendRange(ring, 0, 100);
    const reader = ring.reader();
    assert.equal(ring.size, 8);
    assert.equal(reader.oldestIndex, 92);
    assert.equal(reader.floorRV, rvOf(91));
    assertAllIntact(ring, reader);
  });

  test('RVs must not go backwards; empty payloads are rejected', () => {
    const ring = new HistoryRing({ capacity: 4 });
    ring.append(meta(10), bytes(3, 1));
    ring.append(meta(10), bytes(3, 2)); // equal is allowed
    assert.throws(() => ring.append(meta(9), bytes(3, 3)), RangeError);
    assert.throws(() => ring.append(meta(11), new Uint8Array(0)), RangeError);
    assert.throws(() => ring.append(meta(2 ** 53), bytes(1, 1)), RangeError);
  });

  test('arena wrap with varied payload sizes (no arena growth): bytes always intact', () => {
    // 256 slots but a 4 KiB arena: the arena is the binding limit, evicting by bytes.
    const ring = new HistoryRing({ capacity: 256, arenaBytes: 4096, maxArenaBytes: 4096 });
    const reader = ring.reader();
    const rec = createRingRecord(16);
    let x = 7;
    const sizes: number[] = [];
    for (let i = 0; i < 3000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
      const len = 1 + (x % 1500);
      sizes.push(len);
      ring.append(meta(i + 1), bytes(len, i));
      ring.publish();
      // Every held event is intact; the index never holds more than the arena can.
      const old = reader.oldestIndex;
      let held = 0;
      for (let abs = old; abs <= i; abs++) {
        assert.equal(reader.read(abs, rec), ReadStatus.OK);
        assert.equal(rec.length, sizes[abs]);
        assert.equal(rec.rv, abs + 1);
        for (let k = 0; k < rec.length; k++) {
          if (rec.payload[k] !== (abs & 255)) assert.fail(`byte ${k} of event ${abs}`);
        }
        held += rec.length;
      }
      assert.ok(held <= 4096);
      if (old > 0) assert.equal(reader.read(old - 1, rec), ReadStatus.OVERWRITTEN);
    }
    assert.ok(ring.arenaEvictions > 0);
    assert.equal(ring.arenaGrowths, 0);
    assert.equal(ring.arenaBytes, 4096);
  });

  test('arena auto-grows (instead of evicting) while the index has room, also when wrapped', () => {
    const ring = new HistoryRing({ capacity: 64, arenaBytes: 2048, maxArenaBytes: 1 << 20 });
    const reader = ring.reader();
    // Fill until the arena wraps under index pressure, then keep going: growth
    // must relocate the wrapped newer lap and lose nothing.
    appendRange(ring, 0, 500);
    assert.ok(ring.arenaGrowths > 0);
    assert.equal(ring.arenaEvictions, 0, 'no event evicted for bytes while the arena could grow');
    assert.equal(ring.size, 64);
    assertAllIntact(ring, reader);
    assert.equal(reader.arenaBytes, ring.arenaBytes);
  });

  test('arena growth while wrapped relocates the newer lap (readers keep reading)', () => {
    // Fill a fixed-size view of the problem: equal 100-byte payloads, arena of 1000 bytes.
    const ring = new HistoryRing({ capacity: 8, maxCapacity: 64, arenaBytes: 1000, maxArenaBytes: 4000 });
    const reader = ring.reader();
    const rec = createRingRecord();
    for (let i = 0; i < 13; i++) {
      ring.append(meta(i + 1), bytes(100, i));
      ring.publish();
    }
    // Index full (8 events at 500..1299 → wrapped at 1000). Capacity ×8 then
    // more events: the arena must grow while its data wraps.
    ring.setCapacity(64);
    for (let i = 13; i < 40; i++) {
      ring.append(meta(i + 1), bytes(100, i));
      ring.publish();
    }
    assert.ok(ring.arenaGrowths >= 1);
    assert.equal(ring.oldestIndex, 5);
    for (let abs = 5; abs < 40; abs++) {
      assert.equal(reader.read(abs, rec), ReadStatus.OK);
      assert.equal(rec.length, 100);
      assert.ok(rec.payload.subarray(0, 100).every((b) => b === abs));
    }
  });

  test('oversize payloads: forced growth up to maxArenaBytes, then a clear RangeError', () => {
    const ring = new HistoryRing({ capacity: 4, arenaBytes: 1024, maxArenaBytes: 8192 });
    const reader = ring.reader();
    const rec = createRingRecord();
    ring.append(meta(1), bytes(100, 1));
    ring.append(meta(2), bytes(3000, 2)); // > arena: forces growth to 4096
    ring.publish();
    assert.equal(ring.arenaBytes, 4096);
    assert.equal(reader.read(0, rec), ReadStatus.OK);
    assert.equal(reader.read(1, rec), ReadStatus.OK);
    assert.equal(rec.length, 3000);
    assert.throws(() => ring.append(meta(3), bytes(8193, 3)), /larger than the arena can grow/);
    // A payload of exactly the whole arena evicts everything else.
    ring.append(meta(3), bytes(8192, 3));
    ring.publish();
    assert.equal(ring.arenaBytes, 8192);
    assert.equal(ring.size, 1);
    assert.equal(reader.read(1, rec), ReadStatus.OVERWRITTEN);
    assert.equal(reader.read(2, rec), ReadStatus.OK);
    assert.equal(rec.length, 8192);
    // maxArenaBytes is rounded down to arenaBytes × 2^k.
    assert.equal(new HistoryRing({ capacity: 1, arenaBytes: 1000, maxArenaBytes: 5000 }).maxArenaBytes, 4000);
  });

  test('growth: setCapacity doubles and halves, keeping every event it may keep', () => {
    const ring = new HistoryRing({ capacity: 100, maxCapacity: 102_400, arenaBytes: 1 << 16 });
    const reader = ring.reader();
    appendRange(ring, 0, 250); // wraps the 100-slot index 2.5 times
    assert.equal(ring.size, 100);
    ring.setCapacity(200);
    assert.equal(reader.capacity, 200);
    assertAllIntact(ring, reader);
    appendRange(ring, 250, 400);
    assert.equal(ring.size, 200);
    assertAllIntact(ring, reader);
    ring.setCapacity(800); // two doublings
    appendRange(ring, 400, 1000);
    assert.equal(ring.size, 800);
    assertAllIntact(ring, reader);
    ring.setCapacity(100); // three halvings: keeps the newest 100
    assert.equal(ring.size, 100);
    assert.equal(reader.oldestIndex, 900);
    assert.equal(reader.floorRV, rvOf(899));
    assertAllIntact(ring, reader);
    appendRange(ring, 1000, 1234);
    assertAllIntact(ring, reader);
    ring.setCapacity(102_400);
    assert.equal(reader.capacity, 102_400);
    appendRange(ring, 1234, 1500);
    assertAllIntact(ring, reader);
    assert.throws(() => ring.setCapacity(300), /2\^±k/);
    assert.throws(() => ring.setCapacity(204_800), /maxCapacity/);
    assert.throws(() => new HistoryRing({ capacity: 100, maxCapacity: 300 }), /2\^k/);
  });

  test('indexAfterRV: first index with a greater RV, TOO_OLD below the floor', () => {
    const ring = new HistoryRing({ capacity: 16, startRV: 5 });
    const reader = ring.reader();
    assert.equal(reader.indexAfterRV(5), 0, 'empty ring: the next index');
    assert.equal(reader.indexAfterRV(4), TOO_OLD);
    appendRange(ring, 0, 10); // RVs 7, 10, 13, ...
    assert.equal(reader.indexAfterRV(5), 0);
    assert.equal(reader.indexAfterRV(6), 0);
    assert.equal(reader.indexAfterRV(7), 1);
    assert.equal(reader.indexAfterRV(8), 1);
    assert.equal(reader.indexAfterRV(rvOf(9)), 10, 'after the newest: publishedIndex');
    assert.equal(reader.indexAfterRV(1e12), 10);
    appendRange(ring, 10, 40); // evicts 0..23
    assert.equal(reader.oldestIndex, 24);
    assert.equal(reader.indexAfterRV(rvOf(22)), TOO_OLD);
    assert.equal(reader.indexAfterRV(rvOf(23)), 24, 'the floor RV itself is still servable');
    assert.equal(reader.indexAfterRV(rvOf(23) + 1), 24);
    assert.equal(reader.indexAfterRV(rvOf(30)), 31);
    // Equal RVs: the first index strictly after.
    const eq = new HistoryRing({ capacity: 8 });
    eq.append(meta(3), bytes(1, 0));
    eq.append(meta(5), bytes(1, 0));
    eq.append(meta(5), bytes(1, 0));
    eq.append(meta(6), bytes(1, 0));
    eq.publish();
    assert.equal(eq.reader().indexAfterRV(5), 3);
    assert.equal(eq.reader().indexAfterRV(4), 1);
  });

  test('clear(startRV) drops everything and moves the floor', () => {
    const ring = new HistoryRing({ capacity: 8 });
    appendRange(ring, 0, 5);
    const reader = ring.reader();
    ring.clear(1000);
    assert.equal(reader.oldestIndex, 5);
    assert.equal(reader.publishedIndex, 5);
    assert.equal(reader.floorRV, 1000);
    assert.equal(reader.lastRV, 1000);
    assert.equal(reader.indexAfterRV(rvOf(4)), TOO_OLD);
    assert.equal(reader.indexAfterRV(1000), 5);
    assert.equal(reader.decode(4).status, ReadStatus.OVERWRITTEN);
    assert.throws(() => ring.append(meta(999), bytes(1, 1)), RangeError);
    ring.append(meta(1001), bytes(1, 1));
    ring.publish();
    assert.equal(reader.indexAfterRV(1000), 5);
    assert.equal(reader.rvAt(5), 1001);
  });

  test('the handle is structured-cloneable and only holds SharedArrayBuffers and numbers', () => {
    const ring = new HistoryRing({ capacity: 4, maxCapacity: 16 });
    appendRange(ring, 0, 3);
    const h = ring.handle;
    for (const v of Object.values(h)) assert.ok(v instanceof SharedArrayBuffer || typeof v === 'number');
    const clone = structuredClone(h);
    const reader = new HistoryRingReader(clone);
    const d = reader.decode(2);
    assert.ok(d.status === ReadStatus.OK && checkEvent(2, d.rv, d.event) === null);
    ring.setCapacity(16); // grow after the clone: still the same memory
    appendRange(ring, 3, 12);
    assert.equal(reader.capacity, 16);
    const d2 = reader.decode(11);
    assert.ok(d2.status === ReadStatus.OK && checkEvent(11, d2.rv, d2.event) === null);
    assert.throws(() => reader.read(1.5, createRingRecord()), RangeError);
  });

  test('waitForPublishAsync resolves on publish', async () => {
    const ring = new HistoryRing({ capacity: 4 });
    const reader = ring.reader();
    const seen = reader.publishCount;
    const timer = setTimeout(() => {
      ring.appendEvent(makeEvent(0), { rv: rvOf(0) });
      ring.publish();
    }, 5);
    const outcome = await reader.waitForPublishAsync(seen, 5000);
    clearTimeout(timer);
    assert.equal(outcome, 'ok');
    assert.equal(reader.publishedIndex, 1);
    assert.equal(await reader.waitForPublishAsync(seen, 10), 'not-equal');
    assert.equal(await reader.waitForPublishAsync(reader.publishCount, 1), 'timed-out');
  });
});

async function runReaderWorker(
  mode: 'hammer' | 'follow' | 'refs',
  events: number,
  ring: HistoryRing,
  writer: (ring: HistoryRing, from: number, to: number) => void,
  refKeys = 0,
): Promise<ReaderWorkerResult> {
  const control = new SharedArrayBuffer(8);
  const ctl = new Int32Array(control);
  ctl[1] = -1;
  const data: ReaderWorkerData = {
    mode,
    handle: ring.handle,
    control,
    maxCapacity: ring.maxCapacity,
    ...(mode === 'refs' ? { refKeys, refEvents: events } : {}),
  };
  const worker = new Worker(new URL('./history-ring-reader-worker.js', import.meta.url), { workerData: data });
  const messages: unknown[] = [];
  const done = new Promise<ReaderWorkerResult>((resolve, reject) => {
    worker.on('message', (m: unknown) => {
      messages.push(m);
      if (m !== 'ready') resolve(m as ReaderWorkerResult);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`reader worker exited with ${code}`)));
  });
  await once(worker, 'message'); // 'ready': the reader is running before we write
  const chunk = 2000;
  for (let from = 0; from < events; from += chunk) {
    writer(ring, from, Math.min(events, from + chunk));
    await new Promise((r) => setImmediate(r)); // let messages flow; the writes race the reader anyway
  }
  Atomics.store(ctl, 1, ring.publishedIndex);
  Atomics.store(ctl, 0, 1);
  const result = await done;
  await worker.terminate();
  return result;
}

describe('history ring: reader thread vs writer thread', () => {
  test('hammered reads while the ring wraps, grows, shrinks and relocates: zero torn reads', async () => {
    const ring = new HistoryRing({ capacity: 64, maxCapacity: 256, arenaBytes: 8 * 1024, maxArenaBytes: 64 * 1024 });
    const events = 150_000;
    let x = 1;
    const result = await runReaderWorker('hammer', events, ring, (r, from, to) => {
      // Encode the chunk first, so the appends below run back to back and
      // overwrite the eviction front as fast as the reader copies it.
      const encoded: Uint8Array[] = [];
      for (let abs = from; abs < to; abs++) encoded.push(r.encode(makeEvent(abs)));
      const m: AppendMeta = { ...meta(0) };
      let abs = from;
      while (abs < to) {
        // Batches of 1..8 events per publish.
        x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
        const end = Math.min(to, abs + 1 + (x % 8));
        for (; abs < end; abs++) {
          m.rv = rvOf(abs);
          m.type = typeCodeOf(abs) as AppendMeta['type'];
          m.nsHash = hash32(namespaceOf(abs));
          m.nameHash = hash32(`pod-${abs}`);
          r.append(m, encoded[abs - from]!);
        }
        r.publish();
        if (abs % 5000 < 8 && abs >= 5000) r.setCapacity(r.capacity === 64 ? 256 : 64);
      }
    });
    assert.equal(result.firstError, null);
    assert.equal(result.torn, 0, 'no torn or foreign payloads');
    assert.equal(result.staleOk, 0, 'evicted indices always answer OVERWRITTEN');
    assert.equal(result.badSearch, 0);
    assert.ok(result.ok > 1000, `reads succeeded (${result.ok})`);
    assert.ok(result.staleReads > 0, 'evicted indices were probed (and all answered OVERWRITTEN)');
    assert.ok(ring.arenaGrowths > 0 && ring.arenaEvictions > 0, 'arena grew and evicted by bytes');
    assert.ok(ring.nextIndex / ring.maxCapacity > 100, 'the ring wrapped many times');
    const reader = ring.reader();
    assert.equal(reader.read(0, createRingRecord()), ReadStatus.OVERWRITTEN);
    assertAllIntact(ring, reader);
    console.log(
      `# hammer: ${JSON.stringify(result)} growths=${ring.arenaGrowths} arenaEvictions=${ring.arenaEvictions}`,
    );
  });

  for (const spill of [false, true])
    test(`previous objects by reference: hammered reads while referenced frames outlive their slots, the arena wraps, grows, relocates and hits its limit${spill ? ', a third of the payloads spilling out of their reservation (scribbled over, placed again)' : ''}: zero torn reads`, async () => {
      const ring = new HistoryRing({ capacity: 64, maxCapacity: 256, arenaBytes: 8 * 1024, maxArenaBytes: 128 * 1024 });
      const events = 100_000;
      const keys = 40;
      const prev = refPrevTable(events, keys);
      let x = 3;
      const result = await runReaderWorker(
        'refs',
        events,
        ring,
        (r, from, to) => {
          let abs = from;
          while (abs < to) {
            x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
            const end = Math.min(to, abs + 1 + (x % 8));
            for (; abs < end; abs++) appendRef(r, abs, prev[abs]!, abs % 11 === 0, spill && abs % 3 === 1);
            r.publish();
            if (abs % 4000 < 8 && abs >= 4000) r.setCapacity(r.capacity === 64 ? 256 : 64);
          }
        },
        keys,
      );
      assert.equal(result.firstError, null);
      assert.equal(result.torn, 0, 'no torn or foreign payload or previous object');
      assert.ok(result.ok > 1000, `reads succeeded (${result.ok})`);
      assert.ok(ring.prevReferences > events / (spill ? 3 : 2), `references (${ring.prevReferences})`);
      if (spill)
        assert.ok(ring.prevCarries > events / 10, `spilled payloads carried their frames (${ring.prevCarries})`);
      assert.ok(ring.arenaGrowths > 0 && ring.arenaEvictions > 0, 'arena grew and then was the limit');
      console.log(
        `# refs${spill ? ' (spills)' : ''}: ${JSON.stringify(result)} growths=${ring.arenaGrowths} arenaEvictions=${ring.arenaEvictions} references=${ring.prevReferences} carries=${ring.prevCarries}`,
      );
    });

  test('an in-order follower parks on the publish counter and sees every event it keeps up with', async () => {
    const ring = new HistoryRing({ capacity: 128, arenaBytes: 128 * 1024 });
    const events = 40_000;
    const result = await runReaderWorker('follow', events, ring, (r, from, to) => {
      for (let abs = from; abs < to; abs++) {
        r.appendEvent(makeEvent(abs), { rv: rvOf(abs) });
        r.publish();
      }
    });
    assert.equal(result.firstError, null);
    assert.equal(result.torn, 0);
    assert.ok(result.followed > 0);
    // Every index was either read in order or skipped by a resume after OVERWRITTEN.
    assert.equal(result.followed + result.skipped, events);
    console.log(`# follow: ${JSON.stringify(result)}`);
  });
});
