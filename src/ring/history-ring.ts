/**
 * History ring: the beta mode's event history in SharedArrayBuffers. One
 * writer (the thread that ingests events, normally the main thread) appends;
 * any number of readers in any thread read by absolute index. Each event's
 * payload is encoded once with msgpackr and stored once, in a byte arena.
 *
 * Three shared buffers, all in one structured-cloneable {@link HistoryRingHandle}:
 *
 * Header (Int32 words, plus Float64 words guarded by the header seqlock HSEQ):
 *
 *   byte i32 f64 field          written by          meaning
 *   ---- --- --- -------------  ------------------  ------------------------------------------
 *      0   0     MAGIC          create              0x57435248
 *      4   1     LAYOUT         create              layout version (1)
 *      8   2     HSEQ           writer, Atomics     seqlock over the four Float64 words below
 *     12   3     PUBLISH_COUNT  writer, Atomics.add +1 per publish(); readers wait on it
 *     16   4     WAITERS        readers, Atomics    readers parked on PUBLISH_COUNT
 *     20   5     CAPACITY       writer, Atomics     slot capacity = layout modulus
 *     24   6     ARENA_SIZE     writer, Atomics     arena bytes the allocator uses
 *     28   7     MAX_CAPACITY   create
 *     32   8     MAX_ARENA      create
 *     40       5 PUBLISHED      writer, HSEQ        first absolute index not yet readable
 *     48       6 OLDEST         writer, HSEQ        oldest absolute index still valid
 *     56       7 FLOOR_RV       writer, HSEQ        RV of the last evicted event (or startRV)
 *     64       8 LAST_RV        writer, HSEQ        RV of the newest published event
 *
 * Index (growable SAB): slot = absIndex % CAPACITY, 48 bytes per slot:
 *
 *   byte i32 f64 field
 *   ---- --- --- -----------------
 *      0   0     SEQ               per-slot seqlock: odd while the writer rewrites the slot
 *      4   1     TYPE              bits 0-1: 1 ADDED, 2 MODIFIED, 3 DELETED; bit 3 (HAS_PREV): the event carries a previous object
 *      8       1 ABS               absolute index the slot holds (-1: invalidated copy)
 *     16       2 RV                event RV (safe integer, < 2^53)
 *     24   6     NS_HASH           hash32(namespace)
 *     28   7     NAME_HASH         hash32(name)
 *     32   8     TRIGGER_HASH      hash32(trigger value of the object), 0 = none
 *     36   9     PREV_TRIGGER_HASH hash32(trigger value of prevObject), 0 = none
 *     40  10     OFFSET            payload's first byte in the arena
 *     44  11     LENGTH            payload bytes (≥ 1)
 *
 * Arena (growable SAB, size a multiple of 8): a circular FIFO of contiguous
 * payloads, each starting on a 4-byte boundary (readers copy by Int32 words).
 * A payload that does not fit before the end of the arena starts again at
 * byte 0 (the tail bytes are left unused for that lap). Address order of the
 * held payloads, starting at the write position, is their age order.
 *
 * Absolute indices are monotonic safe integers that never wrap as numbers.
 * They and RVs live in Float64 words: never torn as observed, because every
 * Float64 read is bracketed by a seqlock (HSEQ for the header, SEQ per slot).
 *
 * Design choices:
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
 *   high-water mark (the index is ≤ 48 B × maxCapacity; the arena is bounded by
 *   maxArenaBytes). Releasing memory would need a new ring and a handle
 *   exchange; not done.
 * - Arena policy: before a payload is written, the oldest events whose bytes
 *   it would cover are evicted (OLDEST advanced first). If that would evict
 *   events while the index still has room (the arena, not the event capacity,
 *   is the binding limit), the arena doubles instead, up to maxArenaBytes
 *   (maxArenaBytes is rounded down to arenaBytes × 2^k). A payload larger than
 *   the arena forces growth; one larger than maxArenaBytes is rejected with a
 *   RangeError. When the arena doubles while its data wraps, the newer lap
 *   [0, w) is copied right behind the older lap and its slots' OFFSET words are
 *   rewritten under their seqlocks, so the FIFO stays contiguous.
 * - Readers get a copy: read() copies the payload into the caller's
 *   RingRecord.payload (reused; replaced by a larger buffer only when too
 *   small) and validates afterwards, so no torn or reused bytes ever escape.
 * - Views over the growable buffers are fixed-length and re-made after a
 *   grow (V8 11.3 / Node 20 accesses length-tracking views ~20× slower).
 * - Memory model: the writer stores slot/arena words with plain stores inside
 *   the seqlock (SEQ odd … SEQ even, both Atomics.store); a reader reads SEQ
 *   by Atomics.load, the words and the bytes with plain loads, then SEQ and
 *   OLDEST again by Atomics.load. The publication direction (plain stores,
 *   then an Atomics store; an Atomics load, then plain loads) is sound under
 *   the JS memory model. The validation direction (plain loads that must not
 *   move below the re-check's Atomics.load) relies on V8 treating Atomics as
 *   compiler barriers and on x86-64 (TSO) keeping loads in order, which this
 *   project runs on; ECMAScript has no standalone fence, so every SAB seqlock
 *   or byte ring in JS carries that assumption. SEQ is a 32-bit counter: an
 *   ABA would need a reader to stall through 2^31 rewrites of one slot, and
 *   the ABS and OLDEST checks would still catch a reused slot.
 */
import { Packr } from 'msgpackr';
import { objectRV } from '../core/types.js';
import type { ChangeType, KubeObject } from '../core/types.js';
import { hash32, hashOptional } from './hash32.js';
import { backoff, createGrowableSab, growSab, waitAsync, type WaitOutcome } from './shared-memory.js';

// ---------------------------------------------------------------------------
// Public constants and types

/** Event type codes stored in a slot's TYPE word. */
export const EventTypeCode = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;
export type EventTypeCode = (typeof EventTypeCode)[keyof typeof EventTypeCode];

/** ChangeType → slot code. */
export function eventTypeCode(type: ChangeType): EventTypeCode {
  return type === 'ADDED' ? EventTypeCode.ADDED : type === 'MODIFIED' ? EventTypeCode.MODIFIED : EventTypeCode.DELETED;
}

/** Slot code → ChangeType. */
export function eventTypeName(code: number): ChangeType {
  if (code === EventTypeCode.ADDED) return 'ADDED';
  if (code === EventTypeCode.MODIFIED) return 'MODIFIED';
  if (code === EventTypeCode.DELETED) return 'DELETED';
  throw new RangeError(`unknown event type code ${code}`);
}

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

/** indexAfterRV's answer when the RV predates what the ring still holds (→ 410 Expired). */
export const TOO_OLD = -1;

/** The event a payload encodes (what appendEvent packs and decode unpacks). */
export interface RingEvent {
  type: ChangeType;
  object: KubeObject;
  prevObject?: KubeObject;
}

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
   * The event carries a previous object (its frame is in the payload). In the
   * slot, so a reader can decide a select-everything watcher's delivery (a
   * MODIFIED without one is delivered as ADDED) without decoding.
   */
  hasPrev?: boolean;
}

/** Bit of a slot's TYPE word: the event carries a previous object. */
const TYPE_HAS_PREV = 8;
/** The type code bits of a slot's TYPE word. */
const TYPE_CODE_MASK = 3;

/** Optional inputs of appendEvent. */
export interface AppendEventKeys {
  /** Defaults to the object's metadata.resourceVersion. */
  rv?: number;
  /** Trigger value of the new object (hashed into TRIGGER_HASH). */
  trigger?: string;
  /** Trigger value of the previous object (hashed into PREV_TRIGGER_HASH). */
  prevTrigger?: string;
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
}

/** Result of a reader's decode. */
export type DecodeResult =
  | { status: typeof ReadStatus.OK; absIndex: number; rv: number; event: RingEvent }
  | { status: typeof ReadStatus.OVERWRITTEN | typeof ReadStatus.NOT_PUBLISHED; absIndex: number };

/** Everything a reader in another thread needs: only SharedArrayBuffers and numbers. */
export interface HistoryRingHandle {
  readonly header: SharedArrayBuffer;
  readonly index: SharedArrayBuffer;
  readonly arena: SharedArrayBuffer;
  readonly layout: number;
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
}

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
  };
}

// ---------------------------------------------------------------------------
// Layout

const MAGIC = 0x57435248;
const LAYOUT = 1;
const HEADER_BYTES = 128;

const H_MAGIC = 0;
const H_LAYOUT = 1;
const H_HSEQ = 2;
const H_PUBLISH_COUNT = 3;
const H_WAITERS = 4;
const H_CAPACITY = 5;
const H_ARENA_SIZE = 6;
const H_MAX_CAPACITY = 7;
const H_MAX_ARENA = 8;
const HF_PUBLISHED = 5;
const HF_OLDEST = 6;
const HF_FLOOR_RV = 7;
const HF_LAST_RV = 8;

const SLOT_BYTES = 48;
const SLOT_I32 = 12;
const SLOT_F64 = 6;
const S_SEQ = 0;
const S_TYPE = 1;
const SF_ABS = 1;
const SF_RV = 2;
const S_NS = 6;
const S_NAME = 7;
const S_TRIGGER = 8;
const S_PREV_TRIGGER = 9;
const S_OFFSET = 10;
const S_LENGTH = 11;

/** Arena offsets are Int32 words; sizes are multiples of 8. */
const ARENA_LIMIT = 0x7ffffff8;

/** Payloads start on 4-byte boundaries, so readers copy them by Int32 words. */
function align4(n: number): number {
  return n + ((4 - (n & 3)) & 3);
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0 && n <= 0x40000000;
}

function checkPositiveInt(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
}

// ---------------------------------------------------------------------------
// Writer

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
    const len = payload.length;
    const rv = meta.rv;
    if (len < 1) throw new RangeError('history ring: payload must not be empty');
    if (!Number.isSafeInteger(rv) || rv < this.lastRv) {
      throw new RangeError(`history ring: RV ${rv} is not a safe integer ≥ the last RV ${this.lastRv}`);
    }
    if (len > this.maxArenaBytes) {
      throw new RangeError(
        `history ring: payload of ${len} bytes is larger than the arena can grow (maxArenaBytes ${this.maxArenaBytes})`,
      );
    }
    while (len > this.arenaSize) this.growArena(); // forced growth for an oversize payload

    const next = this.next;
    // Index full: the slot we are about to write holds the oldest event.
    const oCap = next - this.oldest >= this.cap ? next - this.cap + 1 : this.oldest;
    let o: number;
    let p: number;
    for (;;) {
      o = oCap;
      p = align4(this.w);
      if (p + len > this.arenaSize) {
        // Wrap to byte 0: first every event still ahead of w (the older lap) goes ...
        while (o < next && this.offsetOf(o) >= this.w) o++;
        p = 0;
        // ... then, in age order (= address order), those whose bytes start below len.
        while (o < next && this.offsetOf(o) < len) o++;
      } else {
        // Events ahead of w in address order are the oldest ones; evict those we would cover.
        while (o < next) {
          const off = this.offsetOf(o);
          if (off < p || off >= p + len) break;
          o++;
        }
      }
      // The arena, not the index, is the limit: grow instead of evicting while allowed.
      if (o > oCap && this.arenaSize < this.maxArenaBytes) {
        this.growArena();
        continue;
      }
      break;
    }
    if (o > oCap) this.statArenaEvictions += o - oCap;
    // INVARIANT (overwritten detection): OLDEST is advanced, by Atomics, before
    // the evicted events' slot or arena bytes are touched. A reader that finds
    // OLDEST ≤ its index after copying knows nothing it copied was reused.
    if (o !== this.oldest) this.evictTo(o, this.rvOf(o - 1));

    this.arena.set(payload, p);

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
    Atomics.store(sI, base + S_SEQ, (seq + 2) | 0);

    this.w = p + len;
    this.lastRv = rv;
    this.next = next + 1;
    return next;
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
    // 1. Keep at most C events (OLDEST first, before any slot is reused).
    if (this.next - this.oldest > c) this.evictTo(this.next - c, this.rvOf(this.next - c - 1));
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
    if (this.next > this.oldest && this.offsetOf(this.oldest) >= w) {
      // Wrapped: older lap at [t, e), newer lap at [0, w) with w ≤ t. Copy the
      // newer lap to [e, e + w) (free: the old unused tail plus the new half;
      // e + w ≤ 2·old) and repoint its slots under their seqlocks.
      let first = this.oldest;
      while (first < this.next && this.offsetOf(first) >= w) first++;
      const e = align4(this.offsetOf(first - 1) + this.sI[((first - 1) % this.cap) * SLOT_I32 + S_LENGTH]!);
      this.arena.copyWithin(e, 0, w);
      for (let abs = first; abs < this.next; abs++) {
        const slot = abs % this.cap;
        const b = slot * SLOT_I32;
        const seq = this.sI[b + S_SEQ]!;
        // INVARIANT (torn-read detection): a reader that copied from the old
        // place sees SEQ change; bytes at [0, w) are reused only after this.
        Atomics.store(this.sI, b + S_SEQ, (seq + 1) | 0);
        this.sI[b + S_OFFSET] = this.sI[b + S_OFFSET]! + e;
        Atomics.store(this.sI, b + S_SEQ, (seq + 2) | 0);
      }
      this.w = e + w;
    }
    Atomics.store(this.hI, H_ARENA_SIZE, size);
    this.arenaSize = size;
    this.statArenaGrowths++;
  }
}

// ---------------------------------------------------------------------------
// Reader

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
      throw new Error('history ring: handle does not describe a layout-1 history ring');
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
    return this.readInto(absIndex, out, false);
  }

  /**
   * Metadata plus a validated COPY of the payload into out.payload[0 .. out.length).
   * Allocation-free unless out.payload is too small (then replaced by a larger buffer).
   */
  read(absIndex: number, out: RingRecord): ReadStatus {
    return this.readInto(absIndex, out, true);
  }

  /** Read and decode one event. Allocates (the decoded objects). */
  decode(absIndex: number): DecodeResult {
    const rec = this.scratch;
    const st = this.readInto(absIndex, rec, true);
    if (st !== ReadStatus.OK) return { status: st, absIndex };
    const event = this.unpackr.unpack(rec.payload.subarray(0, rec.length)) as RingEvent;
    return { status: ReadStatus.OK, absIndex, rv: rec.rv, event };
  }

  /** The RV at `absIndex`, or NaN when not readable (overwritten / not published). */
  rvAt(absIndex: number): number {
    return this.readInto(absIndex, this.scratch, false) === ReadStatus.OK ? this.scratch.rv : NaN;
  }

  /**
   * First absolute index whose RV is > rv (publishedIndex when there is none
   * yet), or TOO_OLD when events after rv have already been evicted
   * (rv < floorRV). The index may be evicted by the time it is read: read()
   * then answers OVERWRITTEN.
   */
  indexAfterRV(rv: number): number {
    for (;;) {
      this.loadHeader();
      if (rv < this.hFloor) return TOO_OLD;
      let lo = this.hOldest;
      let hi = this.hPublished;
      let ok = true;
      while (lo < hi) {
        const mid = lo + Math.floor((hi - lo) / 2);
        const r = this.rvAt(mid);
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

  private readInto(absIndex: number, out: RingRecord, withPayload: boolean): ReadStatus {
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
        let bytesOk = true;
        if (withPayload) bytesOk = this.copyPayload(off, len, out);
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
          out.length = len;
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

  /** Copy arena[off, off+len) into out.payload; false when the words were inconsistent. */
  private copyPayload(off: number, len: number, out: RingRecord): boolean {
    if (off < 0 || len < 1) return false;
    if (off + len > this.arena.length) {
      this.refreshArenaViews(); // the writer grew the arena
      if (off + len > this.arena.length) return false; // torn words: SEQ will have moved
    }
    if (out.payload.length < len) out.payload = new Uint8Array(Math.max(len, out.payload.length * 2));
    const dst = out.payload;
    const src = this.arena;
    let i = 0;
    // Word copy (payloads start 4-aligned). Plain JS loops: Buffer#copy and
    // subarray() would allocate a view per read.
    if ((dst.byteOffset & 3) === 0 && (off & 3) === 0) {
      if (this.dst32Of !== dst) {
        this.dst32 = new Int32Array(dst.buffer, dst.byteOffset, dst.length >> 2);
        this.dst32Of = dst;
      }
      const d32 = this.dst32;
      const s32 = this.arena32;
      const words = len >> 2;
      const o32 = off >> 2;
      for (; i < words; i++) d32[i] = s32[o32 + i]!;
      i = words << 2;
    }
    for (; i < len; i++) dst[i] = src[off + i]!;
    return true;
  }
}
