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
 * Atomics (issue 13, deliverable 2). The fields are shaped for the push (a
 * count and the tail's slot, as an in-process ring: one compare for "full",
 * no position arithmetic) and the head's position for the pop; TAIL's
 * position is head + count, derived when the positions are published. The
 * shared words are stale meanwhile;
 * handOff() publishes the positions (Atomics stores) before its
 * compare-and-swap, so the next producer starts from them (so does any
 * Atomics-side call on this object: tryPush, pop, the waits), and the first
 * local call after this thread got the role back loads them again. Every
 * reader on this side (size, free, lastPushedRef) answers from the fields
 * while local; nobody else reads HEAD or TAIL of a channel it does not write.
 *
 * Batched read (popBatched): a consumer whose producer is another thread
 * that fills the channel in bursts (the beta sync worker) pays for each
 * header word it touches: the producer's core wrote TAIL and reads HEAD, so
 * a pop() that loads TAIL and stores HEAD moves the header's cache line
 * across cores twice per reference (issue 13, deliverable 4). popBatched
 * loads TAIL only when the references it last saw are used up, and stores
 * HEAD once per quarter of the channel and when it took the last one it saw.
 * The producer so sees room up to a quarter late, never early (slots are
 * read before the HEAD store that releases them); any other call on the
 * consumer side first publishes what the batch popped.
 *
 * Batched push (pushBatched/publishPushes): a producer on another thread
 * than its consumer that writes runs of references (the beta sync worker's
 * pass) pays for each Atomics operation and for the header's cache line,
 * which the consumer's core reads (TAIL) and writes (HEAD): tryPush()'s
 * HEAD load, TAIL store and DATA_WAITING load move it across cores for every
 * reference (issue 13, deliverable 4). pushBatched writes the slot and
 * advances a TAIL of its own; publishPushes stores TAIL once for the run
 * (Atomics.store: every slot store before it is visible to a consumer that
 * loads TAIL) and then checks DATA_WAITING once. HEAD is loaded only when
 * the room it last saw is used up, so the producer sees room late, never
 * early. The consumer sees nothing of a run before its publication: the
 * producer decides when (a waiting consumer, a quarter of the channel, the
 * end of its run); any other call on the producer side publishes first.
 *
 * Run slots (pushBatchedRun): one slot may stand for a *run*, consecutive
 * history references first, first+1, ..., first+len−1, all delivered as is
 * (Variant.AS_IS), so a producer that feeds a catching-up watcher a dense
 * stretch of history takes one slot per RUN_MAX events instead of per event,
 * and a channel hand-over to the consumer carries RUN_MAX times as many
 * events (issue 13, deliverable 4: 50,000 events behind were ~500 channel
 * fills of 100 references each, ~93 µs of worker-to-consumer hand-over apiece). Only the batched push makes runs:
 * pushBatchedRun grows the slot it wrote last while that slot is unpublished
 * (no TAIL store has passed it: a published slot is the consumer's and is
 * never written again) and the new reference is the run's last + 1; anything
 * else (another variant, a gap, a publication, RUN_MAX reached) starts a new
 * slot. The live pushes (tryPush, pushLocal, pushLocalWord) never make one.
 *   Encoding: a run word is negative, −1 − (first·RUN_LEN_SPAN + len − 1),
 * with len in [2, RUN_LEN_SPAN] and first in [0, MAX_RUN_REF] (2^41 − 1:
 * first·2^12 + 4095 stays an exact Float64 integer), so it is ≤ −2 and never
 * a single reference's word (≥ 0, bookmarks included); the pops never return
 * it (they return the run's references one by one, so POP_EMPTY and
 * POP_CLOSED keep their meaning). A reference above MAX_RUN_REF is pushed as a
 * single slot.
 *   Bound: a run holds at most RUN_MAX = min(CAPACITY, MAX_RUN_LENGTH = 16)
 * events, so a channel references at most CAPACITY·RUN_MAX ≤ min(CAPACITY²,
 * 16·CAPACITY) events (1,600 for the default 100 slots): what a slow consumer
 * holds back stays bounded by the channel's size, as the KEP's channel cap
 * intends, only in events rather than references. 16, not CAPACITY: smaller
 * runs keep the consumer's bursts and the pass's refills short enough to
 * overlap (RUN_MAX_EVENTS has the figures).
 *   Consumption: every pop (pop, popBatched, popLocal) returns a run's
 * references in order, one per call, exactly once: the run's slot stays
 * queued (HEAD does not pass it) until its last reference is taken, and the
 * consumer counts what it took of it (`runTaken`). Until then `size` counts
 * it as one slot, `leftAfterPop` counts it as left, `poppedFromFull` is false
 * (no slot was released) and popBatched publishes no HEAD.
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

// Owner-local mode (module doc), a small integer so the hot path's test is one compare:
/** The shared HEAD/TAIL/CLOSED words are the truth; the local fields are unused. */
const LOCAL_OFF = 0;
/** Owner-local and open: the local fields are the truth. */
const LOCAL_OPEN = 1;
/** Owner-local and closed (no more pushes; popLocal drains, then answers POP_CLOSED). */
const LOCAL_CLOSED = 2;

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

/**
 * Largest reference a slot holds exactly (4·ref + 3 stays a safe integer).
 * The push paths read this module-private binding, not the export: V8 folds
 * a module's own initialized const into the code, but loads an exported
 * binding and checks it for the hole at every push.
 */
const SLOT_REF_BOUND = 2 ** 51 - 1;
export const MAX_SLOT_REF = SLOT_REF_BOUND;
/**
 * References up to this are in range without comparing against SLOT_REF_BOUND: a small integer (every
 * history index in practice) compares in one integer instruction, while the 2^51 bound is no small
 * integer, so V8 compares it in Float64 (a conversion and a constant load per push).
 */
const SMALL_REF_BOUND = 2 ** 30 - 1;

/** A run word's length field: len − 1 in [1, RUN_LEN_SPAN − 1] (module doc "Run slots"). */
const RUN_LEN_SPAN = 4096;
const RUN_LEN_MASK = RUN_LEN_SPAN - 1;
/** Largest first reference of a run: first·RUN_LEN_SPAN + RUN_LEN_SPAN − 1 stays a safe integer (< 2^53). */
const RUN_REF_BOUND = 2 ** 41 - 1;
export const MAX_RUN_REF = RUN_REF_BOUND;
/**
 * Most events one run slot stands for (a channel's own bound, RUN_MAX, is min(CAPACITY, this); ≤ RUN_LEN_SPAN).
 * Not more: a channel then holds at most 16·CAPACITY events, which keeps the work a consumer finds in one
 * go, and the room a pass refills at a time, small enough to overlap. Measured on the catchup suite (beta,
 * W = 1 and 100, 50,000 events behind, medians of interleaved runs): runs of up to CAPACITY (100) events
 * resynced W = 1 in 173 ms cold and W = 100 in 1.94 s; runs of up to 16 in 110 ms and 1.31 s, with a lower
 * healthy p99 during the catch-up.
 */
const RUN_MAX_EVENTS = 16;
export const MAX_RUN_LENGTH = RUN_MAX_EVENTS;

/** What pushBatchedRun did. */
export const RunPush = {
  /** Nothing: the channel is full (by the HEAD the producer saw) or closed. */
  REFUSED: 0,
  /** The reference took a slot of its own (which may grow into a run). */
  SLOT: 1,
  /** The reference grew the last unpublished slot into a run (or the run by one): no slot taken. */
  GREW: 2,
} as const;
export type RunPush = (typeof RunPush)[keyof typeof RunPush];

/** The slot word of a run of `len` (2..RUN_LEN_SPAN) references from `first` (≤ RUN_REF_BOUND): negative. */
function runWord(first: number, len: number): number {
  return -1 - (first * RUN_LEN_SPAN + (len - 1));
}

/** The first reference of run word `word` (< 0). */
function runFirst(word: number): number {
  return Math.floor((-1 - word) * (1 / RUN_LEN_SPAN));
}

/** The length of run word `word` whose first reference is `first` (runFirst). */
function runLength(word: number, first: number): number {
  return ((-1 - word - first * RUN_LEN_SPAN) & RUN_LEN_MASK) + 1;
}

/** A reference no slot holds exactly (see MAX_SLOT_REF): refused, nothing is pushed. */
function refuseReference(ref: number): never {
  throw new RangeError(`spsc channel: reference ${ref} is not in [0, 2^51)`);
}

/**
 * The variant of slot word `packed` whose reference is `ref` (floor(packed / 4)), as a small integer in
 * every tier. `packed − 4·ref` alone is a heap number to the interpreter (a Float64 element's arithmetic):
 * stored into `popped`, a small-integer field until then, it turned that field's representation to double
 * at the first pop that took a reference, which deprecated the map of every channel alive and migrated
 * each one inside that first dispatch (10,000 watchers registered, then the first event: ~90 ms instead
 * of ~20 ms; issue 13). `& 3` keeps it an int32 in [0, 3] (a Variant), so the field stays a Smi.
 */
function slotVariant(packed: number, ref: number): Variant {
  return ((packed - ref * 4) & 3) as Variant;
}

/** Placeholder of the views' fields until the constructor sets them (see the fields' note). */
const NO_WORDS = new Float64Array(0);
const NO_HEADER = new Int32Array(0);

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
  // Field order is layout: what the live push of a ready word reads comes first (five words after the
  // object's three-word header: localRoom and pushLocalWord, `r` only at the wrap), then what pushLocal
  // and popLocal add, so the live push reads the object's first cache line, at most two.
  // Every field has an initializer of the type the constructor stores (0, a typed array): an ES2022
  // field without one is defined as undefined first, and V8 then keeps a general representation for it
  // (a Smi check or a map check at every load on the push path) instead of a Smi or one known map.
  /** Owner-local: references queued (TAIL − HEAD). */
  private localCount = 0;
  /**
   * CAPACITY while LOCAL_OPEN, -1 otherwise: `localLimit − localCount` is the live push's room, negative
   * unless owner-local and open (localRoom). Set together with `local`, nowhere else.
   */
  private localLimit = -1;
  /** Owner-local: the Float64 index of the slot the next push writes (r + TAIL mod CAPACITY: no base to add per push). */
  private localTailWord = 0;
  // Views over the whole buffer, shared by every channel in it (one set per buffer: a slab of pooled
  // channels costs one set of typed-array objects, not three per channel), and this channel's bases.
  /** The slot words (4·ref + variant). */
  private readonly refs: Float64Array = NO_WORDS;
  /** Float64 index one past the last slot (r + CAPACITY): where the owner-local tail wraps to r. */
  private readonly rEnd: number = 0;
  /** Float64 index of SLOT[0]. */
  private readonly r: number = 0;
  /**
   * Owner-local mode (module doc): LOCAL_OFF, LOCAL_OPEN or LOCAL_CLOSED. While it is not LOCAL_OFF,
   * HEAD, TAIL and CLOSED live in the fields around it (a Smi: the hot path's test is one compare).
   */
  private local: number = LOCAL_OFF;
  readonly capacity: number = 0;
  /** Owner-local: HEAD's position, in [0, 2·CAPACITY). */
  private localHead = 0;
  private readonly span: number = 0;
  private readonly h: Int32Array = NO_HEADER;
  /** Int32 index of the header's word 0. */
  private readonly b: number = 0;
  readonly handle: SpscChannelHandle;
  private popped: Variant = Variant.AS_IS;
  /** What the last pop()/popLocal() that took a reference saw (see `poppedFromFull`, `leftAfterPop`). */
  private poppedFull = false;
  private popLeft = 0;
  private wakeCount = 0;
  // Batched read (popBatched, module doc "Batched read"): while `batching`, the consumer's HEAD is
  // `batchHead` (HEAD's shared word trails it by `batchPending` pops) and `batchTail` is the TAIL it last loaded.
  private batching = false;
  private batchHead = 0;
  private batchTail = 0;
  private batchPending = 0;
  /** Pops per HEAD publication: a quarter of the channel (the room signal's low-water mark), at least 1. */
  private readonly batchSize: number = 1;
  private publishedHead = false;
  // Batched push (pushBatched, module doc "Batched push"): while `pushing`, the producer's TAIL is
  // `pushTail` (TAIL's shared word trails it by `pushPending` pushes) and `pushRoom` the free slots
  // by the HEAD it last loaded, less the pushes since.
  private pushing = false;
  private pushTail = 0;
  private pushRoom = 0;
  private pushPending = 0;
  // Run slots (module doc "Run slots"). Producer: the Float64 index of the slot pushBatchedRun wrote last
  // while it may still grow (unpublished, as is; -1: none) and how many references it stands for. The run's
  // first reference is read back from that slot word: a field holding it would turn to a double field once
  // references pass 2^30 (the map deprecation `slotVariant` documents).
  private runAt = -1;
  private runLen = 0;
  /** Most references one run slot stands for here: RUN_MAX = min(CAPACITY, RUN_MAX_EVENTS) (module doc "Run slots"). */
  private readonly runMax: number = 1;
  /** Consumer: references of the head slot's run already taken (0: none yet; reset when its last is taken). */
  private runTaken = 0;

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
    this.batchSize = Math.max(1, cap >> 2);
    this.runMax = Math.min(cap, RUN_MAX_EVENTS);
    this.refs = views.f64;
    this.r = (at + HEADER_BYTES) >> 3;
    this.rEnd = this.r + cap;
  }

  // -- producer side -----------------------------------------------------------

  /**
   * Push a ring reference. Non-blocking: false when the channel is full (or
   * closed). Allocation-free. Only the current writer (see WRITER_OWNER) may call it.
   */
  tryPush(ref: number, variant: Variant = Variant.AS_IS): boolean {
    this.leaveLocal();
    this.endPushBatch();
    const h = this.h;
    // Own words (single writer; hand-off ordered by the WRITER_OWNER Atomics): plain reads.
    if (h[this.b + H_CLOSED] !== 0) return false;
    const tail = h[this.b + H_TAIL]!;
    let used = tail - Atomics.load(h, this.b + H_HEAD);
    if (used < 0) used += this.span;
    if (used >= this.capacity) return false;
    const slot = tail < this.capacity ? tail : tail - this.capacity;
    if (!(ref >= 0 && ref <= SLOT_REF_BOUND)) return refuseReference(ref);
    this.refs[this.r + slot] = ref * 4 + variant;
    this.publishTail(tail + 1 === this.span ? 0 : tail + 1);
    return true;
  }

  /**
   * tryPush without the publication (module doc "Batched push"): the slot is
   * written and this producer's own TAIL advanced, but the consumer sees the
   * reference only at the next publishPushes() (or any other producer-side
   * call). False when the channel is full by the HEAD it loaded (the
   * references pushed so far stay pending: publish them) or closed.
   * Allocation-free; no Atomics unless it opens a run or its room ran out.
   * Only the current writer may call it.
   */
  pushBatched(ref: number, variant: Variant = Variant.AS_IS): boolean {
    if (!this.pushing && !this.openPushBatch()) return false;
    if (this.pushRoom === 0 && !this.reloadPushRoom()) return false;
    if (!(ref >= 0 && ref <= SLOT_REF_BOUND)) return refuseReference(ref);
    const tail = this.pushTail;
    this.refs[this.r + (tail < this.capacity ? tail : tail - this.capacity)] = ref * 4 + variant;
    this.pushTail = tail + 1 === this.span ? 0 : tail + 1;
    this.pushRoom--;
    this.pushPending++;
    this.runAt = -1; // a reference of its own: no run grows past it
    return true;
  }

  /**
   * pushBatched of a reference delivered as is that may join the last slot
   * (module doc "Run slots"): when the slot this producer wrote last is still
   * unpublished, stands for references up to `ref` − 1, as is, and holds
   * fewer than RUN_MAX, it grows by `ref` (RunPush.GREW: no slot taken, no
   * room needed); otherwise `ref` takes a slot as pushBatched would
   * (RunPush.SLOT), or nothing happens (RunPush.REFUSED: full or closed).
   * Allocation-free. Only the current writer may call it.
   */
  pushBatchedRun(ref: number): RunPush {
    if (!this.pushing && !this.openPushBatch()) return RunPush.REFUSED;
    const at = this.runAt;
    if (at >= 0) {
      const len = this.runLen;
      const word = this.refs[at]!;
      const first = len === 1 ? word * 0.25 : runFirst(word);
      // INVARIANT (publish ordering): `at` is unpublished (runAt is reset at every publication), so the
      // consumer has not read it and cannot until the TAIL store that passes it.
      if (ref === first + len && len < this.runMax) {
        this.refs[at] = runWord(first, len + 1);
        this.runLen = len + 1;
        return RunPush.GREW;
      }
    }
    if (this.pushRoom === 0 && !this.reloadPushRoom()) return RunPush.REFUSED;
    if (!(ref >= 0 && ref <= SLOT_REF_BOUND)) return refuseReference(ref);
    const tail = this.pushTail;
    const word = this.r + (tail < this.capacity ? tail : tail - this.capacity);
    this.refs[word] = ref * 4;
    this.pushTail = tail + 1 === this.span ? 0 : tail + 1;
    this.pushRoom--;
    this.pushPending++;
    // A run word holds first references up to RUN_REF_BOUND only: above it, single slots (refused as a run).
    this.runAt = ref <= RUN_REF_BOUND ? word : -1;
    this.runLen = 1;
    return RunPush.SLOT;
  }

  /**
   * Producer side: the HEAD word the consumer last published (a slot index in [0, 2·CAPACITY)). It moves
   * exactly when the consumer publishes what it read (has it read since? src/beta/consumer-window.ts).
   */
  get consumerHead(): number {
    return Atomics.load(this.h, this.b + H_HEAD);
  }

  /** References pushBatched() wrote that the consumer cannot see yet (publishPushes publishes them). */
  get pendingPushes(): number {
    return this.pushPending;
  }

  /**
   * Publish the references pushBatched() wrote: one TAIL store for the run,
   * then one DATA_WAITING check (a consumer that announced it waits is woken,
   * as by tryPush). No-op when nothing is pending. Producer only.
   */
  publishPushes(): void {
    this.runAt = -1; // the slots become the consumer's: none of them grows again
    if (this.pushPending === 0) return;
    this.pushPending = 0;
    this.publishTail(this.pushTail);
  }

  /** Make every slot before `tail` the consumer's (tryPush, publishPushes): one TAIL store, one wait check. */
  private publishTail(tail: number): void {
    const h = this.h;
    // INVARIANT (publish ordering): the slots' plain stores precede this Atomics.store; the consumer's
    // Atomics.load of TAIL acquires them.
    Atomics.store(h, this.b + H_TAIL, tail);
    // Dekker pair with waitForData (both sides Atomics): either the consumer sees the new TAIL before
    // parking, or we see DATA_WAITING here.
    if (Atomics.load(h, this.b + H_DATA_WAITING) !== 0) this.wake(H_DATA_WAITING, H_DATA_EPOCH);
  }

  /**
   * The consumer announced it waits for data (DATA_WAITING, an Atomics load):
   * a producer in a run publishes now rather than at the run's end.
   */
  get consumerWaiting(): boolean {
    return Atomics.load(this.h, this.b + H_DATA_WAITING) !== 0;
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
    // Kept small and free of recursion: the live push of every synced watcher, it must inline into the
    // dispatch loop, and V8 charges a callee's own inlined code against the caller's inlining budget.
    // Every way off the short path is a `return` of a call, so no value of the loop around it stays
    // live across a call (which would make TurboFan spill it on the short path too).
    if (!(ref >= 0 && ref <= SMALL_REF_BOUND)) return this.pushLocalLargeRef(ref, variant);
    if (this.local !== LOCAL_OPEN) return this.pushLocalEntering(ref, variant);
    return this.pushLocalOpen(ref, variant);
  }

  /** pushLocal of a reference above SMALL_REF_BOUND: the exact range check, then the same push. */
  private pushLocalLargeRef(ref: number, variant: Variant): boolean {
    if (!(ref >= 0 && ref <= SLOT_REF_BOUND)) return refuseReference(ref);
    if (this.local !== LOCAL_OPEN) return this.pushLocalEntering(ref, variant);
    return this.pushLocalOpen(ref, variant);
  }

  /** pushLocal while not LOCAL_OPEN: enter owner-local mode, then push (false when closed). */
  private pushLocalEntering(ref: number, variant: Variant): boolean {
    if (this.local === LOCAL_OFF) this.enterLocal();
    if (this.local !== LOCAL_OPEN) return false;
    return this.pushLocalOpen(ref, variant);
  }

  /** The owner-local push itself (LOCAL_OPEN, ref checked). */
  private pushLocalOpen(ref: number, variant: Variant): boolean {
    if (this.localCount === this.capacity) return false;
    return this.pushLocalWord(ref * 4 + variant);
  }

  /**
   * The owner-local push of a ready slot word (4·ref + variant, ref checked; slotWordOf), for a caller that
   * knows it has room (`localRoom` > 0: LOCAL_OPEN and not full; a subclass's hot path): one slot word and two fields.
   */
  protected pushLocalWord(slotWord: number): true {
    const at = this.localTailWord;
    this.refs[at] = slotWord;
    this.localTailWord = at + 1 === this.rEnd ? this.r : at + 1;
    this.localCount++;
    return true;
  }

  /**
   * For a subclass's hot path: the free slots while owner-local and open (pushLocalWord may push when it is
   * above 0; 0: full, refused), negative in every other state, where pushLocal decides (enter, refuse when
   * closed). Only the owner-local calls open it, and handOff, detach and every Atomics-side call end it
   * (leaveLocal). A number, not two booleans: the hot path's compares both run on every push, so a first
   * refusal needs no code (and no type feedback) that the pushes with room did not run.
   */
  protected get localRoom(): number {
    return this.localLimit - this.localCount;
  }

  /**
   * Enter owner-local mode if it is off (same precondition as pushLocal);
   * true when it is open, false when the channel is closed.
   */
  protected openLocal(): boolean {
    if (this.local === LOCAL_OFF) this.enterLocal();
    return this.local === LOCAL_OPEN;
  }

  /**
   * End the stream after what was pushed: the consumer drains, then pop()
   * answers POP_CLOSED and `terminal` says why (END, or EXPIRED for a 410).
   * Owner only; idempotent (the first terminal code wins).
   */
  close(terminal: Terminal = Terminal.END): void {
    const h = this.h;
    if (Atomics.load(h, this.b + H_CLOSED) !== 0) return;
    this.leaveLocal(); // the shared TAIL first: CLOSED is stored after it
    this.endPushBatch();
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
    this.leaveLocal();
    this.endBatch();
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
    const slot = head < this.capacity ? head : head - this.capacity;
    const ref = this.take(this.refs[this.r + slot]!);
    if (this.runTaken !== 0) return this.heldRun(ref, used); // a run with references left: its slot stays queued
    this.poppedFull = used === this.capacity;
    this.popLeft = used - 1;
    // INVARIANT (slot reuse): the slot is read before HEAD releases it to the producer.
    Atomics.store(h, this.b + H_HEAD, head + 1 === this.span ? 0 : head + 1);
    if (Atomics.load(h, this.b + H_SPACE_WAITING) !== 0) this.wake(H_SPACE_WAITING, H_SPACE_EPOCH);
    return ref;
  }

  /**
   * pop() for a consumer that reads a channel another thread fills in bursts
   * (an in-process beta watcher while the sync worker feeds it): the same
   * answers, but it loads TAIL only when the references it saw are used up,
   * and publishes HEAD (Atomics store, then the SPACE_WAITING check) once per
   * `batchSize` pops, when it took the last reference it saw, and before any
   * other call on this side (module doc "Batched read"). `headPublished`
   * says whether this pop published HEAD: the producer sees room only then.
   * Consumer only; the writer role is another thread's (this instance never
   * pushes while a batch is open: enterLocal, the only way back to pushing
   * here, ends it).
   */
  popBatched(): number {
    this.leaveLocal();
    if (!this.batching) {
      this.batching = true;
      this.batchHead = this.h[this.b + H_HEAD]!; // own word (single consumer)
      this.batchTail = Atomics.load(this.h, this.b + H_TAIL);
      this.batchPending = 0;
    }
    const head = this.batchHead;
    if (head === this.batchTail) {
      this.batchTail = Atomics.load(this.h, this.b + H_TAIL);
      if (head === this.batchTail) {
        // Empty by the latest TAIL: pop() publishes HEAD and answers (a reference pushed meanwhile,
        // POP_EMPTY, or POP_CLOSED after the drain: drain before end).
        this.publishedHead = true;
        return this.pop();
      }
    }
    let used = this.batchTail - head;
    if (used < 0) used += this.span;
    const slot = head < this.capacity ? head : head - this.capacity;
    // INVARIANT (publish ordering): this slot lies before a TAIL this consumer loaded with Atomics (above or
    // at an earlier pop), so the producer's slot store is visible.
    const ref = this.take(this.refs[this.r + slot]!);
    if (this.runTaken !== 0) {
      this.publishedHead = false; // HEAD stays on the run's slot
      return this.heldRun(ref, used);
    }
    this.poppedFull = used === this.capacity;
    this.batchHead = head + 1 === this.span ? 0 : head + 1;
    const pending = this.batchPending + 1;
    let left = used - 1;
    if (left === 0) {
      // The last reference it saw: ask TAIL again, so leftAfterPop is as fresh as pop()'s.
      this.batchTail = Atomics.load(this.h, this.b + H_TAIL);
      left = this.batchTail - this.batchHead;
      if (left < 0) left += this.span;
    }
    this.popLeft = left;
    // INVARIANT (slot reuse): HEAD is published only after the slots it releases were read (above).
    // Published: a quarter of pops since the last publication, the last reference seen, or the pop that
    // gives the channel a quarter free while the producer still sees less (its room signal's mark, so
    // a parked producer learns of the room at the same pop as with pop()).
    const free = this.capacity - left;
    if (left === 0 || pending >= this.batchSize || (free >= this.batchSize && free - pending < this.batchSize)) {
      this.publishBatch();
      this.publishedHead = true;
    } else {
      this.batchPending = pending;
      this.publishedHead = false;
    }
    return ref;
  }

  /** The last popBatched() published HEAD (the producer may see room since). */
  get headPublished(): boolean {
    return this.publishedHead;
  }

  /**
   * pop() for the consumer of a channel whose writer role this same thread
   * holds (the pushLocal side of owner-local mode): no header word, no
   * Atomics. Once this thread handed the role away (handOff), the consumer
   * must use pop() until it has the role back.
   */
  popLocal(): number {
    if (this.local === LOCAL_OFF) this.enterLocal();
    const count = this.localCount;
    if (count === 0) return this.local === LOCAL_CLOSED ? POP_CLOSED : POP_EMPTY;
    const head = this.localHead;
    const slot = head < this.capacity ? head : head - this.capacity;
    // A run here is one the sync worker queued before it handed the channel back (module doc "Run slots").
    const ref = this.take(this.refs[this.r + slot]!);
    if (this.runTaken !== 0) return this.heldRun(ref, count);
    // What the consumer asks around a pop (see pop()): from the local count, no Atomics.
    this.poppedFull = count === this.capacity;
    this.popLeft = count - 1;
    this.localHead = head + 1 === this.span ? 0 : head + 1;
    this.localCount = count - 1;
    return ref;
  }

  /** popLocal() of everything queued, in O(1): the owner-local consumer drops its backlog. */
  discardLocal(): void {
    if (this.local === LOCAL_OFF) this.enterLocal();
    this.localHead = this.localTailPosition();
    this.localCount = 0;
    this.runTaken = 0; // a run it was taking went with the rest
  }

  /**
   * The reference the head slot's word `packed` gives this pop, its variant in `popped`: the slot's own
   * reference, or the next of its run (then `runTaken` ≠ 0 while the run has references left: the caller
   * keeps the slot queued). Every pop path reads its slot through this.
   */
  private take(packed: number): number {
    if (packed < 0) return this.takeFromRun(packed);
    const ref = Math.floor(packed * 0.25);
    this.popped = slotVariant(packed, ref);
    return ref;
  }

  /**
   * The next reference of the run in the head slot, whose word is `packed` (< 0; module doc "Run slots"),
   * counted as taken (`runTaken` back to 0 with its last: the caller then releases the slot).
   */
  private takeFromRun(packed: number): number {
    const first = runFirst(packed);
    const taken = this.runTaken;
    this.runTaken = taken + 1 === runLength(packed, first) ? 0 : taken + 1;
    this.popped = Variant.AS_IS;
    return first + taken;
  }

  /** A pop that took `ref` from a run with references left: its slot stays (no release; `used` slots still queued). */
  private heldRun(ref: number, used: number): number {
    this.poppedFull = false; // no slot was released
    this.popLeft = used;
    return ref;
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
   * sync worker's wake doorbell, or its `pushed` notice, wakes). The
   * producer's next tryPush sees DATA_WAITING, clears it and counts a
   * wake-up (`wakeups`), so it knows to tell this consumer. False when there is data already (or it closed):
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
    let last = (this.local !== LOCAL_OFF ? this.localTailPosition() : Atomics.load(this.h, this.b + H_TAIL)) - 1;
    if (last < 0) last += this.span;
    const slot = last < this.capacity ? last : last - this.capacity;
    const packed = this.refs[this.r + slot]!;
    if (packed < 0) {
      // A run: its last reference (module doc "Run slots").
      const first = runFirst(packed);
      this.lastPushedVariantValue = Variant.AS_IS;
      return first + runLength(packed, first) - 1;
    }
    const ref = Math.floor(packed * 0.25);
    this.lastPushedVariantValue = slotVariant(packed, ref);
    return ref;
  }

  /** Variant of the reference lastPushedRef() returned. */
  get lastPushedVariant(): Variant {
    return this.lastPushedVariantValue;
  }
  private lastPushedVariantValue: Variant = Variant.AS_IS;

  /** References in the channel. */
  get size(): number {
    if (this.local !== LOCAL_OFF) return this.localCount;
    // A consumer inside a batch knows its own HEAD (the shared word trails it).
    const head = this.batching ? this.batchHead : Atomics.load(this.h, this.b + H_HEAD);
    // A producer inside a run knows its own TAIL (the shared word trails it).
    let used = (this.pushing ? this.pushTail : Atomics.load(this.h, this.b + H_TAIL)) - head;
    if (used < 0) used += this.span;
    return used;
  }

  /**
   * Events queued: `size`, with each run slot counted as the events it stands for, less what this consumer
   * took of the head run already (module doc "Run slots"). It walks the queued slots: for reports and
   * tests, not for a hot path.
   */
  get queuedEvents(): number {
    const used = this.size;
    let head =
      this.local !== LOCAL_OFF
        ? this.localHead
        : this.batching
          ? this.batchHead
          : Atomics.load(this.h, this.b + H_HEAD);
    let events = used === 0 ? 0 : -this.runTaken;
    for (let i = 0; i < used; i++) {
      const word = this.refs[this.r + (head < this.capacity ? head : head - this.capacity)]!;
      events += word < 0 ? runLength(word, runFirst(word)) : 1;
      head = head + 1 === this.span ? 0 : head + 1;
    }
    return events;
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
    this.leaveLocal();
    this.endBatch();
    this.endPushBatch();
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
    this.endBatch(); // HEAD's shared word must be the consumer's own first
    this.endPushBatch(); // and TAIL's the producer's
    const h = this.h;
    const head = Atomics.load(h, this.b + H_HEAD);
    const tail = Atomics.load(h, this.b + H_TAIL);
    let count = tail - head;
    if (count < 0) count += this.span;
    this.localHead = head;
    this.localCount = count;
    this.localTailWord = this.r + (tail < this.capacity ? tail : tail - this.capacity);
    const closed = Atomics.load(h, this.b + H_CLOSED) !== 0;
    this.local = closed ? LOCAL_CLOSED : LOCAL_OPEN;
    this.localLimit = closed ? -1 : this.capacity;
  }

  /** Owner-local: TAIL's position, head + count in [0, 2·CAPACITY). */
  private localTailPosition(): number {
    const tail = this.localHead + this.localCount;
    return tail < this.span ? tail : tail - this.span;
  }

  /**
   * Owner-local mode off (no-op when it is off): publish the positions to the
   * shared words (slots before TAIL, as tryPush).
   */
  protected leaveLocal(): void {
    if (this.local === LOCAL_OFF) return;
    const h = this.h;
    Atomics.store(h, this.b + H_HEAD, this.localHead);
    Atomics.store(h, this.b + H_TAIL, this.localTailPosition());
    this.local = LOCAL_OFF;
    this.localLimit = -1;
  }

  /** Register as waiting for data; null when there is no need to park. */
  private armDataWait(): number | null {
    this.leaveLocal();
    this.endBatch(); // the Dekker re-check compares TAIL with the shared HEAD
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
    this.leaveLocal();
    this.endPushBatch(); // a producer parks only on what its consumer can see
    const h = this.h;
    const epoch = Atomics.load(h, this.b + H_SPACE_EPOCH);
    Atomics.store(h, this.b + H_SPACE_WAITING, 1);
    if (this.free > 0 || Atomics.load(h, this.b + H_CANCELLED) !== 0) {
      Atomics.store(h, this.b + H_SPACE_WAITING, 0);
      return null;
    }
    return epoch;
  }

  /** Batched read: publish HEAD (slots before HEAD, as pop()), then wake a producer waiting for space. */
  private publishBatch(): void {
    const h = this.h;
    this.batchPending = 0;
    Atomics.store(h, this.b + H_HEAD, this.batchHead);
    // Dekker pair with waitForSpace, as in pop(): either the producer sees this HEAD or we see SPACE_WAITING.
    if (Atomics.load(h, this.b + H_SPACE_WAITING) !== 0) this.wake(H_SPACE_WAITING, H_SPACE_EPOCH);
  }

  /** Leave a batched read (no-op outside one): HEAD's shared word is the consumer's again. */
  private endBatch(): void {
    if (!this.batching) return;
    if (this.batchPending !== 0) this.publishBatch();
    this.batching = false;
  }

  /** Open a run of batched pushes: this producer's TAIL (its own word) and the room by HEAD. False when closed. */
  private openPushBatch(): boolean {
    this.leaveLocal();
    const h = this.h;
    if (h[this.b + H_CLOSED] !== 0) return false;
    this.pushing = true;
    this.pushTail = h[this.b + H_TAIL]!; // own word (single writer), as in tryPush
    this.pushPending = 0;
    this.runAt = -1;
    this.reloadPushRoom();
    return true;
  }

  /** The room by a fresh HEAD load (the consumer's releases since); false when there is none. */
  private reloadPushRoom(): boolean {
    let used = this.pushTail - Atomics.load(this.h, this.b + H_HEAD);
    if (used < 0) used += this.span;
    // INVARIANT (slot reuse): room only up to the HEAD the consumer published after reading its slots.
    this.pushRoom = this.capacity - used;
    return this.pushRoom > 0;
  }

  /** Leave a run of batched pushes (no-op outside one): publish it; TAIL's shared word is the truth again. */
  private endPushBatch(): void {
    if (!this.pushing) return;
    this.publishPushes();
    this.pushing = false;
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
