/**
 * EventQueue: a watcher's bounded input channel, a fixed ring of shared
 * WatchEvent references. push/shift allocate nothing; a full queue refuses
 * (the dispatcher never waits on it: what happens to a full channel is the
 * mode's decision, see src/dispatch/full-channel-policy.ts).
 */
import type { WatchEvent } from '../wire/watch-event.js';

export class EventQueue {
  readonly capacity: number;
  private readonly slots: (WatchEvent | undefined)[];
  private head = 0; // next to read
  private count = 0;
  /** The queue was full right before the last shift() that returned an event. */
  shiftedFromFull = false;
  /** Events left right after the last shift() that returned one. */
  leftAfterShift = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`channel capacity must be an integer >= 1, got ${capacity}`);
    this.capacity = capacity;
    this.slots = new Array<WatchEvent | undefined>(capacity).fill(undefined);
  }

  get size(): number {
    return this.count;
  }
  /** One event per slot here. */
  get queuedEvents(): number {
    return this.count;
  }
  get free(): number {
    return this.capacity - this.count;
  }
  get full(): boolean {
    return this.count === this.capacity;
  }

  /** Non-blocking add; false when full. */
  push(event: WatchEvent): boolean {
    if (this.count === this.capacity) return false;
    let tail = this.head + this.count;
    if (tail >= this.capacity) tail -= this.capacity;
    this.slots[tail] = event;
    this.count++;
    return true;
  }

  shift(): WatchEvent | undefined {
    if (this.count === 0) return undefined;
    const ev = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    this.shiftedFromFull = this.count === this.capacity;
    this.count--;
    this.leftAfterShift = this.count;
    return ev;
  }

  clear(): void {
    while (this.count > 0) this.shift();
  }
}
