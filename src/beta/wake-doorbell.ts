/**
 * WakeDoorbell: how the sync worker wakes main-thread consumers without a
 * postMessage (issue 13, deliverable 4). A single-producer single-consumer
 * ring of Int32 watcher ids in a SharedArrayBuffer, plus a wait word: the
 * worker (producer) appends the id of a consumer whose channel it just woke
 * (a publication cleared the channel's DATA_WAITING); the main thread
 * (consumer) keeps one Atomics.waitAsync pending on EPOCH while the worker
 * has members, takes every id in one task and wakes those watchers. Many
 * wakes between two of its turns cost the main thread one task, and the
 * worker an Atomics.notify only while the main thread waits (WAITING), not
 * a structured clone and a port message per wake (~34 µs p50, up to ms).
 *
 *   Int32 word 0: HEAD     consumer, Atomics: next position to take
 *   Int32 word 1: TAIL     producer, Atomics: next position to append
 *   Int32 word 2: EPOCH    +1 per wake-up of the consumer (it waits on it)
 *   Int32 word 3: WAITING  consumer sets 1 before it waits, the producer clears it when it wakes it
 *   Int32 word 16...: IDS[capacity] (capacity a power of two; positions are Int32 counters, wrapping)
 *
 * A full ring refuses the id (`ring` answers false): the producer then tells
 * the consumer another way (the worker's `pushed` message), so no wake is
 * ever lost. The positions live only in shared memory, so a producer thread
 * that replaces a dead one continues from the last TAIL it published.
 */
import { waitAsync, type WaitOutcome } from '../ring/shared-memory.js';

const HEAD = 0;
const TAIL = 1;
const EPOCH = 2;
const WAITING = 3;
const IDS = 16;

/** Ids the ring holds by default: more than the waiting watchers of a few turns at W = 1,000. */
const DOORBELL_SLOTS = 4096;

export class WakeDoorbell {
  readonly buffer: SharedArrayBuffer;
  readonly capacity: number;
  private readonly i32: Int32Array;
  private readonly mask: number;
  /** Producer: Atomics.notify calls (wake-ups of a waiting consumer) made through this instance. */
  notifies = 0;

  /** A new doorbell of `capacity` ids (a power of two), or the other thread's view of `buffer`. */
  constructor(buffer: SharedArrayBuffer | number = DOORBELL_SLOTS) {
    if (typeof buffer === 'number') {
      if (!(buffer >= 1 && (buffer & (buffer - 1)) === 0 && buffer <= 1 << 24))
        throw new RangeError(`doorbell capacity must be a power of two in [1, 2^24], got ${buffer}`);
      buffer = new SharedArrayBuffer((IDS + buffer) * 4);
    }
    this.buffer = buffer;
    this.i32 = new Int32Array(buffer);
    this.capacity = this.i32.length - IDS;
    this.mask = this.capacity - 1;
  }

  // -- producer (the sync worker) ---------------------------------------------

  /**
   * Append `id` and wake the consumer if it waits. False when the ring is
   * full: nothing was appended, and the caller must tell the consumer some
   * other way (a message), or that wake is lost.
   */
  ring(id: number): boolean {
    const i = this.i32;
    const tail = Atomics.load(i, TAIL); // its own word, but maybe a dead predecessor's last store
    if (((tail - Atomics.load(i, HEAD)) | 0) >= this.capacity) return false;
    i[IDS + (tail & this.mask)] = id;
    // INVARIANT (publish ordering): the id's plain store precedes this Atomics.store; the consumer's
    // Atomics.load of TAIL acquires it.
    Atomics.store(i, TAIL, (tail + 1) | 0);
    // Dekker pair with armWait (both sides Atomics): either the consumer's re-check after setting WAITING
    // sees this TAIL, or this load sees WAITING and wakes it. A wake is never lost between the two.
    if (Atomics.load(i, WAITING) !== 0) {
      Atomics.store(i, WAITING, 0);
      Atomics.add(i, EPOCH, 1);
      Atomics.notify(i, EPOCH);
      this.notifies++;
    }
    return true;
  }

  // -- consumer (the main thread) ---------------------------------------------

  /** Ids appended and not taken yet. */
  get pending(): number {
    return (Atomics.load(this.i32, TAIL) - Atomics.load(this.i32, HEAD)) | 0;
  }

  /** Move every appended id into `out` (in the order they were appended); returns how many. */
  take(out: number[]): number {
    const i = this.i32;
    const head = Atomics.load(i, HEAD);
    const tail = Atomics.load(i, TAIL);
    const n = (tail - head) | 0;
    for (let k = 0; k < n; k++) out.push(i[IDS + ((head + k) & this.mask)]!);
    // INVARIANT (single delivery): HEAD moves past exactly the ids read above, once, after reading them
    // (and only then may the producer reuse their slots): each appended id is taken exactly once.
    Atomics.store(i, HEAD, tail);
    return n;
  }

  /**
   * Announce that the consumer is about to wait: the epoch to wait on, or
   * null when ids are pending already (take them; nothing was announced).
   */
  armWait(): number | null {
    const i = this.i32;
    const epoch = Atomics.load(i, EPOCH);
    Atomics.store(i, WAITING, 1);
    // Dekker pair with ring(): re-check TAIL after WAITING is set (see there).
    if (Atomics.load(i, TAIL) !== Atomics.load(i, HEAD)) {
      Atomics.store(i, WAITING, 0);
      return null;
    }
    return epoch;
  }

  /**
   * Wait (Atomics.waitAsync) until the producer rings after armWait gave
   * `epoch`, or `release`. Does not keep the process alive: a main thread
   * with nothing else to do exits, as it would with an unref'd worker's
   * message pending.
   */
  wait(epoch: number): Promise<WaitOutcome> {
    return waitAsync(this.i32, EPOCH, epoch, undefined, false);
  }

  /** Settle a pending wait without an id (the consumer is closing). */
  release(): void {
    Atomics.store(this.i32, WAITING, 0);
    Atomics.add(this.i32, EPOCH, 1);
    Atomics.notify(this.i32, EPOCH);
  }
}
