/**
 * History ring writer: the main thread's single writer of the beta mode's
 * event history (HistoryRing). Appends each event's payload into the arena
 * and its slot metadata into the index, evicts the oldest events as needed,
 * and publishes with Atomics. The layout and the seqlock rules are
 * src/ring/ring-layout.ts; readers are src/ring/ring-reader.ts.
 *
 * Writer policies:
 *
 * - Growth: growable SharedArrayBuffer (works on Node 20; checked in
 *   platform-floor.md §6) for the index and the arena, so the handle never
 *   changes and a reader in another thread needs no handle exchange. Slot
 *   capacity changes by factors of two (setCapacity), as the history does
 *   (100 .. 102,400, doubling/halving). Doubling C→2C copies the slots whose
 *   home moves (abs % 2C ≥ C) into the new upper half first, then stores the
 *   new CAPACITY, then invalidates the old copies; halving evicts down to C
 *   events, copies the upper-half slots down, stores CAPACITY, invalidates the
 *   upper copies. A reader that used a stale CAPACITY either reads an intact
 *   copy of the same event or sees a mismatch and retries. Growable buffers
 *   cannot shrink: after setCapacity() halves, the memory stays at its
 *   high-water mark (the index is ≤ 64 B × maxCapacity; the arena is bounded by
 *   maxArenaBytes). Releasing memory would need a new ring and a handle
 *   exchange; not done.
 * - Arena policy: before a payload is written, the oldest events whose bytes
 *   it would cover are evicted (OLDEST advanced first). If that would evict
 *   events while the index still has room (the arena, not the event capacity,
 *   is the binding limit), the arena doubles instead, up to maxArenaBytes
 *   (maxArenaBytes is rounded down to arenaBytes × 2^k). A payload larger than
 *   the arena forces growth; one larger than maxArenaBytes is rejected with a
 *   RangeError. When the arena doubles while its data wraps, the newer lap
 *   [0, w) is copied right behind the older lap and its slots' OFFSET (and
 *   PREV_OFFSET) words are rewritten under their seqlocks, so the FIFO stays
 *   contiguous.
 * - Previous objects by reference (order rule 5 of ring-layout.ts): a slot's
 *   previous object may be a byte range of the earlier payload that carried
 *   it (REF_BY marks that payload). FIFO eviction takes the referenced event
 *   first; when it leaves the index while its referrer is held, its range
 *   stays live as an "orphan" (a writer-side queue, oldest first, older than
 *   every held payload). The live ranges in address order from the write
 *   position are: orphans, then held payloads; covering any of them is what
 *   the arena policy above calls eviction: below maxArenaBytes the arena
 *   grows instead; at maxArenaBytes a covered range's referrer is evicted
 *   (with everything older), and an append whose own referenced range would be
 *   covered copies it into its own payload first.
 * - Payloads packed in place (PayloadSource): the source's byteLength is then
 *   a reservation, placed as a payload of that length (evictions, growth, as
 *   above), and writeTo writes within it and says how many bytes it took (the
 *   slot and the write position count only those). One that did not fit
 *   answers -1 and is placed again at its exact length; its referenced
 *   previous object then travels in its own payload (copied out first, from
 *   the payload that carried it or from the orphan that payload has become).
 *   A previous object copied into a payload (AppendMeta.prevBytes) is written
 *   by the writer right after the source's bytes, 4-aligned.
 */
import { Packr } from 'msgpackr';
import { objectRV } from '../core/types.js';
import { hash32, hashOptional } from './hash32.js';
import {
  MAGIC,
  LAYOUT,
  HEADER_BYTES,
  H_MAGIC,
  H_LAYOUT,
  H_HSEQ,
  H_PUBLISH_COUNT,
  H_WAITERS,
  H_CAPACITY,
  H_ARENA_SIZE,
  H_MAX_CAPACITY,
  H_MAX_ARENA,
  HF_PUBLISHED,
  HF_OLDEST,
  HF_FLOOR_RV,
  HF_LAST_RV,
  SLOT_BYTES,
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
  S_REF_BY,
  ARENA_LIMIT,
  align4,
  TYPE_HAS_PREV,
  eventTypeCode,
  type EventTypeCode,
  type HistoryRingHandle,
} from './ring-layout.js';
import { HistoryRingReader, type RingEvent } from './ring-reader.js';
import { createGrowableSab, growSab } from './shared-memory.js';

/** Slot metadata the writer stores next to a payload. */
export interface AppendMeta {
  /** Event RV: a safe integer, non-decreasing across appends. */
  rv: number;
  type: EventTypeCode;
  nsHash: number;
  nameHash: number;
  /** hash32 of the new object's trigger value, or NO_VALUE_HASH. */
  triggerHash: number;
  /** hash32 of the previous object's trigger value, or NO_VALUE_HASH. */
  prevTriggerHash: number;
  /**
   * The event carries a previous object. In the slot, so a reader can decide
   * a select-everything watcher's delivery (a MODIFIED without one is
   * delivered as ADDED) without decoding.
   */
  hasPrev?: boolean;
  /**
   * Bytes of the previous object (its frame), 0 or absent: none stored apart
   * from the payload. They are payload bytes [prevStart, prevStart +
   * prevLength) of event prevAbs: this event (absent, or the index this append
   * gets) or an earlier held event, referenced instead of copied (each event
   * referenced at most once).
   */
  prevLength?: number;
  prevStart?: number;
  prevAbs?: number;
  /**
   * Or: the previous object's frame, kept in this slot's payload: the writer
   * copies these bytes right after the source's (4-aligned) and points the
   * PREV words at them. For a source that packs in place, whose length is
   * known only once written (prevLength/prevStart/prevAbs are then ignored).
   */
  prevBytes?: Uint8Array | undefined;
}

/**
 * A payload the writer has written straight into the arena at its place (no
 * intermediate buffer): copied there, or packed there in place.
 */
export interface PayloadSource {
  /** Bytes the payload takes; for a source that packs in place, the most it may take (its reservation). */
  readonly byteLength: number;
  /**
   * Write the payload at target[offset ..], within byteLength bytes; returns
   * the bytes written. A source that packs in place returns -1 when its
   * payload did not fit the reservation: byteLength is then exact, and the
   * writer places it again and calls once more.
   */
  writeTo(target: Uint8Array, offset: number): number;
}

/** Optional inputs of appendEvent. */
export interface AppendEventKeys {
  /** Defaults to the object's metadata.resourceVersion. */
  rv?: number;
  /** Trigger value of the new object (hashed into TRIGGER_HASH). */
  trigger?: string;
  /** Trigger value of the previous object (hashed into PREV_TRIGGER_HASH). */
  prevTrigger?: string;
}

export interface HistoryRingOptions {
  /** Initial slot capacity (events), ≥ 1. */
  capacity: number;
  /** Largest capacity setCapacity may reach (capacity × 2^k). Default: capacity. */
  maxCapacity?: number;
  /** Initial arena bytes. Default: capacity × 1024. */
  arenaBytes?: number;
  /** Arena growth limit, rounded down to arenaBytes × 2^k. Default: 2 KiB per event of maxCapacity. */
  maxArenaBytes?: number;
  /** The history starts after this RV (initial FLOOR_RV). Default 0. */
  startRV?: number;
  /**
   * Called on the writer's thread when events [from, to) leave the ring, before
   * any of their slot words or arena bytes is reused: heldBytes(abs) still
   * answers for them inside the call (the mirror copies out frames it still needs).
   */
  onEvict?: ((from: number, to: number) => void) | undefined;
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0 && n <= 0x40000000;
}

function checkPositiveInt(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
}

/**
 * The writer side. Exactly one instance per ring, used from one thread: all
 * shared words it writes (slots, arena, header) have this single writer.
 * append()/appendEvent() make an event durable in the ring but not visible;
 * publish() makes everything appended so far visible (once per event or once
 * per batch) and wakes parked readers.
 */
export class HistoryRing {
  readonly handle: HistoryRingHandle;
  readonly maxCapacity: number;
  readonly maxArenaBytes: number;

  private readonly hI: Int32Array;
  private readonly hF: Float64Array;
  // Fixed-length views, re-made after each grow(): V8 11.3 (Node 20) accesses
  // length-tracking views of growable buffers about 20× slower.
  private sI: Int32Array;
  private sF: Float64Array;
  private arena: Uint8Array;
  private readonly packr = new Packr({ useRecords: false });

  private cap: number;
  private arenaSize: number;
  private next = 0;
  private oldest = 0;
  private published = 0;
  private floor: number;
  private lastRv: number;
  private hseq = 0;
  /** Physical arena byte just after the newest payload. */
  private w = 0;
  private statArenaEvictions = 0;
  private statArenaGrowths = 0;
  private statPrevRefs = 0;
  private statPrevCarries = 0;
  private statBytes = 0;
  /**
   * Orphans, oldest first: frames of events no longer held that a held slot's
   * PREV words still point at (order rule 5). Arena offset, length, referrer.
   */
  private readonly qOff: number[] = [];
  private readonly qLen: number[] = [];
  private readonly qRef: number[] = [];
  private qHead = 0;
  /** Scratch for a previous object carried into its own slot's payload (at maxArenaBytes). */
  private carried = new Uint8Array(0);
  private readonly onEvict: ((from: number, to: number) => void) | undefined;
  /** Inside onEvict: events below `next` but at or above this are still readable by heldBytes. */
  private evicting = -1;

  constructor(options: HistoryRingOptions) {
    const capacity = options.capacity;
    checkPositiveInt('capacity', capacity);
    const maxCapacity = options.maxCapacity ?? capacity;
    checkPositiveInt('maxCapacity', maxCapacity);
    if (maxCapacity < capacity || maxCapacity % capacity !== 0 || !isPowerOfTwo(maxCapacity / capacity)) {
      throw new RangeError(`maxCapacity (${maxCapacity}) must be capacity (${capacity}) × 2^k`);
    }
    const arenaBytes = Math.ceil((options.arenaBytes ?? capacity * 1024) / 8) * 8;
    checkPositiveInt('arenaBytes', arenaBytes);
    if (arenaBytes > ARENA_LIMIT) throw new RangeError(`arenaBytes must be ≤ ${ARENA_LIMIT}`);
    const wantMaxArena = Math.min(options.maxArenaBytes ?? Math.max(arenaBytes, maxCapacity * 2048), ARENA_LIMIT);
    if (wantMaxArena < arenaBytes) throw new RangeError('maxArenaBytes must be ≥ arenaBytes');
    let maxArena = arenaBytes;
    while (maxArena * 2 <= wantMaxArena) maxArena *= 2;
    const startRV = options.startRV ?? 0;
    if (!Number.isSafeInteger(startRV) || startRV < 0) throw new RangeError(`startRV must be a safe integer ≥ 0`);

    const header = new SharedArrayBuffer(HEADER_BYTES);
    const index = createGrowableSab(capacity * SLOT_BYTES, maxCapacity * SLOT_BYTES);
    const arena = createGrowableSab(arenaBytes, maxArena);
    this.hI = new Int32Array(header);
    this.hF = new Float64Array(header);
    this.sI = new Int32Array(index, 0, index.byteLength >> 2);
    this.sF = new Float64Array(index, 0, index.byteLength >> 3);
    this.arena = new Uint8Array(arena, 0, arena.byteLength);

    this.cap = capacity;
    this.arenaSize = arenaBytes;
    this.maxCapacity = maxCapacity;
    this.maxArenaBytes = maxArena;
    this.floor = startRV;
    this.lastRv = startRV;
    this.onEvict = options.onEvict;

    this.hI[H_MAGIC] = MAGIC;
    this.hI[H_LAYOUT] = LAYOUT;
    this.hI[H_CAPACITY] = capacity;
    this.hI[H_ARENA_SIZE] = arenaBytes;
    this.hI[H_MAX_CAPACITY] = maxCapacity;
    this.hI[H_MAX_ARENA] = maxArena;
    this.hF[HF_PUBLISHED] = 0;
    this.hF[HF_OLDEST] = 0;
    this.hF[HF_FLOOR_RV] = startRV;
    this.hF[HF_LAST_RV] = startRV;
    for (let s = 0; s < capacity; s++) this.sF[s * SLOT_F64 + SF_ABS] = -1;
    // Sharing the handle (postMessage) orders these plain initial stores before any reader.
    this.handle = Object.freeze({ header, index, arena, layout: LAYOUT });
  }

  /** Current slot capacity (events). */
  get capacity(): number {
    return this.cap;
  }
  /** Current arena size in bytes. */
  get arenaBytes(): number {
    return this.arenaSize;
  }
  /** The arena offset the next payload is written at (the write position). */
  get writeEnd(): number {
    return this.w;
  }
  /** Absolute index the next append gets. */
  get nextIndex(): number {
    return this.next;
  }
  /** Readers see indices < publishedIndex. */
  get publishedIndex(): number {
    return this.published;
  }
  /** Oldest absolute index still held. */
  get oldestIndex(): number {
    return this.oldest;
  }
  /** Events held (published or not). */
  get size(): number {
    return this.next - this.oldest;
  }
  /** RV of the last evicted event (or startRV): every event with a higher RV is still held. */
  get floorRV(): number {
    return this.floor;
  }
  /** RV of the newest appended event. */
  get lastRV(): number {
    return this.lastRv;
  }
  /** Events evicted because the arena, not the index, was full (at maxArenaBytes). */
  get arenaEvictions(): number {
    return this.statArenaEvictions;
  }
  /** Times the arena doubled. */
  get arenaGrowths(): number {
    return this.statArenaGrowths;
  }
  /** Appends whose previous object is a reference into an earlier payload (not copied). */
  get prevReferences(): number {
    return this.statPrevRefs;
  }
  /** Appends that had to copy their referenced previous object into their own payload (at maxArenaBytes). */
  get prevCarries(): number {
    return this.statPrevCarries;
  }
  /** Frames of evicted events kept because a held slot references them. */
  get orphans(): number {
    return this.qOff.length - this.qHead;
  }
  /** Arena bytes written so far (payloads and carried frames; skipped wrap tails not counted). */
  get bytesWritten(): number {
    return this.statBytes;
  }

  /**
   * The payload bytes of held event `abs` as a view of the arena (the writer's
   * own thread: no seqlock needed), or undefined when it is not held. The view
   * is valid only until the next append, capacity change or clear: copy what
   * you keep. Inside onEvict it answers for the events leaving, too.
   */
  heldBytes(abs: number): Uint8Array | undefined {
    const low = this.evicting >= 0 ? this.evicting : this.oldest;
    if (!Number.isSafeInteger(abs) || abs < low || abs >= this.next) return undefined;
    const off = this.offsetOf(abs);
    return this.arena.subarray(off, off + this.lengthOf(abs));
  }

  /** Held event `abs` may be referenced as a previous object (order rule 5: each payload at most once). */
  referable(abs: number): boolean {
    return abs >= this.oldest && abs < this.next && this.refByOf(abs) === 0;
  }

  /** A reader on this thread. */
  reader(): HistoryRingReader {
    return new HistoryRingReader(this.handle);
  }

  /** Encode an event the way appendEvent stores it (msgpackr, useRecords: false). */
  encode(event: RingEvent): Uint8Array {
    const value =
      event.prevObject === undefined
        ? { type: event.type, object: event.object }
        : { type: event.type, object: event.object, prevObject: event.prevObject };
    return this.packr.pack(value);
  }

  /** Encode once and append. Returns the absolute index (not yet published). */
  appendEvent(event: RingEvent, keys?: AppendEventKeys): number {
    const md = event.object.metadata;
    const meta: AppendMeta = {
      rv: keys?.rv ?? objectRV(event.object),
      type: eventTypeCode(event.type),
      nsHash: hash32(md.namespace ?? ''),
      nameHash: hash32(md.name ?? ''),
      triggerHash: hashOptional(keys?.trigger),
      prevTriggerHash: hashOptional(keys?.prevTrigger),
      hasPrev: event.prevObject !== undefined,
    };
    return this.append(meta, this.encode(event));
  }

  /**
   * Append an already-encoded payload (copied into the arena). Evicts the
   * oldest events as needed (index full, or their arena bytes needed). Returns
   * the absolute index; readers see it after the next publish().
   */
  append(meta: AppendMeta, payload: Uint8Array): number {
    this.bytes.payload = payload;
    try {
      return this.appendPayload(meta, this.bytes);
    } finally {
      this.bytes.payload = NO_BYTES; // keep no reference to the caller's bytes
    }
  }

  private readonly bytes = new BytesSource();

  /**
   * Append a payload written by `source` straight into the arena at its
   * place (copied once, or packed there in place), as append() does with
   * bytes. When meta.prevAbs names an earlier held event, the slot's
   * previous object is a byte range of that event's payload (referenced, not
   * copied; order rule 5 keeps it valid); meta.prevBytes are copied after the
   * payload instead.
   */
  appendPayload(meta: AppendMeta, source: PayloadSource): number {
    let srcLen = source.byteLength;
    const rv = meta.rv;
    const next = this.next;
    if (srcLen < 1) throw new RangeError('history ring: payload must not be empty');
    if (!Number.isSafeInteger(rv) || rv < this.lastRv) {
      throw new RangeError(`history ring: RV ${rv} is not a safe integer ≥ the last RV ${this.lastRv}`);
    }
    this.checkFits(srcLen);
    // The previous object's bytes: none, inside this payload, after it (prevBytes), or a range of an
    // earlier held payload.
    const own = meta.prevBytes;
    const prevLength = own !== undefined ? own.length : (meta.prevLength ?? 0);
    const prevStart = own !== undefined ? 0 : (meta.prevStart ?? 0);
    const prevAbs = own === undefined && prevLength > 0 ? (meta.prevAbs ?? next) : next;
    const ref = prevAbs !== next ? prevAbs : -1;
    if (prevLength > 0 && own === undefined) {
      const within = prevAbs === next ? srcLen : ref >= this.oldest && ref < next ? this.lengthOf(ref) : -1;
      if (!Number.isSafeInteger(prevStart) || prevStart < 0 || prevStart + prevLength > within) {
        throw new RangeError(
          `history ring: previous object bytes [${prevStart}, +${prevLength}) not in event ${prevAbs}`,
        );
      }
      if (ref >= 0 && this.refByOf(ref) !== 0) throw new RangeError(`history ring: event ${ref} is referenced already`);
    }
    // Registered before the scan, so covering the referenced bytes counts as covering live bytes.
    if (ref >= 0) this.setRefBy(ref, next - ref);
    // Bytes the writer copies right after the payload: prevBytes, or the referenced bytes carried.
    let after = own;
    let carry = false; // the referenced bytes are copied into this slot's own payload instead
    let p: number;
    let written: number;
    let prevOff: number;
    for (;;) {
      while (srcLen > this.arenaSize) this.growArena(); // forced growth for an oversize payload
      // Index full: the slot we are about to write holds the oldest event.
      const oCap = next - this.oldest >= this.cap ? next - this.cap + 1 : this.oldest;
      for (;;) {
        const len = after !== undefined || carry ? align4(srcLen) + prevLength : srcLen;
        this.checkFits(len, carry ? -1 : ref, 'payload with its previous object');
        if (len > this.arenaSize) {
          this.growArena();
          continue;
        }
        this.scan(len, oCap, carry);
        const grow = this.scanO > oCap || this.scanLive || this.scanOwnRef;
        // The arena, not the index, is the limit: grow instead of evicting (or covering referenced bytes) while allowed.
        if (grow && this.arenaSize < this.maxArenaBytes) {
          this.growArena();
          continue;
        }
        // At maxArenaBytes, this event's own previous object is in the way: carry a copy in its own payload.
        if (this.scanOwnRef && !carry) {
          after = this.carryReferenced(ref, prevStart, prevLength);
          carry = true;
          continue;
        }
        break;
      }
      const o = this.scanO;
      p = this.scanP;
      if (o > oCap) this.statArenaEvictions += o - oCap;
      // The referenced bytes' place after any relocation above (the event is held until evictTo below).
      prevOff = ref >= 0 && !carry ? this.offsetOf(ref) + prevStart : p + prevStart;
      // Orphans scanned over are gone (covered, their referrers evicted); events leaving the index whose
      // frames a later held slot references stay in the arena as orphans (order rule 5).
      this.dropOrphans(this.scanQ);
      this.retire(o, ref >= 0 && !carry ? prevOff : -1, prevLength);
      // INVARIANT (overwritten detection): OLDEST is advanced, by Atomics, before
      // the evicted events' slot or arena bytes are touched. A reader that finds
      // OLDEST ≤ its index after copying knows nothing it copied was reused.
      if (o !== this.oldest) this.evictTo(o, this.rvOf(o - 1));
      // Only bytes [p, p + its reservation) are free: a source packing in place writes within them.
      written = source.writeTo(this.arena, p);
      if (written >= 0) break;
      // It did not fit: place it again at its exact length. Its referenced bytes (maybe an orphan by
      // now, retired above) travel in its own payload: the place is chosen afresh.
      srcLen = source.byteLength;
      this.checkFits(srcLen, carry ? -1 : ref);
      if (ref >= 0 && !carry) {
        after = this.carryReferenced(ref, prevStart, prevLength);
        carry = true;
      }
    }
    let len = written;
    if (after !== undefined) {
      prevOff = p + align4(written);
      len = prevOff - p + prevLength;
      // INVARIANT (referenced bytes): carried bytes were copied out before this payload's bytes
      // could cover them; the slot points into its own payload (no other slot referenced these bytes).
      this.arena.set(after, prevOff);
    }

    const base = (next % this.cap) * SLOT_I32;
    const fb = (next % this.cap) * SLOT_F64;
    const sI = this.sI;
    const seq = sI[base + S_SEQ]!;
    // INVARIANT (torn-read detection): SEQ is odd while the slot's words change;
    // a reader that sees the same even SEQ before and after its loads got one
    // consistent version of the slot.
    Atomics.store(sI, base + S_SEQ, (seq + 1) | 0);
    sI[base + S_TYPE] = meta.hasPrev === true ? meta.type | TYPE_HAS_PREV : meta.type;
    this.sF[fb + SF_ABS] = next;
    this.sF[fb + SF_RV] = rv;
    sI[base + S_NS] = meta.nsHash;
    sI[base + S_NAME] = meta.nameHash;
    sI[base + S_TRIGGER] = meta.triggerHash;
    sI[base + S_PREV_TRIGGER] = meta.prevTriggerHash;
    sI[base + S_OFFSET] = p;
    sI[base + S_LENGTH] = len;
    sI[base + S_PREV_OFFSET] = prevLength > 0 ? prevOff : 0;
    sI[base + S_PREV_LENGTH] = prevLength;
    sI[base + S_REF_BY] = 0;
    Atomics.store(sI, base + S_SEQ, (seq + 2) | 0);

    this.w = p + len;
    this.lastRv = rv;
    this.next = next + 1;
    this.statBytes += len;
    if (ref >= 0) {
      if (carry) this.statPrevCarries++;
      else this.statPrevRefs++;
    }
    return next;
  }

  /** A payload of `len` bytes can be placed at all (else RangeError, this append's reference to `ref` dropped). */
  private checkFits(len: number, ref = -1, what = 'payload'): void {
    if (len <= this.maxArenaBytes) return;
    this.setRefBy(ref, 0);
    throw new RangeError(
      `history ring: ${what} of ${len} bytes is larger than the arena can grow (maxArenaBytes ${this.maxArenaBytes})`,
    );
  }

  /**
   * This append's referenced previous object, copied out to travel in its own
   * payload (the `carried` scratch): from event `ref`'s payload while held,
   * else from the orphan this append retired (dropped: nobody references it
   * now). The reference is withdrawn.
   */
  private carryReferenced(ref: number, prevStart: number, prevLength: number): Uint8Array {
    let from: number;
    if (ref >= this.oldest) {
      from = this.offsetOf(ref) + prevStart;
      this.setRefBy(ref, 0);
    } else {
      let q = this.qOff.length - 1;
      while (q > this.qHead && this.qRef[q] !== this.next) q--; // retired by this append: among the newest orphans
      from = this.qOff[q]!;
      this.qRef[q] = -1; // its referrer is gone (dropOrphans and the scan skip it)
    }
    if (this.carried.length < prevLength) this.carried = new Uint8Array(Math.max(prevLength, this.carried.length * 2));
    this.carried.set(this.arena.subarray(from, from + prevLength));
    return this.carried.subarray(0, prevLength);
  }

  // Scan results (fields, so an append allocates nothing).
  private scanO = 0;
  private scanP = 0;
  private scanQ = 0;
  private scanE = 0;
  private scanLive = false;
  private scanOwnRef = false;

  /**
   * Which bytes a payload of `len` bytes at the write position covers. The
   * arena's live byte ranges in age order (= address order from the write
   * position) are the orphans (frames of evicted events that a held slot
   * still references), then the held events' payloads. Sets scanP (where the
   * payload goes), scanO (the new OLDEST: held events whose payload is
   * covered, and, for covered referenced bytes, their referrer, are evicted),
   * scanQ (first orphan not covered), scanLive (covered bytes a held slot
   * references), scanOwnRef (covered bytes this very event references).
   */
  private scan(len: number, oCap: number, carry: boolean): void {
    this.scanQ = this.qHead;
    this.scanE = this.oldest;
    this.scanO = oCap;
    this.scanLive = false;
    this.scanOwnRef = false;
    let p = align4(this.w);
    if (p + len > this.arenaSize) {
      // Wrap to byte 0: first everything still ahead of w (the older lap) goes ...
      for (let s = this.scanStart(); s >= this.w; s = this.scanStart()) this.scanTake(carry);
      p = 0;
      // ... then, in age order (= address order), what starts below len.
      for (let s = this.scanStart(); s >= 0 && s < len; s = this.scanStart()) this.scanTake(carry);
    } else {
      // What is ahead of w in address order is the oldest; take what we would cover.
      for (let s = this.scanStart(); s >= p && s < p + len; s = this.scanStart()) this.scanTake(carry);
    }
    this.scanP = p;
  }

  /** Where the scan's next live range starts (-1: none left). */
  private scanStart(): number {
    if (this.scanQ < this.qOff.length) return this.qOff[this.scanQ]!;
    return this.scanE < this.next ? this.offsetOf(this.scanE) : -1;
  }

  /** The scan covers its next live range. */
  private scanTake(carry: boolean): void {
    let r: number;
    if (this.scanQ < this.qOff.length) {
      r = this.qRef[this.scanQ]!;
      this.scanQ++;
    } else {
      const ev = this.scanE++;
      if (ev >= this.scanO) this.scanO = ev + 1;
      const d = this.refByOf(ev);
      if (d === 0) return;
      r = ev + d;
      if (r === this.next) {
        if (!carry) this.scanOwnRef = true;
        return;
      }
    }
    // INVARIANT (referenced bytes, order rule 5): bytes a held slot references are covered only
    // once that slot is evicted: below maxArenaBytes the caller grows the arena instead (scanLive);
    // at maxArenaBytes the referrer goes, with everything older (FIFO kept), OLDEST advanced first.
    if (r >= this.scanO) {
      this.scanLive = true;
      this.scanO = r + 1;
    }
  }

  /**
   * Events leaving the index ([oldest, o)) whose frame a held slot references
   * become orphans: their bytes stay (order rule 5) until the write position
   * covers them after the referrer is gone. `ownOff` is where this append's
   * referenced bytes are (-1: none), since its slot is not written yet.
   */
  private retire(o: number, ownOff: number, ownLen: number): void {
    const next = this.next;
    for (let ev = this.oldest; ev < o; ev++) {
      const d = this.refByOf(ev);
      if (d === 0) continue;
      const r = ev + d;
      if (r < o) continue; // the referrer goes too
      if (r === next) {
        if (ownOff >= 0) this.pushOrphan(ownOff, ownLen, r);
        continue;
      }
      const b = (r % this.cap) * SLOT_I32;
      this.pushOrphan(this.sI[b + S_PREV_OFFSET]!, this.sI[b + S_PREV_LENGTH]!, r);
    }
  }

  private pushOrphan(off: number, len: number, referrer: number): void {
    this.qOff.push(off);
    this.qLen.push(len);
    this.qRef.push(referrer);
  }

  /** Forget the orphans before queue position `q` (and any whose referrer is gone, at the front). */
  private dropOrphans(q: number): void {
    while (q < this.qOff.length && this.qRef[q]! < this.oldest) q++;
    this.qHead = q;
    if (q === 0) return;
    if (q === this.qOff.length) {
      this.qOff.length = 0;
      this.qLen.length = 0;
      this.qRef.length = 0;
      this.qHead = 0;
    } else if (q > 1024 && q * 2 > this.qOff.length) {
      this.qOff.splice(0, q);
      this.qLen.splice(0, q);
      this.qRef.splice(0, q);
      this.qHead = 0;
    }
  }

  /**
   * Make every appended event visible to readers and wake parked readers.
   * Call once per event or once per batch.
   */
  publish(): void {
    if (this.published === this.next) return;
    this.published = this.next;
    this.writeHeader();
    // INVARIANT (publish ordering): the slot and arena stores of every event
    // below PUBLISHED precede these Atomics stores in program order; a reader
    // acquires them by loading HSEQ/PUBLISHED with Atomics before any slot.
    Atomics.add(this.hI, H_PUBLISH_COUNT, 1);
    // Readers register in WAITERS before re-checking PUBLISH_COUNT and parking
    // (Dekker pair, all Atomics): either we see them here or they see the new count.
    if (Atomics.load(this.hI, H_WAITERS) !== 0) Atomics.notify(this.hI, H_PUBLISH_COUNT);
  }

  /**
   * Drop every event (for example after a re-list) and start the history
   * after `startRV`: indexAfterRV(rv < startRV) then answers TOO_OLD.
   */
  clear(startRV: number): void {
    if (!Number.isSafeInteger(startRV) || startRV < this.lastRv) {
      throw new RangeError(`history ring: clear(${startRV}) would move RVs backwards (last ${this.lastRv})`);
    }
    this.lastRv = startRV;
    this.published = this.next; // unpublished events are dropped too
    this.evictTo(this.next, startRV); // OLDEST first: only then may bytes be reused
    this.dropOrphans(this.qOff.length); // their referrers are gone too
    this.w = 0;
    Atomics.add(this.hI, H_PUBLISH_COUNT, 1);
    if (Atomics.load(this.hI, H_WAITERS) !== 0) Atomics.notify(this.hI, H_PUBLISH_COUNT);
  }

  /**
   * Change the slot capacity by a factor of two (repeatedly): newCapacity must
   * be capacity × 2^k or capacity / 2^k, between 1 and maxCapacity. Shrinking
   * evicts the oldest events beyond the new capacity.
   */
  setCapacity(newCapacity: number): void {
    checkPositiveInt('capacity', newCapacity);
    if (newCapacity > this.maxCapacity) {
      throw new RangeError(`history ring: capacity ${newCapacity} exceeds maxCapacity ${this.maxCapacity}`);
    }
    const ratio = newCapacity >= this.cap ? newCapacity / this.cap : this.cap / newCapacity;
    if (!isPowerOfTwo(ratio)) {
      throw new RangeError(`history ring: capacity ${newCapacity} is not ${this.cap} × 2^±k`);
    }
    while (this.cap < newCapacity) this.doubleCapacity();
    while (this.cap > newCapacity) this.halveCapacity();
  }

  // -- internals -------------------------------------------------------------

  private offsetOf(abs: number): number {
    return this.sI[(abs % this.cap) * SLOT_I32 + S_OFFSET]!;
  }

  private lengthOf(abs: number): number {
    return this.sI[(abs % this.cap) * SLOT_I32 + S_LENGTH]!;
  }

  private refByOf(abs: number): number {
    return this.sI[(abs % this.cap) * SLOT_I32 + S_REF_BY]!;
  }

  /** The writer's own word (readers never read it): no seqlock needed. */
  private setRefBy(abs: number, delta: number): void {
    if (abs >= 0) this.sI[(abs % this.cap) * SLOT_I32 + S_REF_BY] = delta;
  }

  private rvOf(abs: number): number {
    return this.sF[(abs % this.cap) * SLOT_F64 + SF_RV]!;
  }

  private writeHeader(): void {
    const hI = this.hI;
    const hF = this.hF;
    // INVARIANT (torn-read detection, header): HSEQ odd while the Float64 words change.
    this.hseq = (this.hseq + 1) | 0;
    Atomics.store(hI, H_HSEQ, this.hseq);
    hF[HF_PUBLISHED] = this.published;
    hF[HF_OLDEST] = this.oldest;
    hF[HF_FLOOR_RV] = this.floor;
    hF[HF_LAST_RV] = this.published === this.next ? this.lastRv : hF[HF_LAST_RV]!;
    this.hseq = (this.hseq + 1) | 0;
    Atomics.store(hI, H_HSEQ, this.hseq);
  }

  private evictTo(oldest: number, floorRV: number): void {
    if (this.onEvict !== undefined && oldest > this.oldest) {
      // The leaving events' slot words and bytes are untouched until after this call.
      this.evicting = this.oldest;
      try {
        this.onEvict(this.oldest, oldest);
      } finally {
        this.evicting = -1;
      }
    }
    this.oldest = oldest;
    this.floor = floorRV;
    this.writeHeader();
  }

  /** Seqlock-write a copy of slot `from` into slot `to` (same capacity words). */
  private copySlot(from: number, to: number): void {
    const sI = this.sI;
    const a = from * SLOT_I32;
    const b = to * SLOT_I32;
    const seq = sI[b + S_SEQ]!;
    Atomics.store(sI, b + S_SEQ, (seq + 1) | 0); // INVARIANT: odd while rewritten
    for (let k = 1; k < SLOT_I32; k++) sI[b + k] = sI[a + k]!; // Float64 words included (raw copy)
    Atomics.store(sI, b + S_SEQ, (seq + 2) | 0);
  }

  /** Seqlock-write ABS = -1 into a slot that only holds a stale copy. */
  private invalidateSlot(slot: number): void {
    const b = slot * SLOT_I32;
    const seq = this.sI[b + S_SEQ]!;
    Atomics.store(this.sI, b + S_SEQ, (seq + 1) | 0); // INVARIANT: odd while rewritten
    this.sF[slot * SLOT_F64 + SF_ABS] = -1;
    Atomics.store(this.sI, b + S_SEQ, (seq + 2) | 0);
  }

  private doubleCapacity(): void {
    const c = this.cap;
    const c2 = c * 2;
    const index = this.handle.index;
    if (index.byteLength < c2 * SLOT_BYTES) {
      growSab(index, c2 * SLOT_BYTES);
      this.sI = new Int32Array(index, 0, index.byteLength >> 2);
      this.sF = new Float64Array(index, 0, index.byteLength >> 3);
    }
    for (let s = c; s < c2; s++) {
      // Fresh upper slots (never used, or stale copies from before a halving): mark empty.
      if (this.sF[s * SLOT_F64 + SF_ABS] !== -1) this.invalidateSlot(s);
    }
    // 1. Events whose home moves (abs % 2C ≥ C) get a copy in the upper half;
    //    nobody reads the upper half yet, and the lower copies stay intact.
    for (let abs = this.oldest; abs < this.next; abs++) {
      if (abs % c2 >= c) this.copySlot(abs % c, abs % c2);
    }
    // 2. INVARIANT (layout switch): CAPACITY changes only when every held event
    //    is at abs % CAPACITY under the new value; readers load it by Atomics.
    Atomics.store(this.hI, H_CAPACITY, c2);
    this.cap = c2;
    // 3. Stale lower copies are invalidated (a stale-capacity reader retries),
    //    so later arena relocations never leave an old OFFSET readable.
    for (let abs = this.oldest; abs < this.next; abs++) {
      if (abs % c2 >= c) this.invalidateSlot(abs % c);
    }
  }

  private halveCapacity(): void {
    const c2 = this.cap;
    if (c2 % 2 !== 0) throw new RangeError(`history ring: capacity ${c2} cannot be halved`);
    const c = c2 / 2;
    // 1. Keep at most C events (OLDEST first, before any slot is reused); frames that
    //    held slots reference stay as orphans (order rule 5), read from the slots first.
    if (this.next - this.oldest > c) {
      this.retire(this.next - c, -1, 0);
      this.evictTo(this.next - c, this.rvOf(this.next - c - 1));
    }
    // 2. Upper-half events move down; the lower slot they take holds an evicted event.
    for (let abs = this.oldest; abs < this.next; abs++) {
      const s = abs % c2;
      if (s >= c) this.copySlot(s, s - c);
    }
    Atomics.store(this.hI, H_CAPACITY, c); // INVARIANT (layout switch), as in doubleCapacity
    this.cap = c;
    // 3. Invalidate the upper copies.
    for (let abs = this.oldest; abs < this.next; abs++) {
      const s = abs % c2;
      if (s >= c) this.invalidateSlot(s);
    }
  }

  /** Double the arena (≤ maxArenaBytes); keeps the FIFO contiguous if the data wraps. */
  private growArena(): void {
    const old = this.arenaSize;
    const size = old * 2;
    if (size > this.maxArenaBytes) {
      throw new RangeError(`history ring: arena cannot grow past maxArenaBytes ${this.maxArenaBytes}`);
    }
    const arena = this.handle.arena;
    if (arena.byteLength < size) {
      growSab(arena, size);
      this.arena = new Uint8Array(arena, 0, arena.byteLength);
    }
    const w = this.w;
    const qEnd = this.qOff.length;
    // The oldest live bytes: the first orphan's, else the oldest held event's.
    const oldestStart =
      this.qHead < qEnd ? this.qOff[this.qHead]! : this.next > this.oldest ? this.offsetOf(this.oldest) : -1;
    if (oldestStart >= w) {
      // Wrapped: older lap (orphans, then events) at [t, e), newer lap at [0, w)
      // with w ≤ t. Copy the newer lap to [e, e + w) (free: the old unused tail
      // plus the new half; e + w ≤ 2·old) and repoint its slots under their
      // seqlocks. Orphans are older than every held event, so all in the older lap.
      let e = 0;
      for (let q = this.qHead; q < qEnd && this.qOff[q]! >= w; q++) e = Math.max(e, this.qOff[q]! + this.qLen[q]!);
      for (let abs = this.oldest; abs < this.next && this.offsetOf(abs) >= w; abs++) {
        e = Math.max(e, this.offsetOf(abs) + this.lengthOf(abs));
      }
      e = align4(e);
      this.arena.copyWithin(e, 0, w);
      const sI = this.sI;
      for (let abs = this.oldest; abs < this.next; abs++) {
        const b = (abs % this.cap) * SLOT_I32;
        const moves = sI[b + S_OFFSET]! < w;
        // A previous object's bytes in the newer lap move too (its own payload or an earlier one's).
        const prevMoves = sI[b + S_PREV_LENGTH]! > 0 && sI[b + S_PREV_OFFSET]! < w;
        if (!moves && !prevMoves) continue;
        const seq = sI[b + S_SEQ]!;
        // INVARIANT (torn-read detection): a reader that copied from the old
        // place sees SEQ change; bytes at [0, w) are reused only after this.
        Atomics.store(sI, b + S_SEQ, (seq + 1) | 0);
        if (moves) sI[b + S_OFFSET] = sI[b + S_OFFSET]! + e;
        if (prevMoves) sI[b + S_PREV_OFFSET] = sI[b + S_PREV_OFFSET]! + e;
        Atomics.store(sI, b + S_SEQ, (seq + 2) | 0);
      }
      for (let q = this.qHead; q < qEnd; q++) if (this.qOff[q]! < w) this.qOff[q] = this.qOff[q]! + e;
      this.w = e + w;
    }
    Atomics.store(this.hI, H_ARENA_SIZE, size);
    this.arenaSize = size;
    this.statArenaGrowths++;
  }
}

const NO_BYTES = new Uint8Array(0);

/** append()'s bytes as a PayloadSource (one reused object). */
class BytesSource implements PayloadSource {
  payload: Uint8Array = NO_BYTES;
  get byteLength(): number {
    return this.payload.length;
  }
  writeTo(target: Uint8Array, offset: number): number {
    target.set(this.payload, offset);
    return this.payload.length;
  }
}
