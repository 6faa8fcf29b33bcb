/**
 * VirtualClock: a Clock whose time moves only when told to. The harness and
 * the simulator run the real engine on it, so hours of behaviour run in
 * seconds and a run is reproducible from its seed.
 *
 * Timers fire in (due time, creation order) order. `advance(ms)` runs every
 * timer due up to now + ms, letting promise continuations run between timer
 * callbacks (a setImmediate turn), so async consumers observe each step.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { Prng } from './prng.js';

interface VTimer extends TimerHandle {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** Let every pending promise continuation (and other setImmediate work) run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  private heap: VTimer[] = [];

  private readonly rnd: Prng;

  constructor(start = 1_700_000_000_000, seed = 0x5eed) {
    this.t = start;
    this.rnd = new Prng(seed);
  }

  /** Seeded (mulberry32): a run on a virtual clock is reproducible, jitter included. */
  random(): number {
    return this.rnd.next();
  }

  now(): number {
    return this.t;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer: VTimer = { at: this.t + Math.max(0, delayMs), seq: this.seq++, fn: callback, cancelled: false };
    this.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    (handle as VTimer).cancelled = true;
  }

  /** Real time: work is measured in real milliseconds even when virtual time stands still. */
  workNow(): number {
    return performance.now();
  }

  /** A promise that resolves when virtual time has moved `ms` forward. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimeout(resolve, ms));
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.heap.filter((t) => !t.cancelled).length;
  }

  /**
   * The host thread is busy for `ms` (a modelled cost): time moves forward at
   * once without firing anything; timers that fell due meanwhile fire late,
   * in order, on the next `advance`. The simulator charges sync passes this way.
   */
  spend(ms: number): void {
    if (ms > 0) this.t += ms;
  }

  /** Move time forward to `t` (no-op when already there or past it). */
  advanceTo(t: number): Promise<void> {
    return this.advance(Math.max(0, t - this.t));
  }

  /** Move time forward by `ms`, firing due timers in order, settling after each. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const next = this.peek();
      if (next === undefined || next.at > end) break;
      this.pop();
      if (next.cancelled) continue;
      if (next.at > this.t) this.t = next.at;
      next.fn();
      await settle();
    }
    if (end > this.t) this.t = end; // a timer may have spent time past `end`: never go back
    await settle();
  }

  private peek(): VTimer | undefined {
    return this.heap[0];
  }

  private less(a: VTimer, b: VTimer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(t: VTimer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): VTimer | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
