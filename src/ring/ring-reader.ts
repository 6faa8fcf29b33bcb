/**
 * History ring reader: everything a thread that reads the beta mode's event
 * history needs (the sync worker, remote watch consumers, and the writer's
 * own thread), and nothing of the writer. Built from a HistoryRingHandle
 * (structured-cloneable); the layout and the seqlock rules it relies on are
 * src/ring/ring-layout.ts.
 *
 * - Readers get a copy: read() copies the payload into the caller's
 *   RingRecord.payload (reused; replaced by a larger buffer only when too
 *   small) and validates afterwards, so no torn or reused bytes ever escape.
 * - Views over the growable buffers are fixed-length and re-made after a
 *   grow (V8 11.3 / Node 20 accesses length-tracking views ~20× slower).
 */
import { Packr } from 'msgpackr';
import type { ChangeType, KubeObject } from '../core/types.js';
import {
  MAGIC,
  LAYOUT,
  H_MAGIC,
  H_LAYOUT,
  H_HSEQ,
  H_PUBLISH_COUNT,
  H_WAITERS,
  H_CAPACITY,
  H_ARENA_SIZE,
  HF_PUBLISHED,
  HF_OLDEST,
  HF_FLOOR_RV,
  HF_LAST_RV,
  SLOT_I32,
  SLOT_F64,
  S_SEQ,
  S_TYPE,
  SF_ABS,
  SF_RV,
  S_NS,
  S_NAME,
  S_TRIGGER,
  S_PREV_TRIGGER,
  S_OFFSET,
  S_LENGTH,
  S_PREV_OFFSET,
  S_PREV_LENGTH,
  TYPE_HAS_PREV,
  TYPE_CODE_MASK,
  align4,
  type HistoryRingHandle,
} from './ring-layout.js';
import { backoff, waitAsync, type WaitOutcome } from './shared-memory.js';

/** Result of a reader's read/readMeta. */
export const ReadStatus = {
  /** The record was filled and validated. */
  OK: 0,
  /** The index is older than the oldest kept event: its slot or bytes were (or may have been) reused. */
  OVERWRITTEN: 1,
  /** The index has not been published yet. */
  NOT_PUBLISHED: 2,
} as const;
export type ReadStatus = (typeof ReadStatus)[keyof typeof ReadStatus];

/** What readInto copies. */
const NO_PAYLOAD = 0;
const PAYLOAD = 1;
const PAYLOAD_AND_PREV = 2;
/** Payload bytes [sliceFrom, sliceFrom + sliceLength) only (readPayloadBytes). */
const SLICE = 3;

/** indexAfterRV's answer when the RV predates what the ring still holds (→ 410 Expired). */
export const TOO_OLD = -1;

/** The event a payload encodes (what appendEvent packs and decode unpacks). */
export interface RingEvent {
  type: ChangeType;
  object: KubeObject;
  prevObject?: KubeObject;
}

/** A reader's output record. Create one with {@link createRingRecord} and reuse it. */
export interface RingRecord {
  absIndex: number;
  rv: number;
  /** EventTypeCode. */
  type: number;
  /** The event carries a previous object (AppendMeta.hasPrev). */
  hasPrev: boolean;
  nsHash: number;
  nameHash: number;
  triggerHash: number;
  prevTriggerHash: number;
  /** Payload length in bytes. */
  length: number;
  /**
   * After read(): the payload copy is payload[0 .. length). The buffer is
   * reused across reads and replaced by a larger one when too small. readMeta()
   * leaves it untouched.
   */
  payload: Uint8Array;
  /**
   * Bytes of the previous object's frame stored apart from the payload's
   * frame (the slot's PREV words); 0: none.
   */
  prevLength: number;
  /**
   * After read(): where those bytes are in `payload` (inside the payload
   * copy, or copied right after it from the earlier payload they belong to);
   * -1 when not read (readMeta, or read(…, false) of a referenced range).
   */
  prevStart: number;
}

/** Result of a reader's decode. */
export type DecodeResult =
  | { status: typeof ReadStatus.OK; absIndex: number; rv: number; event: RingEvent }
  | { status: typeof ReadStatus.OVERWRITTEN | typeof ReadStatus.NOT_PUBLISHED; absIndex: number };

/** A fresh, reusable output record for readMeta/read. */
export function createRingRecord(payloadBytes = 1024): RingRecord {
  return {
    absIndex: -1,
    rv: 0,
    type: 0,
    hasPrev: false,
    nsHash: 0,
    nameHash: 0,
    triggerHash: 0,
    prevTriggerHash: 0,
    length: 0,
    payload: new Uint8Array(payloadBytes),
    prevLength: 0,
    prevStart: -1,
  };
}

/**
 * A reader: any thread, any number of them, built from a HistoryRingHandle
 * (structured-cloneable: send it with postMessage or workerData). One reader
 * object per thread; it is not itself thread-safe and keeps scratch state.
 *
 * A reference popped from an SPSC channel is an absolute index into this ring:
 * read()/decode() of an index whose event has been evicted (slot or bytes
 * reused) answer OVERWRITTEN, never torn or foreign bytes, so the watcher gets
 * its 410 Expired instead of wrong data.
 */
export class HistoryRingReader {
  private readonly handle: HistoryRingHandle;
  private readonly hI: Int32Array;
  private readonly hF: Float64Array;
  // Fixed-length views, re-made when the writer has grown the buffers (see HistoryRing).
  private sI: Int32Array;
  private sF: Float64Array;
  private arena: Uint8Array;
  private arena32: Int32Array;
  /** Int32 view of the last out.payload seen (re-made only when the caller's buffer changes). */
  private dst32: Int32Array = new Int32Array(0);
  private dst32Of: Uint8Array | null = null;
  private readonly unpackr = new Packr({ useRecords: false });
  private readonly scratch: RingRecord = createRingRecord();

  // Last consistent header snapshot (loadHeader). PUBLISHED and OLDEST only
  // grow, so a stale snapshot is a safe lower bound for both.
  private hPublished = 0;
  private hOldest = 0;
  private hFloor = 0;
  private hLast = 0;
  private statRetries = 0;

  constructor(handle: HistoryRingHandle) {
    this.handle = handle;
    this.hI = new Int32Array(handle.header);
    this.hF = new Float64Array(handle.header);
    if (this.hI[H_MAGIC] !== MAGIC || this.hI[H_LAYOUT] !== handle.layout || handle.layout !== LAYOUT) {
      throw new Error(`history ring: handle does not describe a layout-${LAYOUT} history ring`);
    }
    const { index, arena } = handle;
    this.sI = new Int32Array(index, 0, index.byteLength >> 2);
    this.sF = new Float64Array(index, 0, index.byteLength >> 3);
    this.arena = new Uint8Array(arena, 0, arena.byteLength);
    this.arena32 = new Int32Array(arena, 0, arena.byteLength >> 2);
    this.loadHeader();
  }

  /** Indices below this are published. */
  get publishedIndex(): number {
    this.loadHeader();
    return this.hPublished;
  }
  /** Oldest index still held. */
  get oldestIndex(): number {
    this.loadHeader();
    return this.hOldest;
  }
  /** RV of the last evicted event (or the start RV): every event above it is held. */
  get floorRV(): number {
    this.loadHeader();
    return this.hFloor;
  }
  /** RV of the newest published event (the start RV when none). */
  get lastRV(): number {
    this.loadHeader();
    return this.hLast;
  }
  /** Current slot capacity. */
  get capacity(): number {
    return Atomics.load(this.hI, H_CAPACITY);
  }
  /** Current arena size in bytes. */
  get arenaBytes(): number {
    return Atomics.load(this.hI, H_ARENA_SIZE);
  }
  /** Publish counter: pass it to waitForPublish/waitForPublishAsync. */
  get publishCount(): number {
    return Atomics.load(this.hI, H_PUBLISH_COUNT);
  }
  /** Reads of this reader that found a slot changing under them and went round again (a statistic). */
  get retries(): number {
    return this.statRetries;
  }

  /** Slot metadata of `absIndex` into `out` (payload untouched). Allocation-free. */
  readMeta(absIndex: number, out: RingRecord): ReadStatus {
    return this.readInto(absIndex, out, NO_PAYLOAD);
  }

  /**
   * Metadata plus a validated COPY of the payload into out.payload[0 .. out.length)
   * and, with `withPrev` (default), of the previous object's bytes (out.prevStart,
   * out.prevLength) when the slot references them in an earlier payload.
   * Allocation-free unless out.payload is too small (then replaced by a larger buffer).
   */
  read(absIndex: number, out: RingRecord, withPrev = true): ReadStatus {
    return this.readInto(absIndex, out, withPrev ? PAYLOAD_AND_PREV : PAYLOAD);
  }

  /**
   * Metadata plus a validated COPY of payload bytes [from, from + length)
   * into out.payload[0 .. length) (out.length = length), as read() validates
   * the whole payload: a reader that needs a few bytes of a large payload
   * copies only those (the sync worker reads the selection section of each
   * scanned event). The range must lie inside the payload (RangeError).
   */
  readPayloadBytes(absIndex: number, out: RingRecord, from: number, length: number): ReadStatus {
    this.sliceFrom = from;
    this.sliceLength = length;
    return this.readInto(absIndex, out, SLICE);
  }
  private sliceFrom = 0;
  private sliceLength = 0;

  /** Read and decode one event. Allocates (the decoded objects). */
  decode(absIndex: number): DecodeResult {
    const rec = this.scratch;
    const st = this.readInto(absIndex, rec, PAYLOAD);
    if (st !== ReadStatus.OK) return { status: st, absIndex };
    const event = this.unpackr.unpack(rec.payload.subarray(0, rec.length)) as RingEvent;
    return { status: ReadStatus.OK, absIndex, rv: rec.rv, event };
  }

  /** The RV at `absIndex`, or NaN when not readable (overwritten / not published). */
  rvAt(absIndex: number): number {
    return this.readInto(absIndex, this.scratch, NO_PAYLOAD) === ReadStatus.OK ? this.scratch.rv : NaN;
  }

  /**
   * First absolute index whose RV is > rv (publishedIndex when there is none
   * yet), or TOO_OLD when events after rv have already been evicted
   * (rv < floorRV). The index may be evicted by the time it is read: read()
   * then answers OVERWRITTEN.
   *
   * `hint`: where the caller expects the answer (e.g. one past the last
   * event it read, for a position at that event's RV). Checked with at most
   * two slot reads (the RV before it is ≤ rv, its own is > rv); a wrong or
   * unreadable hint only costs those reads before the binary search. The
   * sync worker opens an interval per cohort and looks up its resync point
   * per pass: a search each was ~17 slot reads (issue 13, deliverable 4).
   */
  indexAfterRV(rv: number, hint = -1): number {
    for (;;) {
      this.loadHeader();
      if (rv < this.hFloor) return TOO_OLD;
      let lo = this.hOldest;
      let hi = this.hPublished;
      if (hint >= lo && hint <= hi && this.answers(hint, rv, lo, hi)) return hint;
      hint = -1; // checked once: a retry after an eviction searches
      let ok = true;
      while (lo < hi) {
        const mid = lo + Math.floor((hi - lo) / 2);
        const r = this.rvAt(mid);
        this.statSearchReads++;
        if (r !== r) {
          ok = false; // evicted under us: the floor moved, start over
          break;
        }
        if (r > rv) hi = mid;
        else lo = mid + 1;
      }
      if (ok) return lo;
    }
  }

  /**
   * `at` is indexAfterRV(rv) within [lo, hi] (the held, published range):
   * the event before it (if held) has RV ≤ rv, its own (if published) > rv.
   * RVs grow with the index, so that pins the first index above rv. False
   * when it is not, or a slot it needs was evicted meanwhile.
   */
  private answers(at: number, rv: number, lo: number, hi: number): boolean {
    if (at > lo) {
      this.statHintReads++;
      const before = this.rvAt(at - 1);
      if (!(before <= rv)) return false; // also NaN: evicted under us
    }
    if (at < hi) {
      this.statHintReads++;
      const own = this.rvAt(at);
      if (!(own > rv)) return false;
    }
    return true;
  }

  /** Slot reads indexAfterRV spent on binary searches (a statistic). */
  get searchReads(): number {
    return this.statSearchReads;
  }
  private statSearchReads = 0;

  /** Slot reads indexAfterRV spent checking hints (a statistic). */
  get hintReads(): number {
    return this.statHintReads;
  }
  private statHintReads = 0;

  /**
   * Block until the publish counter differs from `seenCount` or the timeout
   * elapses. For worker threads (on the main thread it blocks the event loop).
   */
  waitForPublish(seenCount: number, timeoutMs?: number): WaitOutcome {
    const hI = this.hI;
    // Register first, then re-check (pairs with publish(): Atomics on both sides).
    Atomics.add(hI, H_WAITERS, 1);
    try {
      if (Atomics.load(hI, H_PUBLISH_COUNT) !== seenCount) return 'not-equal';
      return Atomics.wait(hI, H_PUBLISH_COUNT, seenCount, timeoutMs === undefined ? Infinity : timeoutMs);
    } finally {
      Atomics.sub(hI, H_WAITERS, 1);
    }
  }

  /**
   * Resolve when the publish counter differs from `seenCount` or the timeout
   * elapses (Atomics.waitAsync). keepAlive: see shared-memory.ts waitAsync.
   */
  async waitForPublishAsync(seenCount: number, timeoutMs?: number, keepAlive = true): Promise<WaitOutcome> {
    const hI = this.hI;
    Atomics.add(hI, H_WAITERS, 1);
    try {
      if (Atomics.load(hI, H_PUBLISH_COUNT) !== seenCount) return 'not-equal';
      return await waitAsync(hI, H_PUBLISH_COUNT, seenCount, timeoutMs, keepAlive);
    } finally {
      Atomics.sub(hI, H_WAITERS, 1);
    }
  }

  // -- internals -------------------------------------------------------------

  /** Consistent snapshot of the Float64 header words (header seqlock). */
  private loadHeader(): void {
    const hI = this.hI;
    const hF = this.hF;
    for (let attempt = 0; ; attempt++) {
      const s1 = Atomics.load(hI, H_HSEQ);
      if ((s1 & 1) === 0) {
        const published = hF[HF_PUBLISHED]!;
        const oldest = hF[HF_OLDEST]!;
        const floor = hF[HF_FLOOR_RV]!;
        const last = hF[HF_LAST_RV]!;
        // INVARIANT (torn-read detection, header): same even HSEQ before and after.
        if (Atomics.load(hI, H_HSEQ) === s1) {
          this.hPublished = published;
          this.hOldest = oldest;
          this.hFloor = floor;
          this.hLast = last;
          return;
        }
      }
      backoff(attempt);
    }
  }

  /**
   * The next slot read makes its index views again, as after the writer grew the index. The sync
   * worker's warm-up does this every round, so that path of the read has V8 feedback before a real
   * ring's grown index takes it first in a worker's first catch-up, where it threw readInto's optimized
   * code away (issue 13, deliverable 4). The first read of a new reader is too early for that: V8
   * records no feedback in a function's first calls.
   */
  dropIndexViews(): void {
    this.sI = new Int32Array(this.handle.index, 0, 0);
    this.sF = new Float64Array(this.handle.index, 0, 0);
  }

  private refreshIndexViews(): void {
    const index = this.handle.index;
    this.sI = new Int32Array(index, 0, index.byteLength >> 2);
    this.sF = new Float64Array(index, 0, index.byteLength >> 3);
  }

  private refreshArenaViews(): void {
    const arena = this.handle.arena;
    this.arena = new Uint8Array(arena, 0, arena.byteLength);
    this.arena32 = new Int32Array(arena, 0, arena.byteLength >> 2);
  }

  private readInto(absIndex: number, out: RingRecord, what: number): ReadStatus {
    if (!Number.isSafeInteger(absIndex)) throw new RangeError(`history ring: index ${absIndex} is not an integer`);
    for (let attempt = 0; ; attempt++) {
      // The cached snapshot is a lower bound of PUBLISHED and OLDEST: reload
      // only when it cannot decide, and always on a retry.
      if (attempt > 0 || !(absIndex < this.hPublished)) this.loadHeader();
      if (absIndex < this.hOldest) return ReadStatus.OVERWRITTEN;
      if (!(absIndex < this.hPublished)) return ReadStatus.NOT_PUBLISHED;
      // INVARIANT (publish ordering): PUBLISHED was loaded by Atomics (HSEQ)
      // before any slot word below, so the slot's stores are visible.
      const cap = Atomics.load(this.hI, H_CAPACITY);
      const slot = absIndex % cap;
      const b = slot * SLOT_I32;
      const fb = slot * SLOT_F64;
      if (b + SLOT_I32 > this.sI.length) this.refreshIndexViews(); // the writer grew the index
      const sI = this.sI;
      const sF = this.sF;
      const seq1 = Atomics.load(sI, b + S_SEQ);
      // INVARIANT (overwritten detection): the slot must hold exactly absIndex;
      // anything else is another event (reused slot, or a stale layout): retry.
      if ((seq1 & 1) === 0 && sF[fb + SF_ABS] === absIndex) {
        const rv = sF[fb + SF_RV]!;
        const type = sI[b + S_TYPE]!;
        const ns = sI[b + S_NS]!;
        const name = sI[b + S_NAME]!;
        const trig = sI[b + S_TRIGGER]!;
        const prev = sI[b + S_PREV_TRIGGER]!;
        const off = sI[b + S_OFFSET]!;
        const len = sI[b + S_LENGTH]!;
        const pOff = sI[b + S_PREV_OFFSET]!;
        const pLen = sI[b + S_PREV_LENGTH]!;
        let pStart = -1;
        let bytesOk = true;
        let outLength = len;
        if (what === SLICE) {
          const from = this.sliceFrom;
          outLength = this.sliceLength;
          const inRange = from >= 0 && outLength >= 0 && from + outLength <= len;
          this.reserve(out, outLength);
          bytesOk = inRange && (outLength === 0 || this.copyBytes(off + from, outLength, out.payload, 0));
          if (!inRange && Atomics.load(sI, b + S_SEQ) === seq1)
            throw new RangeError(
              `history ring: bytes [${from}, ${from + outLength}) are not in the ${len}-byte payload`,
            );
        } else if (what !== NO_PAYLOAD) {
          const inside = pLen > 0 && pOff >= off && pOff + pLen <= off + len;
          const apart = pLen > 0 && !inside && what === PAYLOAD_AND_PREV;
          const at = align4(len);
          this.reserve(out, apart ? at + pLen : len);
          bytesOk = this.copyBytes(off, len, out.payload, 0);
          if (inside) pStart = pOff - off;
          else if (apart && bytesOk) {
            // Order rule 5: the referenced bytes stay unreused while this slot is held, so the
            // checks below (this slot's SEQ, then OLDEST ≤ absIndex) validate them too.
            bytesOk = this.copyBytes(pOff, pLen, out.payload, at);
            pStart = at;
          }
        }
        // INVARIANT (torn-read detection): same even SEQ → one consistent slot version.
        if (Atomics.load(sI, b + S_SEQ) === seq1 && bytesOk) {
          // INVARIANT (overwritten detection, arena): OLDEST is advanced before
          // an event's bytes are reused, so OLDEST ≤ absIndex now means every
          // byte copied above was still this event's.
          this.loadHeader();
          if (absIndex < this.hOldest) return ReadStatus.OVERWRITTEN;
          out.absIndex = absIndex;
          out.rv = rv;
          out.type = type & TYPE_CODE_MASK;
          out.hasPrev = (type & TYPE_HAS_PREV) !== 0;
          out.nsHash = ns;
          out.nameHash = name;
          out.triggerHash = trig;
          out.prevTriggerHash = prev;
          out.length = outLength;
          out.prevLength = pLen;
          out.prevStart = pStart;
          return ReadStatus.OK;
        }
      }
      // The slot changed under us, is mid-write, or holds another index: either
      // the event was evicted (the reloaded header says so next round) or the
      // layout moved (capacity change or arena relocation; finite): retry.
      this.statRetries++;
      backoff(attempt);
    }
  }

  /** out.payload holds at least `n` bytes (replaced by a larger buffer when not). */
  private reserve(out: RingRecord, n: number): void {
    if (out.payload.length < n) out.payload = new Uint8Array(Math.max(n, out.payload.length * 2));
  }

  /** Copy arena[off, off+len) into dst[at ..] (room reserved); false when the words were inconsistent. */
  private copyBytes(off: number, len: number, dst: Uint8Array, at: number): boolean {
    if (off < 0 || len < 1) return false;
    if (off + len > this.arena.length) {
      this.refreshArenaViews(); // the writer grew the arena
      if (off + len > this.arena.length) return false; // torn words: SEQ will have moved
    }
    const src = this.arena;
    let i = 0;
    // Word copy (payloads and referenced frames start 4-aligned). Plain JS loops:
    // Buffer#copy and subarray() would allocate a view per read.
    if (((dst.byteOffset + at) & 3) === 0 && (off & 3) === 0) {
      if (this.dst32Of !== dst) {
        this.dst32 = new Int32Array(dst.buffer, dst.byteOffset, dst.length >> 2);
        this.dst32Of = dst;
      }
      const d32 = this.dst32;
      const s32 = this.arena32;
      const words = len >> 2;
      const o32 = off >> 2;
      const a32 = at >> 2;
      for (; i < words; i++) d32[a32 + i] = s32[o32 + i]!;
      i = words << 2;
    }
    for (; i < len; i++) dst[at + i] = src[off + i]!;
    return true;
  }
}
