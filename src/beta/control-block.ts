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
 */
const SEQ = 0;

export interface ControlSnapshot {
  lastDispatchedRV: number;
  oldestServableRV: number | undefined;
}

export class ControlBlock {
  readonly buffer: SharedArrayBuffer;
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(24)) {
    this.buffer = buffer;
    this.i32 = new Int32Array(buffer, 0, 2);
    this.f64 = new Float64Array(buffer, 8, 2);
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
