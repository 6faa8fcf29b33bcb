/**
 * History ring: previous objects by reference (ring-layout.ts order rule 5).
 * A slot's previous object is a byte range of the earlier payload that
 * carried it; these tests drive the writer through index wraps, arena wraps,
 * arena growth with relocation, capacity changes, maxArenaBytes and clear(),
 * and check after every step that every held event reads back its own bytes
 * and exactly the previous event's frame. The real second-thread race is in
 * history-ring.test.ts ('refs').
 */
import test, { describe } from 'node:test';
import assert from 'node:assert/strict';
import { EventTypeCode } from '../../src/ring/ring-layout.js';
import { ReadStatus, createRingRecord, type HistoryRingReader } from '../../src/ring/ring-reader.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import {
  REF_FRAME_START,
  appendRef,
  refCheck,
  refFrameLenOf,
  refPayload,
  refPrevTable,
  rvOf,
} from './ring-fixtures.js';

const rec = createRingRecord(16);

/** Held events [from, published) read back exactly (payload and previous object). */
function checkHeld(ring: HistoryRing, reader: HistoryRingReader, prev: Int32Array, from = ring.oldestIndex): void {
  for (let abs = Math.max(from, ring.oldestIndex); abs < ring.publishedIndex; abs++) {
    assert.equal(reader.read(abs, rec), ReadStatus.OK, `event ${abs} (oldest ${ring.oldestIndex})`);
    assert.equal(rec.rv, rvOf(abs));
    const err = refCheck(abs, prev[abs]!, rec);
    if (err !== null) assert.fail(err);
  }
  if (ring.oldestIndex > 0) assert.equal(reader.read(ring.oldestIndex - 1, rec), ReadStatus.OVERWRITTEN);
}

interface Drive {
  events: number;
  keys: number;
  /** Every how many appends all held events are checked (the newest 8 are checked after each). */
  fullCheckEvery?: number;
  /** Before appending `abs`: capacity changes, clear(), … */
  step?: (ring: HistoryRing, abs: number) => void;
  /** Copy instead of referencing (as the mirror does for frames no held slot carries). */
  copy?: (abs: number) => boolean;
  /** Written as an in-place pack that did not fit its first reservation (appendRef's `spill`). */
  spill?: (abs: number) => boolean;
}

function drive(ring: HistoryRing, d: Drive): { refs: number; maxOrphans: number } {
  const reader = ring.reader();
  const prev = refPrevTable(d.events, d.keys);
  let refs = 0;
  let maxOrphans = 0;
  for (let abs = 0; abs < d.events; abs++) {
    d.step?.(ring, abs);
    if (appendRef(ring, abs, prev[abs]!, d.copy?.(abs) ?? false, d.spill?.(abs) ?? false)) refs++;
    ring.publish();
    maxOrphans = Math.max(maxOrphans, ring.orphans);
    checkHeld(ring, reader, prev, abs % (d.fullCheckEvery ?? 64) === 0 ? 0 : abs - 8);
  }
  checkHeld(ring, reader, prev, 0);
  return { refs, maxOrphans };
}

describe('history ring: previous objects by reference', () => {
  test('below maxArenaBytes: the arena grows (relocating wrapped laps) and never evicts for bytes; all exact', () => {
    // Few keys: previous events are recent. Many keys (> capacity): they are often evicted first, and
    // their frames stay as orphans while the referencing slot is held.
    for (const keys of [3, 40, 400]) {
      const ring = new HistoryRing({ capacity: 64, maxCapacity: 256, arenaBytes: 2048, maxArenaBytes: 1 << 22 });
      const { refs, maxOrphans } = drive(ring, {
        events: 4000,
        keys,
        step: (r, abs) => {
          if (abs % 700 === 350) r.setCapacity(r.capacity === 64 ? 256 : 64);
        },
      });
      assert.equal(ring.arenaEvictions, 0, `keys=${keys}: no event evicted for bytes while the arena could grow`);
      assert.equal(ring.prevCarries, 0);
      assert.ok(refs > 0 && ring.prevReferences === refs, `keys=${keys}: references made (${refs})`);
      assert.ok(ring.arenaGrowths > 0, `keys=${keys}: the arena grew`);
      if (keys >= 40) assert.ok(maxOrphans > 0, `keys=${keys}: frames outlived their slots (${maxOrphans})`);
      // Referenced, not copied: the bytes written are about one frame per event, not two.
      if (keys === 3) assert.ok(ring.bytesWritten < 4000 * 800, `bytes written ${ring.bytesWritten}`);
    }
  });

  test('at maxArenaBytes: covered referenced bytes evict their referrer first (FIFO) or are carried; all exact', () => {
    for (const keys of [2, 7, 18]) {
      const ring = new HistoryRing({ capacity: 128, arenaBytes: 16 * 1024, maxArenaBytes: 16 * 1024 });
      let oldest = 0;
      drive(ring, {
        events: 3000,
        keys,
        step: (r) => {
          assert.ok(r.oldestIndex >= oldest, 'OLDEST only grows');
          oldest = r.oldestIndex;
        },
      });
      assert.ok(ring.arenaEvictions > 0, `keys=${keys}: the arena was the limit`);
      assert.equal(ring.arenaGrowths, 0);
      assert.ok(ring.prevReferences > 0, `keys=${keys}: references made`);
    }
    // A tiny arena where an event's own referenced frame is what its payload covers: carried.
    const tiny = new HistoryRing({ capacity: 64, arenaBytes: 2048, maxArenaBytes: 2048 });
    drive(tiny, { events: 2000, keys: 1 });
    assert.ok(tiny.prevCarries > 0, `carried (${tiny.prevCarries})`);
  });

  test('a payload that did not fit its reservation is placed again at its exact length, its referenced frame carried; all exact', () => {
    // Below maxArenaBytes (growth, relocation), at it (evictions, orphans: many keys on a small index),
    // and with copies going as prevBytes after the payload.
    const rings = [
      { ring: new HistoryRing({ capacity: 64, arenaBytes: 2048, maxArenaBytes: 1 << 22 }), keys: 40 },
      { ring: new HistoryRing({ capacity: 128, arenaBytes: 16 * 1024, maxArenaBytes: 16 * 1024 }), keys: 7 },
      { ring: new HistoryRing({ capacity: 16, arenaBytes: 64 * 1024, maxArenaBytes: 64 * 1024 }), keys: 40 },
    ];
    for (const { ring, keys } of rings) {
      drive(ring, { events: 2500, keys, copy: (abs) => abs % 7 === 0, spill: (abs) => abs % 3 !== 1 });
      // A spilled payload that referenced its previous object carries a copy of it instead.
      assert.ok(ring.prevCarries > 0, `keys=${keys}: spilled payloads carried their previous frames`);
      assert.ok(ring.prevReferences > 0, `keys=${keys}: the payloads that fit kept their references`);
    }
  });

  test('copies and references mix; withPrev=false leaves a referenced range unread', () => {
    const ring = new HistoryRing({ capacity: 32, maxCapacity: 64, arenaBytes: 4096, maxArenaBytes: 1 << 20 });
    drive(ring, { events: 1500, keys: 10, copy: (abs) => abs % 3 === 0 });
    const reader = ring.reader();
    const prev = refPrevTable(1500, 10);
    let sawRef = false;
    let sawCopy = false;
    for (let abs = ring.oldestIndex; abs < ring.publishedIndex; abs++) {
      if (prev[abs]! < 0) continue;
      assert.equal(reader.read(abs, rec, false), ReadStatus.OK);
      assert.equal(rec.prevLength, refFrameLenOf(prev[abs]!));
      if (rec.prevStart < 0) sawRef = true;
      else {
        sawCopy = true; // a copy is inside the payload: there anyway
        assert.equal(refCheck(abs, prev[abs]!, rec), null);
      }
    }
    assert.ok(sawRef && sawCopy);
  });

  test('clear(): nothing older can be referenced; a second reference to one payload is refused', () => {
    const ring = new HistoryRing({ capacity: 16, arenaBytes: 8192, maxArenaBytes: 1 << 20 });
    const reader = ring.reader();
    const prev = refPrevTable(200, 4);
    for (let abs = 0; abs < 100; abs++) appendRef(ring, abs, prev[abs]!);
    ring.publish();
    checkHeld(ring, reader, prev);
    const m = {
      rv: rvOf(100),
      type: EventTypeCode.MODIFIED,
      nsHash: 1,
      nameHash: 1,
      triggerHash: 0,
      prevTriggerHash: 0,
      hasPrev: true,
      prevStart: REF_FRAME_START,
    };
    // Event 99 is referenced by nobody yet, 98's frame may be (prev[99] === 98 or not): find a referenced one.
    const referenced = prev[99]!;
    assert.ok(referenced >= ring.oldestIndex);
    const { bytes } = refPayload(100, -1);
    assert.throws(
      () => ring.append({ ...m, prevAbs: referenced, prevLength: refFrameLenOf(referenced) }, bytes),
      /referenced already/,
    );
    assert.throws(() => ring.append({ ...m, prevAbs: ring.oldestIndex - 1, prevLength: 10 }, bytes), /not in event/);
    ring.clear(rvOf(99));
    assert.equal(ring.orphans, 0);
    assert.throws(() => ring.append({ ...m, prevAbs: 99, prevLength: refFrameLenOf(99) }, bytes), /not in event/);
    // After the clear the driver copies (nothing held), and everything reads back.
    for (let abs = 100; abs < 200; abs++) appendRef(ring, abs, prev[abs]!);
    ring.publish();
    checkHeld(ring, reader, prev);
  });
});
