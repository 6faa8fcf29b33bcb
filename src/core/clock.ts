/**
 * Injectable time. No module of the engine calls Date.now, setTimeout or
 * performance.now directly: they go through a Clock, so the simulator can run
 * the same engine under virtual time (see src/sim/virtual-clock.ts).
 */

/** An opaque timer handle. */
export interface TimerHandle {
  readonly __timer?: never;
}

export interface Clock {
  /** Milliseconds since the epoch, monotonic within a process (sub-ms precision). */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /**
   * Run `callback` once this turn's callbacks and microtasks are done (Node's
   * setImmediate: no 1 ms timer floor). Optional: without it, setTimeout(0).
   */
  setImmediate?(callback: () => void): void;
  /**
   * Real high-resolution time (ms) for measuring how much work took, even
   * under a virtual clock (the simulator reports real main-thread cost).
   */
  workNow(): number;
  /** A random number in [0, 1) (timer jitter); a virtual clock makes it reproducible. */
  random(): number;
}

/** The real clock: performance.timeOrigin + performance.now(), and Node's timers (unref'd). */
export const realClock: Clock = {
  now(): number {
    return performance.timeOrigin + performance.now();
  },
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const t = setTimeout(callback, Math.max(0, delayMs));
    t.unref();
    return t as unknown as TimerHandle;
  },
  clearTimeout(handle: TimerHandle): void {
    clearTimeout(handle as unknown as NodeJS.Timeout);
  },
  setImmediate(callback: () => void): void {
    setImmediate(callback);
  },
  workNow(): number {
    return performance.now();
  },
  random(): number {
    return Math.random();
  },
};
