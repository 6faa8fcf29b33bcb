/**
 * WatcherChannel: a watcher's bounded input channel, as the dispatcher, the
 * sync pass and the consumer see it. Two implementations:
 *  - EventQueue (src/watch/event-queue.ts): a JS ring of shared WatchEvents
 *    (off and alpha);
 *  - SharedWatcherChannel (src/beta/shared-watcher-channel.ts): references
 *    into the history in a SharedArrayBuffer, written by the main thread
 *    while the watcher is synced and by the sync worker while it is not (beta).
 */
import type { WatchEvent } from '../wire/watch-event.js';

/** shift()'s answer when the referenced event already left the history (the watcher gets its 410). */
export const OVERWRITTEN: unique symbol = Symbol('overwritten');

export interface WatcherChannel {
  readonly capacity: number;
  readonly size: number;
  /** Events queued: `size`, except that a beta run slot (SpscChannel "Run slots") counts each event it holds. */
  readonly queuedEvents: number;
  readonly free: number;
  readonly full: boolean;
  /** Non-blocking add; false when full. */
  push(event: WatchEvent): boolean;
  /** The oldest event, undefined when empty, OVERWRITTEN when it can no longer be read. */
  shift(): WatchEvent | undefined | typeof OVERWRITTEN;
  /**
   * Around the last shift() that returned an event: the channel was full
   * right before it, and what it left. Read with the shift itself, so the
   * consumer asks no size of its own (beta: no Atomics loads of its own).
   */
  readonly shiftedFromFull: boolean;
  readonly leftAfterShift: number;
  /**
   * Optional: the consumer found the channel empty and waits for a push from
   * another thread (beta's sync worker), which then tells it. True when data
   * came meanwhile: read again.
   */
  consumerWaits?(): boolean;
  /** Drop everything queued. */
  clear(): void;
  /** The consumer is gone for good (lets another writer thread stop). */
  cancel?(): void;
  /** Consumed in another thread (cache.watchPort). */
  readonly remote?: boolean;
  /** A remote watch ended: END, or EXPIRED with the 410's numbers (the consuming thread builds the ERROR). */
  endRemote?(expired?: { position: number; oldestMinus1: number }): void;
}
