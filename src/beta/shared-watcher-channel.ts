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
 */
import { Delivery } from '../selection/selection.js';
import { SpscChannel, POP_CLOSED, POP_EMPTY, Terminal, WriterOwner, type Variant } from '../ring/spsc-channel.js';
import type { EventHistory } from '../history/event-history.js';
import { OVERWRITTEN, type WatcherChannel } from '../watch/watcher-channel.js';
import type { WatchEvent } from '../wire/watch-event.js';
import { CELL_SLOTS } from '../sync/sync-cursor.js';

/** Channel variant codes: the ring's three (as is, ADDED, DELETED) plus our BOOKMARK. */
export const VARIANT_AS_IS = 0;
export const VARIANT_ADDED = 1;
export const VARIANT_DELETED = 2;
export const VARIANT_BOOKMARK = 3;

function variantOf(delivery: Delivery): number {
  return delivery === Delivery.Added ? VARIANT_ADDED : delivery === Delivery.Deleted ? VARIANT_DELETED : VARIANT_AS_IS;
}

function deliveryOf(variant: number): Delivery {
  return variant === VARIANT_ADDED ? Delivery.Added : variant === VARIANT_DELETED ? Delivery.Deleted : Delivery.AsIs;
}

export class SharedWatcherChannel implements WatcherChannel {
  readonly spsc: SpscChannel;
  /** Consumed in another thread (cache.watchPort): the state cells it shares; undefined when consumed here. */
  readonly remoteState: SharedArrayBuffer | undefined;
  /** Called (once) when a remote consumer has stopped: the server side unregisters the watch. */
  onRemoteCancel: (() => void) | undefined;
  /** The watcher's position while the worker serves it (written by the worker; survives a worker crash). */
  readonly positionCell = new Float64Array(new SharedArrayBuffer(8 * CELL_SLOTS));
  private readonly history: EventHistory;
  private readonly bookmarks: WatchEvent[] = [];

  constructor(capacity: number, history: EventHistory, remoteState?: SharedArrayBuffer) {
    this.spsc = SpscChannel.create(capacity, WriterOwner.MAIN);
    this.history = history;
    this.remoteState = remoteState;
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
    const state = this.remoteState;
    if (state === undefined) return;
    const f64 = new Float64Array(state, 0, 3);
    const i32 = new Int32Array(state, 0, 1);
    if (expired !== undefined) {
      f64[1] = expired.position;
      f64[2] = expired.oldestMinus1;
    }
    if (this.spsc.writerOwner === WriterOwner.MAIN) this.spsc.close(expired !== undefined ? Terminal.EXPIRED : Terminal.END);
    else {
      Atomics.store(i32, 0, expired !== undefined ? 2 : 1);
      this.spsc.wakeConsumer();
    }
  }

  get capacity(): number {
    return this.spsc.capacity;
  }
  get size(): number {
    return this.spsc.size;
  }
  get free(): number {
    return this.spsc.free;
  }
  get full(): boolean {
    return this.spsc.free === 0;
  }
  /** The main thread may push only while it owns the channel. */
  get ownedByMain(): boolean {
    return this.spsc.writerOwner === WriterOwner.MAIN;
  }

  push(event: WatchEvent): boolean {
    // Single writer: while the sync worker owns the channel the main thread never pushes.
    if (this.spsc.writerOwner !== WriterOwner.MAIN) return false;
    if (this.remoteState !== undefined && this.spsc.cancelled) {
      const cancel = this.onRemoteCancel;
      this.onRemoteCancel = undefined;
      if (cancel !== undefined) queueMicrotask(cancel);
      return true; // nobody reads it any more: accept and drop
    }
    if (event.type === 'BOOKMARK') {
      if (!this.spsc.tryPush(event.rv, VARIANT_BOOKMARK as Variant)) return false;
      if (this.remoteState === undefined) this.bookmarks.push(event); // a remote consumer builds its own
      return true;
    }
    if (event.ref < 0) throw new Error(`watch event ${event.type}@${event.rv} has no history reference`);
    return this.spsc.tryPush(event.ref, variantOf(event.delivery) as Variant);
  }

  shift(): WatchEvent | undefined | typeof OVERWRITTEN {
    const ref = this.spsc.pop();
    if (ref === POP_EMPTY || ref === POP_CLOSED) return undefined;
    const variant = this.spsc.lastVariant as number;
    if (variant === VARIANT_BOOKMARK) return this.bookmarks.shift();
    const h = this.history;
    if (ref < h.startIndex || ref >= h.endIndex) return OVERWRITTEN;
    return h.at(ref).deliver(deliveryOf(variant));
  }

  clear(): void {
    while (this.spsc.pop() >= 0);
    this.bookmarks.length = 0;
  }

  cancel(): void {
    this.spsc.cancel();
  }
}
