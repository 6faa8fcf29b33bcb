/**
 * SharedWatcherChannel: a beta watcher's channel, as the main thread sees it.
 * The slots live in a SharedArrayBuffer (SpscChannel) and hold references
 * into the history (absolute index + delivery variant), never copies: the
 * main thread pushes while the watcher is synced, the sync worker while it
 * is unsynced (exactly one writer at a time: SpscChannel.writerOwner).
 *
 * The consumer (main thread) resolves a reference to the shared WatchEvent
 * through the main thread's EventHistory (same absolute indices as the
 * ring). A reference to an event the history has already dropped resolves
 * to OVERWRITTEN: the watcher gets its 410, never wrong data.
 *
 * Bookmarks are not history events: they travel as variant BOOKMARK with
 * the RV as the reference; the main thread (their only writer) keeps the
 * shared bookmark objects in a small FIFO beside the channel.
 *
 * A watcher consumed on the main thread has its channel and position cell in
 * a pooled slab region (channel-slabs.ts): the worker knows the slab, so the
 * watcher travels to it as two numbers. Its live push is SpscChannel
 * .pushLocal (no Atomics): the consumer is this thread, and the main thread
 * knows it owns the writer side until it hands it to the worker itself
 * (`handToWorker`). A watcher consumed in another thread keeps buffers of its
 * own and the Atomics push (its consumer may park on the channel).
 *
 * The sync worker may queue a run slot: consecutive history references
 * delivered as is in one slot (SpscChannel "Run slots"). Every pop path
 * under shift() hands them out one per call, in order, so shift() delivers
 * one event per call as ever, and a reference of a run that the history
 * dropped before shift() reached it is OVERWRITTEN like any other.
 */
import { deliveryOf, Terminal, Variant, variantOf, WriterOwner } from '../protocol/channel-variants.js';
import { PortStateCells } from '../protocol/port-state-cells.js';
import { SpscChannel, POP_CLOSED, POP_EMPTY } from '../ring/spsc-channel.js';
import type { EventHistory } from '../history/event-history.js';
import { OVERWRITTEN, type WatcherChannel } from '../watch/watcher-channel.js';
import type { WatchEvent } from '../wire/watch-event.js';
import { CELL_BYTES, CELL_SLOTS } from '../protocol/cursor-cell.js';
import type { SlabSlot } from './channel-slabs.js';

/**
 * It is its SpscChannel (a subclass, not a wrapper): the live push reads one
 * object, the channel's own owner-local fields, and writes one slot word.
 */
export class SharedWatcherChannel extends SpscChannel implements WatcherChannel {
  /**
   * mainOwns, consumed here and not detached: push and shift take the
   * owner-local path (SpscChannel.pushLocal/popLocal) without further checks.
   */
  private liveLocal = false;
  /** Consumed in another thread (cache.watchPort): the state cells it shares; undefined when consumed here. */
  readonly remoteState: SharedArrayBuffer | undefined;
  /**
   * Called after a pop while the sync worker owns the writer side, with the
   * slots that pop left free: room for it (ControlBlock.signalRoom).
   */
  onRoomForWorker: ((free: number) => void) | undefined;
  /** Called (once) when a remote consumer has stopped: the server side unregisters the watch. */
  onRemoteCancel: (() => void) | undefined;
  /** The watcher's position while the worker serves it (written by the worker; survives a worker crash). */
  readonly positionCell: Float64Array;
  /** Its pooled region (undefined: buffers of its own, a remote watcher). */
  readonly slot: SlabSlot | undefined;
  /**
   * SyncWorkerLink's record of this watcher's introduction to the sync worker, kept here so that a stall
   * reads two fields instead of looking the watcher up in sets: the worker generation it was introduced
   * to (0: none) and whether that introduction still waits for its turn to be posted (buffers of its own
   * only); and, pooled, the id of its selection's spec in the link's WorkerSelectionSpecs.
   */
  introducedTo = 0;
  introPending = false;
  selectionId = 0;
  private readonly history: EventHistory;
  private readonly bookmarks: WatchEvent[] = [];
  /** This thread owns the writer side, as far as it knows (only its own handToWorker clears it). */
  private mainOwns = true;
  /** Its region went back to the pool: nothing touches it through this object any more. */
  private detached = false;

  /**
   * In `region` (a pooled slab region, reset here) or, without one, in
   * buffers of its own; `remoteState` marks a watcher consumed in another thread.
   */
  constructor(
    capacity: number,
    history: EventHistory,
    remoteState?: SharedArrayBuffer,
    region?: { slot: SlabSlot; buffer: SharedArrayBuffer },
  ) {
    const cell =
      region !== undefined
        ? new Float64Array(region.buffer, region.slot.offset, CELL_SLOTS).fill(0)
        : new Float64Array(new SharedArrayBuffer(CELL_BYTES));
    super(
      region !== undefined
        ? SpscChannel.initRegion(region.buffer, region.slot.offset + CELL_BYTES, capacity, WriterOwner.MAIN)
        : SpscChannel.initRegion(new SharedArrayBuffer(SpscChannel.bytesFor(capacity)), 0, capacity, WriterOwner.MAIN),
    );
    this.positionCell = cell;
    this.slot = region?.slot;
    this.history = history;
    this.remoteState = remoteState;
    this.liveLocal = remoteState === undefined;
    // A new channel is this thread's (initRegion above): owner-local from its first push on, so that push
    // takes the short path too (and the push site's feedback is the live push's, not pushOther's).
    if (this.liveLocal) this.openLocal();
  }

  /**
   * Single writer: hand the writer side to the sync worker (a compare-and-
   * swap); from now on this thread pushes only after it observes the worker
   * handed it back. False when this thread did not own it.
   */
  handToWorker(): boolean {
    this.mainOwns = false;
    this.liveLocal = false;
    // The consumer may be parked already (it waited while this thread owned the channel, which announces
    // nothing): count it as waiting, so the worker's first publication tells it (announceWait). At worst one
    // notice too many per stall. Only when the channel is empty: one that holds references (a stall's
    // channel is full) has no parked consumer (this thread's push that queued them woke it), and its
    // consumer announces itself when it has read them (consumerWaits). A mass stall so skips the
    // announcement's Atomics for every watcher (the size of an owner-local channel is a field).
    if (!this.detached && this.size === 0) this.announceWait();
    return this.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER);
  }

  /**
   * The consumer found the channel empty and waits (Watcher.next). While the
   * worker owns the writer side it announces that in the channel, so the
   * worker tells the main thread to wake this consumer only when it pushed
   * to a waiting one (issue 13, deliverable 4). True: the data came meanwhile, read again.
   */
  consumerWaits(): boolean {
    if (this.mainOwns || this.detached) return false; // this thread's own push wakes it (Watcher.push)
    return !this.announceWait();
  }

  /** The region is about to go back to the pool: this object never touches it again. */
  detach(): void {
    this.detached = true;
    this.liveLocal = false;
    this.leaveLocal();
    this.bookmarks.length = 0;
  }

  /**
   * The server ended a remote watch: close the channel (when this thread owns
   * it) with END, or EXPIRED and the 410's numbers; otherwise raise the ENDED
   * flag in the shared state and wake the consumer.
   */
  get remote(): boolean {
    return this.remoteState !== undefined;
  }

  endRemote(expired?: { position: number; oldestMinus1: number }): void {
    if (this.remoteState === undefined) return;
    const state = new PortStateCells(this.remoteState);
    if (expired !== undefined) state.recordExpiry(expired.position, expired.oldestMinus1);
    if (this.writerOwner === WriterOwner.MAIN) this.close(expired !== undefined ? Terminal.EXPIRED : Terminal.END);
    else {
      state.raiseEnded(expired !== undefined);
      this.wakeConsumer();
    }
  }

  override get size(): number {
    return this.detached ? 0 : super.size;
  }
  override get queuedEvents(): number {
    return this.detached ? 0 : super.queuedEvents;
  }
  override get free(): number {
    return this.detached ? this.capacity : this.capacity - super.size;
  }
  get full(): boolean {
    return !this.detached && super.size === this.capacity;
  }
  /**
   * The channel was full right before the last shift() that returned an event and that shift released a
   * slot (SpscChannel.poppedFromFull: false for a shift inside a run, which keeps its slot).
   */
  get shiftedFromFull(): boolean {
    return this.poppedFromFull;
  }
  /**
   * Slots left right after the last shift() that returned an event (SpscChannel.leftAfterPop; a run partly
   * shifted counts as one): 0 exactly when no event is left, and `capacity` minus it is the free room.
   */
  get leftAfterShift(): number {
    return this.leftAfterPop;
  }
  /** The main thread may push only while it owns the channel. */
  get ownedByMain(): boolean {
    return this.writerOwner === WriterOwner.MAIN;
  }

  push(event: WatchEvent): boolean {
    // The live push of a synced watcher consumed here (issue 13, deliverable 2): owner-local, no Atomics,
    // and small enough to inline into the dispatch loop with pushLocal (everything else is pushOther).
    // `localRoom` ≥ 0 (the channel's own mode) is only ever opened through the owner-local calls this class
    // makes while liveLocal, and handOff/detach end it: on the hot path it stands for liveLocal.
    // The event carries its slot word, made once for every watcher it reaches (WatchEvent.slotWord): the
    // push stores it as is, with no range check or packing of its own (-1: pushOther packs it). A full
    // channel (room 0) is refused here, as pushLocal would: the first refusal, at a mass stall's fill, runs
    // no code the pushes with room did not (no deoptimization of the dispatch loop it is inlined into).
    const word = event.slotWord;
    const room = this.localRoom;
    if (word >= 0 && room >= 0) return room > 0 && this.pushLocalWord(word);
    return this.pushOther(event);
  }

  /** push() off the hot path: the first push after the role came back, a bookmark, a remote consumer. */
  private pushOther(event: WatchEvent): boolean {
    if (this.detached) return false;
    // Single writer: while the sync worker owns the channel the main thread never pushes. Only this
    // thread hands the role away, so while it has not, it owns it without asking (no Atomics load).
    if (!this.mainOwns) {
      if (this.writerOwner !== WriterOwner.MAIN) return false;
      this.mainOwns = true; // the worker handed it back
      this.liveLocal = this.remoteState === undefined;
    }
    if (this.remoteState !== undefined && this.cancelled) {
      const cancel = this.onRemoteCancel;
      this.onRemoteCancel = undefined;
      if (cancel !== undefined) queueMicrotask(cancel);
      return true; // nobody reads it any more: accept and drop
    }
    const local = this.remoteState === undefined;
    if (event.ref < 0) {
      if (event.type !== 'BOOKMARK') throw new Error(`watch event ${event.type}@${event.rv} has no history reference`);
      if (!(local ? this.pushLocal(event.rv, Variant.BOOKMARK) : this.tryPush(event.rv, Variant.BOOKMARK)))
        return false;
      if (local) this.bookmarks.push(event); // a remote consumer builds its own
      return true;
    }
    const variant = variantOf(event.delivery);
    // The consumer of a local channel is this thread and never parks on it: the plain push suffices.
    return local ? this.pushLocal(event.ref, variant) : this.tryPush(event.ref, variant);
  }

  shift(): WatchEvent | undefined | typeof OVERWRITTEN {
    if (this.detached) return undefined;
    // While this thread is the producer of a channel it consumes, both ends are its own: plain loads and stores.
    const local = this.liveLocal;
    // While the worker feeds it (it fills the channel in bursts), the batched read: TAIL loaded once per
    // burst, HEAD stored once per quarter of the channel (SpscChannel "Batched read"), not both per event.
    const fedByWorker = !local && !this.mainOwns;
    const ref = local ? this.popLocal() : fedByWorker ? this.popBatched() : this.pop();
    if (ref === POP_EMPTY || ref === POP_CLOSED) return undefined;
    // Room in a channel the worker feeds: it may be parked because every channel was full. It sees the
    // room only once HEAD is published, so only such a pop can bring its next pass forward.
    if (fedByWorker && this.headPublished) this.onRoomForWorker?.(this.capacity - this.leftAfterPop);
    const variant = this.lastVariant;
    if (variant === Variant.BOOKMARK) return this.bookmarks.shift();
    const h = this.history;
    if (ref < h.startIndex || ref >= h.endIndex) return OVERWRITTEN;
    return h.at(ref).deliver(deliveryOf(variant));
  }

  clear(): void {
    if (this.detached) return;
    if (this.liveLocal) this.discardLocal();
    else while (this.pop() >= 0);
    if (this.bookmarks.length !== 0) this.bookmarks.length = 0; // setting length costs even when it is 0
  }

  override cancel(): void {
    if (!this.detached) super.cancel();
  }
}
