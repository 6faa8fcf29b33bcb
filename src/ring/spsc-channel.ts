/**
 * SPSC channel: one watcher's bounded input channel in a SharedArrayBuffer.
 * One producer (the dispatcher while the watcher is synced, the sync worker
 * while it is unsynced) pushes references into the history ring; one consumer
 * (the watcher's delivery loop, any thread) pops them. A slot holds a
 * reference, never a copy of the event: the ring's absolute index plus a small
 * "variant" code, because a selector transition changes the type delivered
 * (MODIFIED delivered as ADDED when the object starts matching, as DELETED
 * when it stops).
 *
 * Layout (in one SharedArrayBuffer, from its byteOffset: Int32 header words,
 * then the slots; offsets below are from the channel's start):
 *
 *   word field          written by           meaning
 *   ---- -------------  -------------------  ---------------------------------------------
 *      0 MAGIC          create               0x57435350
 *      1 CAPACITY       create               slots
 *      2 HEAD           consumer, Atomics    next position to pop,  in [0, 2·CAPACITY)
 *      3 TAIL           producer, Atomics    next position to push, in [0, 2·CAPACITY)
 *      4 CLOSED         producer, Atomics    1 after close(); stored after the last push
 *      5 TERMINAL       producer, Atomics    why: a Terminal code (src/protocol/channel-variants.ts)
 *      6 WRITER_OWNER   CAS (handOff)        which thread is the producer: a WriterOwner code (same module)
 *      7 DATA_WAITING   consumer sets 1, producer clears when it wakes the consumer
 *      8 DATA_EPOCH     producer, Atomics    +1 per consumer wake-up (the consumer parks on it)
 *      9 SPACE_WAITING  producer sets 1, consumer clears when it wakes the producer
 *     10 SPACE_EPOCH    consumer, Atomics    +1 per producer wake-up
 *     11 CANCELLED      consumer, Atomics    1: the consumer is gone; the producer should stop
 *
 *   byte 64:                 SLOT[CAPACITY]     Float64: 4·ref + variant, one word per reference
 *
 * A slot packs the reference (an absolute history-ring index, or a bookmark's
 * RV, an integer in [0, 2^51)) and its variant (a Variant of
 * src/protocol/channel-variants.ts: 0 as is, 1 ADDED, 2 DELETED, 3 the
 * engine's BOOKMARK) into one exact Float64 integer, so a push writes one word
 * in one cache line: ref = floor(slot / 4), variant = slot − 4·ref.
 *
 * Positions run over [0, 2·CAPACITY) so full (TAIL − HEAD = CAPACITY) and empty
 * (TAIL = HEAD) differ for any capacity; slot = position mod CAPACITY.
 *
 * Single writer: exactly one producer at a time is a protocol above this
 * module. WRITER_OWNER records who it is; the current producer finishes its
 * pushes and calls handOff(me, next) (a compare-and-swap); the next producer
 * must observe writerOwner === itself (an Atomics load, or its own successful
 * CAS) before its first push. That Atomics pair orders the previous producer's
 * TAIL and slot stores before the new producer's accesses, so TAIL can be read
 * plainly by whoever owns it. close() is also the owner's call.
 *
 * Overwritten events: a reference is only an index. By the time the consumer
 * pops it, the ring may have evicted the event; HistoryRingReader.read() of
 * that index answers ReadStatus.OVERWRITTEN (never wrong bytes), and the
 * watcher must then end with its 410 Expired instead of delivering anything.
 *
 * Owner-local mode (pushLocal/popLocal): while one thread both owns the
 * writer role and is the only consumer (an in-process beta watcher while it
 * is synced), HEAD and TAIL are its own: it keeps them in fields of this
 * object and writes neither word, so a push touches no header word and no
 * Atomics (issue 13, deliverable 2). The shared words are stale meanwhile;
 * handOff() publishes the positions (Atomics stores) before its
 * compare-and-swap, so the next producer starts from them (so does any
 * Atomics-side call on this object: tryPush, pop, the waits), and the first
 * local call after this thread got the role back loads them again. Every
 * reader on this side (size, free, lastPushedRef) answers from the fields
 * while local; nobody else reads HEAD or TAIL of a channel it does not write.
 *
 * Wake-ups: tryPush() calls Atomics.notify only when the consumer announced it
 * may be parked (DATA_WAITING), so a busy consumer costs one Atomics.load per
 * push and no notify. The async waits hold a ref'd keep-alive handle while
 * parked unless keepAlive is false (a bare pending Atomics.waitAsync does not
 * keep Node alive).
 */
import { Terminal, Variant, WriterOwner } from '../protocol/channel-variants.js';
import { waitAsync, type WaitOutcome } from './shared-memory.js';

/** pop(): nothing to pop right now. */
export const POP_EMPTY = -1;
/** pop(): closed and fully drained; see `terminal`. */
export const POP_CLOSED = -2;

/** Everything another thread needs to open the channel (structured-cloneable). */
export interface SpscChannelHandle {
  readonly buffer: SharedArrayBuffer;
  readonly capacity: number;
  /**
   * Where the channel starts in `buffer` (a multiple of 8; default 0): many
   * channels can share one buffer (src/beta/channel-slabs.ts), so a thread
   * that already has the buffer opens a channel from two numbers.
   */
  readonly byteOffset?: number;
}

const MAGIC = 0x57435350;
const HEADER_BYTES = 64;
const H_MAGIC = 0;
const H_CAPACITY = 1;
const H_HEAD = 2;
const H_TAIL = 3;
const H_CLOSED = 4;
const H_TERMINAL = 5;
const H_OWNER = 6;
const H_DATA_WAITING = 7;
const H_DATA_EPOCH = 8;
const H_SPACE_WAITING = 9;
const H_SPACE_EPOCH = 10;
const H_CANCELLED = 11;

const MAX_CAPACITY = 1 << 28;

interface BufferViews {
  i32: Int32Array;
  f64: Float64Array;
}

const VIEWS = new WeakMap<SharedArrayBuffer, BufferViews>();

/** One set of whole-buffer views per buffer (per thread): channels in one slab share them. */
function viewsOf(buffer: SharedArrayBuffer): BufferViews {
  let v = VIEWS.get(buffer);
  if (v === undefined) {
    const words = buffer.byteLength >> 3;
    v = {
      i32: new Int32Array(buffer, 0, words * 2),
      f64: new Float64Array(buffer, 0, words),
    };
    VIEWS.set(buffer, v);
  }
  return v;
}

/** Largest reference a slot holds exactly (4·ref + 3 stays a safe integer). */
export const MAX_SLOT_REF = 2 ** 51 - 1;

/** One slot word: the reference and its variant (0..3). */
function packSlot(ref: number, variant: number): number {
  if (!(ref >= 0 && ref <= MAX_SLOT_REF)) throw new RangeError(`spsc channel: reference ${ref} is not in [0, 2^51)`);
  return ref * 4 + variant;
}

function checkCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_CAPACITY) {
    throw new RangeError(`channel capacity must be an integer in [1, ${MAX_CAPACITY}], got ${capacity}`);
  }
}

function foldOutcome(r: WaitOutcome): 'ok' | 'timed-out' {
  return r === 'timed-out' ? 'timed-out' : 'ok';
}

/**
 * Both endpoints of one channel. Each thread opens its own instance from the
 * handle and uses only its side (tryPush/close/waitForSpace as producer;
 * pop/cancel/waitForData as consumer).
 */
export class SpscChannel {
  // Field order is layout: what pushLocal/popLocal read comes first, so it shares the object's first cache line.
  /** Owner-local mode (see the module doc): HEAD, TAIL and CLOSED live in the three fields below. */
  protected local = false;
  private localClosed = false;
  private localHead = 0;
  private localTail = 0;
  readonly capacity: number;
  private readonly span: number;
  // Views over the whole buffer, shared by every channel in it (one set per buffer: a slab of pooled
  // channels costs one set of typed-array objects, not three per channel), and this channel's bases.
  /** The slot words (4·ref + variant). */
  private readonly refs: Float64Array;
  /** Float64 index of SLOT[0]. */
  private readonly r: number;
  private readonly h: Int32Array;
  /** Int32 index of the header's word 0. */
  private readonly b: number;
  readonly handle: SpscChannelHandle;
  private popped: Variant = Variant.AS_IS;
  /** What the last pop()/popLocal() that took a reference saw (see `poppedFromFull`, `leftAfterPop`). */
  private poppedFull = false;
  private popLeft = 0;
  private wakeCount = 0;

  /** Bytes one channel of `capacity` slots takes in a buffer (a multiple of 8). */
  static bytesFor(capacity: number): number {
    return HEADER_BYTES + capacity * 8;
  }

  /** A new channel of `capacity` slots, owned by `owner`, in a buffer of its own. */
  static create(capacity: number, owner: number = WriterOwner.MAIN): SpscChannel {
    checkCapacity(capacity);
    return SpscChannel.createIn(new SharedArrayBuffer(SpscChannel.bytesFor(capacity)), 0, capacity, owner);
  }

  /**
   * A new channel at `byteOffset` of a shared `buffer` (bytesFor(capacity)
   * bytes from there; the caller owns that region and nobody else uses it).
   * Resets the header, so a region can be reused once no thread uses its
   * previous channel any more.
   */
  static createIn(
    buffer: SharedArrayBuffer,
    byteOffset: number,
    capacity: number,
    owner: number = WriterOwner.MAIN,
  ): SpscChannel {
    return new SpscChannel(SpscChannel.initRegion(buffer, byteOffset, capacity, owner));
  }

  /**
   * Reset the region of a new channel at `byteOffset` of `buffer` (as
   * createIn) and return its handle, for a subclass to construct on.
   */
  static initRegion(
    buffer: SharedArrayBuffer,
    byteOffset: number,
    capacity: number,
    owner: number = WriterOwner.MAIN,
  ): SpscChannelHandle {
    checkCapacity(capacity);
    if (byteOffset % 8 !== 0 || byteOffset < 0 || byteOffset + SpscChannel.bytesFor(capacity) > buffer.byteLength) {
      throw new RangeError(
        `spsc channel: region at ${byteOffset} (${SpscChannel.bytesFor(capacity)} bytes) does not fit a buffer of ${buffer.byteLength}`,
      );
    }
    const h = new Int32Array(buffer, byteOffset, HEADER_BYTES >> 2);
    h.fill(0);
    h[H_MAGIC] = MAGIC;
    h[H_CAPACITY] = capacity;
    h[H_OWNER] = owner | 0;
    // Sharing the handle or the region's offset (postMessage) orders these initial stores before the other side.
    return byteOffset === 0 ? { buffer, capacity } : { buffer, capacity, byteOffset };
  }

  constructor(handle: SpscChannelHandle) {
    const cap = handle.capacity;
    const at = handle.byteOffset ?? 0;
    const views = viewsOf(handle.buffer);
    this.h = views.i32;
    this.b = at >> 2;
    if (this.h[this.b + H_MAGIC] !== MAGIC || this.h[this.b + H_CAPACITY] !== cap) {
      throw new Error('spsc channel: handle does not describe a channel');
    }
    this.handle = handle;
    this.capacity = cap;
    this.span = cap * 2;
    this.refs = views.f64;
    this.r = (at + HEADER_BYTES) >> 3;
  }

  // -- producer side -----------------------------------------------------------

  /**
   * Push a ring reference. Non-blocking: false when the channel is full (or
   * closed). Allocation-free. Only the current writer (see WRITER_OWNER) may call it.
   */
  tryPush(ref: number, variant: Variant = Variant.AS_IS): boolean {
    if (this.local) this.leaveLocal();
    const h = this.h;
    // Own words (single writer; hand-off ordered by the WRITER_OWNER Atomics): plain reads.
    if (h[this.b + H_CLOSED] !== 0) return false;
    const tail = h[this.b + H_TAIL]!;
    let used = tail - Atomics.load(h, this.b + H_HEAD);
    if (used < 0) used += this.span;
    if (used >= this.capacity) return false;
    const slot = tail < this.capacity ? tail : tail - this.capacity;
    this.refs[this.r + slot] = packSlot(ref, variant);
    // INVARIANT (publish ordering): the slot's plain stores precede this
    // Atomics.store; the consumer's Atomics.load of TAIL acquires them.
    Atomics.store(h, this.b + H_TAIL, tail + 1 === this.span ? 0 : tail + 1);
    // Dekker pair with waitForData (both sides Atomics): either the consumer
    // sees the new TAIL before parking, or we see DATA_WAITING here.
    if (Atomics.load(h, this.b + H_DATA_WAITING) !== 0) this.wake(H_DATA_WAITING, H_DATA_EPOCH);
    return true;
  }

  /**
   * tryPush for a thread that owns the writer role and is also the channel's
   * only consumer, which never parks on it (an in-process watcher: the
   * Watcher wakes it, not DATA_EPOCH). The first call enters owner-local
   * mode (module doc): no header word, no Atomics per push. Only valid until
   * this thread hands the role away with handOff(), which publishes what it
   * pushed; after the role came back (this thread observed writerOwner), it
   * may call it again.
   */
  pushLocal(ref: number, variant: Variant): boolean {
    if (!this.local) this.enterLocal();
    if (this.localClosed) return false;
    const tail = this.localTail;
    let used = tail - this.localHead;
    if (used < 0) used += this.span;
    if (used >= this.capacity) return false;
    const slot = tail < this.capacity ? tail : tail - this.capacity;
    this.refs[this.r + slot] = packSlot(ref, variant);
    this.localTail = tail + 1 === this.span ? 0 : tail + 1;
    return true;
  }

  /**
   * End the stream after what was pushed: the consumer drains, then pop()
   * answers POP_CLOSED and `terminal` says why (END, or EXPIRED for a 410).
   * Owner only; idempotent (the first terminal code wins).
   */
  close(terminal: Terminal = Terminal.END): void {
    const h = this.h;
    if (Atomics.load(h, this.b + H_CLOSED) !== 0) return;
    if (this.local) this.leaveLocal(); // the shared TAIL first: CLOSED is stored after it
    this.localClosed = true;
    Atomics.store(h, this.b + H_TERMINAL, terminal);
    // INVARIANT (drain before end): CLOSED is stored after the last TAIL store.
    Atomics.store(h, this.b + H_CLOSED, 1);
    if (Atomics.load(h, this.b + H_DATA_WAITING) !== 0) this.wake(H_DATA_WAITING, H_DATA_EPOCH);
  }

  /** Producer: resolve when there may be room (or the consumer cancelled), or on timeout. */
  waitForSpace(timeoutMs?: number, keepAlive = true): Promise<'ok' | 'timed-out'> {
    const epoch = this.armSpaceWait();
    if (epoch === null) return Promise.resolve('ok');
    return waitAsync(this.h, this.b + H_SPACE_EPOCH, epoch, timeoutMs, keepAlive).then(foldOutcome);
  }

  /** Producer, blocking (worker threads): as waitForSpace. */
  waitForSpaceSync(timeoutMs?: number): 'ok' | 'timed-out' {
    const epoch = this.armSpaceWait();
    if (epoch === null) return 'ok';
    return foldOutcome(
      Atomics.wait(this.h, this.b + H_SPACE_EPOCH, epoch, timeoutMs === undefined ? Infinity : timeoutMs),
    );
  }

  // -- consumer side -----------------------------------------------------------

  /**
   * Pop the oldest reference: an absolute ring index ≥ 0 (its variant in
   * `lastVariant`), POP_EMPTY, or POP_CLOSED once closed and drained.
   * Allocation-free. Consumer only.
   */
  pop(): number {
    if (this.local) this.leaveLocal();
    const h = this.h;
    const head = h[this.b + H_HEAD]!; // own word (single consumer)
    let tail = Atomics.load(h, this.b + H_TAIL);
    if (head === tail) {
      if (Atomics.load(h, this.b + H_CLOSED) === 0) return POP_EMPTY;
      // INVARIANT (drain before end): CLOSED was stored after the last push, so
      // this reload of TAIL sees every push; only an empty channel ends.
      tail = Atomics.load(h, this.b + H_TAIL);
      if (head === tail) return POP_CLOSED;
    }
    // What the consumer asks around a pop, from this one TAIL read (no size/full reads: two Atomics loads each).
    let used = tail - head;
    if (used < 0) used += this.span;
    this.poppedFull = used === this.capacity;
    this.popLeft = used - 1;
    const slot = head < this.capacity ? head : head - this.capacity;
    const packed = this.refs[this.r + slot]!;
    const ref = Math.floor(packed * 0.25);
    this.popped = (packed - ref * 4) as Variant;
    // INVARIANT (slot reuse): the slot is read before HEAD releases it to the producer.
    Atomics.store(h, this.b + H_HEAD, head + 1 === this.span ? 0 : head + 1);
    if (Atomics.load(h, this.b + H_SPACE_WAITING) !== 0) this.wake(H_SPACE_WAITING, H_SPACE_EPOCH);
    return ref;
  }

  /**
   * pop() for the consumer of a channel whose writer role this same thread
   * holds (the pushLocal side of owner-local mode): no header word, no
   * Atomics. Once this thread handed the role away (handOff), the consumer
   * must use pop() until it has the role back.
   */
  popLocal(): number {
    if (!this.local) this.enterLocal();
    const head = this.localHead;
    if (head === this.localTail) return this.localClosed ? POP_CLOSED : POP_EMPTY;
    let used = this.localTail - head;
    if (used < 0) used += this.span;
    this.poppedFull = used === this.capacity;
    this.popLeft = used - 1;
    const slot = head < this.capacity ? head : head - this.capacity;
    const packed = this.refs[this.r + slot]!;
    const ref = Math.floor(packed * 0.25);
    this.popped = (packed - ref * 4) as Variant;
    this.localHead = head + 1 === this.span ? 0 : head + 1;
    return ref;
  }

  /** popLocal() of everything queued, in O(1): the owner-local consumer drops its backlog. */
  discardLocal(): void {
    if (!this.local) this.enterLocal();
    this.localHead = this.localTail;
  }

  /** Variant of the reference the last pop() returned. */
  get lastVariant(): Variant {
    return this.popped;
  }

  /**
   * The channel was full right before the last pop() (or popLocal()) that
   * returned a reference: read from the same TAIL load as the pop, so the
   * consumer's "room again" check costs no Atomics of its own.
   */
  get poppedFromFull(): boolean {
    return this.poppedFull;
  }

  /**
   * References left right after the last pop() that returned one, by the
   * TAIL it read (the producer may have pushed more since: a lower bound).
   */
  get leftAfterPop(): number {
    return this.popLeft;
  }

  /**
   * Consumer: announce that it waits for data without parking on DATA_EPOCH
   * (a consumer woken some other way: the in-process Watcher, which the
   * sync worker's `pushed` notice wakes). The producer's next tryPush sees
   * DATA_WAITING, clears it and counts a wake-up (`wakeups`), so it knows to
   * tell this consumer. False when there is data already (or it closed):
   * then nothing was announced and the consumer should read again (Dekker
   * pair with tryPush, as waitForData).
   */
  announceWait(): boolean {
    return this.armDataWait() !== null;
  }

  /**
   * Consumer: resolve when there may be data or the channel closed ('ok'), or
   * on timeout. Atomics.waitAsync; keepAlive: see shared-memory.ts waitAsync.
   */
  waitForData(timeoutMs?: number, keepAlive = true): Promise<'ok' | 'timed-out'> {
    const epoch = this.armDataWait();
    if (epoch === null) return Promise.resolve('ok');
    return waitAsync(this.h, this.b + H_DATA_EPOCH, epoch, timeoutMs, keepAlive).then(foldOutcome);
  }

  /** Consumer, blocking (worker threads): as waitForData. */
  waitForDataSync(timeoutMs?: number): 'ok' | 'timed-out' {
    const epoch = this.armDataWait();
    if (epoch === null) return 'ok';
    return foldOutcome(
      Atomics.wait(this.h, this.b + H_DATA_EPOCH, epoch, timeoutMs === undefined ? Infinity : timeoutMs),
    );
  }

  /** Consumer: give up (client went away). The producer sees `cancelled` and stops. */
  cancel(): void {
    Atomics.store(this.h, this.b + H_CANCELLED, 1);
    if (Atomics.load(this.h, this.b + H_SPACE_WAITING) !== 0) this.wake(H_SPACE_WAITING, H_SPACE_EPOCH);
  }

  // -- either side -------------------------------------------------------------

  /**
   * The reference pushed last and not yet popped (-1 when empty), with its
   * variant in `lastPushedVariant`. For recovery after a producer thread died:
   * only meaningful while no producer is running.
   */
  lastPushedRef(): number {
    if (this.size === 0) return -1;
    let last = (this.local ? this.localTail : Atomics.load(this.h, this.b + H_TAIL)) - 1;
    if (last < 0) last += this.span;
    const slot = last < this.capacity ? last : last - this.capacity;
    const packed = this.refs[this.r + slot]!;
    const ref = Math.floor(packed * 0.25);
    this.lastPushedVariantValue = (packed - ref * 4) as Variant;
    return ref;
  }

  /** Variant of the reference lastPushedRef() returned. */
  get lastPushedVariant(): Variant {
    return this.lastPushedVariantValue;
  }
  private lastPushedVariantValue: Variant = Variant.AS_IS;

  /** References in the channel. */
  get size(): number {
    let used = this.local
      ? this.localTail - this.localHead
      : Atomics.load(this.h, this.b + H_TAIL) - Atomics.load(this.h, this.b + H_HEAD);
    if (used < 0) used += this.span;
    return used;
  }

  /** Free slots. */
  get free(): number {
    return this.capacity - this.size;
  }

  /** close() was called (data may remain to drain). */
  get closed(): boolean {
    return Atomics.load(this.h, this.b + H_CLOSED) !== 0;
  }

  /** Terminal code set by close() (NONE while open). */
  get terminal(): Terminal {
    return Atomics.load(this.h, this.b + H_TERMINAL) as Terminal;
  }

  /** cancel() was called by the consumer. */
  get cancelled(): boolean {
    return Atomics.load(this.h, this.b + H_CANCELLED) !== 0;
  }

  /** Current producer (WriterOwner value). */
  get writerOwner(): number {
    return Atomics.load(this.h, this.b + H_OWNER);
  }

  /**
   * Pass the producer role from `from` to `to` (compare-and-swap). True when
   * the role was `from` and is now `to`. The caller must be `from` and must
   * not push after a successful hand-off.
   */
  handOff(from: number, to: number): boolean {
    // Owner-local positions are published first: the next producer and this
    // thread's pop() start from them.
    if (this.local) this.leaveLocal();
    // INVARIANT (single writer): the role changes only by CAS from its current
    // holder; the Atomics also order the old producer's TAIL/slot stores
    // before the new producer's first push.
    return Atomics.compareExchange(this.h, this.b + H_OWNER, from, to) === from;
  }

  /** Atomics.notify calls made through this instance (a wake-up counter, not shared). */
  get wakeups(): number {
    return this.wakeCount;
  }

  // -- internals ---------------------------------------------------------------

  /**
   * Owner-local mode on: take the positions from the shared words. The
   * caller holds the writer role, observed through an Atomics load of
   * WRITER_OWNER (or it never gave it away), which orders the previous
   * producer's TAIL and slot stores before these loads.
   */
  private enterLocal(): void {
    const h = this.h;
    this.localHead = Atomics.load(h, this.b + H_HEAD);
    this.localTail = Atomics.load(h, this.b + H_TAIL);
    this.localClosed = Atomics.load(h, this.b + H_CLOSED) !== 0;
    this.local = true;
  }

  /** Owner-local mode off: publish the positions to the shared words (slots before TAIL, as tryPush). */
  protected leaveLocal(): void {
    const h = this.h;
    Atomics.store(h, this.b + H_HEAD, this.localHead);
    Atomics.store(h, this.b + H_TAIL, this.localTail);
    this.local = false;
  }

  /** Register as waiting for data; null when there is no need to park. */
  private armDataWait(): number | null {
    if (this.local) this.leaveLocal();
    const h = this.h;
    const epoch = Atomics.load(h, this.b + H_DATA_EPOCH);
    Atomics.store(h, this.b + H_DATA_WAITING, 1);
    if (Atomics.load(h, this.b + H_TAIL) !== h[this.b + H_HEAD] || Atomics.load(h, this.b + H_CLOSED) !== 0) {
      Atomics.store(h, this.b + H_DATA_WAITING, 0);
      return null;
    }
    return epoch;
  }

  /** Register as waiting for space; null when there is no need to park. */
  private armSpaceWait(): number | null {
    if (this.local) this.leaveLocal();
    const h = this.h;
    const epoch = Atomics.load(h, this.b + H_SPACE_EPOCH);
    Atomics.store(h, this.b + H_SPACE_WAITING, 1);
    if (this.free > 0 || Atomics.load(h, this.b + H_CANCELLED) !== 0) {
      Atomics.store(h, this.b + H_SPACE_WAITING, 0);
      return null;
    }
    return epoch;
  }

  /**
   * Wake a parked consumer without pushing (any thread): for a third party
   * that changed something the consumer checks on wake-up (e.g. "the server
   * ended this watch" while another thread owns the producer side).
   */
  wakeConsumer(): void {
    this.wake(H_DATA_WAITING, H_DATA_EPOCH);
  }

  private wake(waitingWord: number, epochWord: number): void {
    const h = this.h;
    Atomics.store(h, this.b + waitingWord, 0);
    Atomics.add(h, this.b + epochWord, 1);
    Atomics.notify(h, this.b + epochWord);
    this.wakeCount++;
  }
}
