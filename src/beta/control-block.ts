/**
 * ControlBlock: the few numbers the main thread publishes to the sync worker
 * in shared memory, read without a message: the last dispatched RV (the
 * beta resync point) and the oldest servable RV of the history (the expiry
 * rule). Two Float64 words behind a seqlock, so a reader never sees a torn
 * pair; one writer (the main thread).
 *
 *   Int32 word 0: SEQ   (odd while the writer updates)
 *   Float64 word 1: LAST_DISPATCHED_RV
 *   Float64 word 2: OLDEST_SERVABLE_RV (NaN: nothing servable yet)
 *   Int32 word 6: ROOM_EPOCH    +1 per room wake-up (the worker parks on it)
 *   Int32 word 7: ROOM_WAITING  worker sets 1 before parking, a consumer clears it when it wakes the worker
 *
 * The room pair lets the worker sleep while nothing it owns can move until a
 * consumer reads (issue 13, deliverables 4 and 6): it parks only then, and a
 * consumer that takes an event out of a worker-owned channel wakes it once
 * that channel has room worth a pass (a quarter of it free: roomWorthAPass).
 * While the worker is not parked a pop costs one Atomics.load and no notify.
 */
const SEQ = 0;
const ROOM_EPOCH = 6;
const ROOM_WAITING = 7;
const BYTES = 32;

/**
 * Room worth a pass in a channel of `capacity` with `free` slots: a quarter
 * of it (the low-water mark). The worker parks only while no member has that
 * much, and a consumer wakes it only once its channel has. A quarter, not
 * half: the refill must land before the consumer drains what is left, or it
 * waits on an empty channel for a cross-thread round trip (issue 13,
 * deliverable 4: at half, one catch-up watcher waited 70-80 times over
 * 50,000 events). Still several slots per wake-up, not one per pop.
 */
export function roomWorthAPass(free: number, capacity: number): boolean {
  return free * 4 >= capacity;
}

export interface ControlSnapshot {
  lastDispatchedRV: number;
  oldestServableRV: number | undefined;
}

export class ControlBlock {
  readonly buffer: SharedArrayBuffer;
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(BYTES)) {
    this.buffer = buffer;
    this.i32 = new Int32Array(buffer, 0, BYTES >> 2);
    this.f64 = new Float64Array(buffer, 8, 2);
  }

  /**
   * Consumer side (any thread), after a pop that left `free` of `capacity`
   * slots free in a channel the worker owns: wake the worker if it waits for
   * room and that is room worth a pass.
   */
  signalRoom(free: number, capacity: number): void {
    const i = this.i32;
    // Dekker pair with armRoomWait (both Atomics): the worker re-checks its channels after setting WAITING
    // (with the same roomWorthAPass rule), the consumer checks WAITING after its pop's HEAD store.
    if (Atomics.load(i, ROOM_WAITING) === 0) return;
    if (!roomWorthAPass(free, capacity)) return;
    Atomics.store(i, ROOM_WAITING, 0);
    Atomics.add(i, ROOM_EPOCH, 1);
    Atomics.notify(i, ROOM_EPOCH);
  }

  /** Worker: announce it is about to park for room; returns the epoch to wait on. Re-check for room after this. */
  armRoomWait(): number {
    const epoch = Atomics.load(this.i32, ROOM_EPOCH);
    Atomics.store(this.i32, ROOM_WAITING, 1);
    return epoch;
  }

  /** Worker: it no longer waits for room. */
  disarmRoomWait(): void {
    Atomics.store(this.i32, ROOM_WAITING, 0);
  }

  /** The Int32 view and word the worker waits on (Atomics.waitAsync on ROOM_EPOCH). */
  get roomWord(): { array: Int32Array; index: number } {
    return { array: this.i32, index: ROOM_EPOCH };
  }

  /** Writer (main thread) only. */
  publish(lastDispatchedRV: number, oldestServableRV: number | undefined): void {
    const seq = Atomics.load(this.i32, SEQ);
    Atomics.store(this.i32, SEQ, seq + 1); // odd: update in progress
    this.f64[0] = lastDispatchedRV;
    this.f64[1] = oldestServableRV ?? NaN;
    Atomics.store(this.i32, SEQ, seq + 2); // even: published (release)
  }

  /** Any thread; fills `out` and returns it. */
  read(out: ControlSnapshot): ControlSnapshot {
    for (;;) {
      const s1 = Atomics.load(this.i32, SEQ);
      if (s1 & 1) continue;
      const last = this.f64[0]!;
      const oldest = this.f64[1]!;
      if (Atomics.load(this.i32, SEQ) !== s1) continue; // torn: retry
      out.lastDispatchedRV = last;
      out.oldestServableRV = Number.isNaN(oldest) ? undefined : oldest;
      return out;
    }
  }
}
