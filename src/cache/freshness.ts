/**
 * Freshness: waitUntilFresh (seed 001). A read at an RV the cache has not
 * reached waits at most blockTimeoutMs for it, then fails with
 * TooLargeResourceVersionError (504, retry after 1 s, naming both RVs).
 *
 * RV 0 ("any") never waits and never arms a timer; neither does an RV the
 * cache already holds. A timer exists only for a read that really waits.
 * Every read at an RV > 0 is observed in apiserver_watch_cache_read_wait_seconds.
 * While anything waits, the store is asked for progress every 100 ms (if it
 * can), so an idle cache still advances (Kubernetes ConditionalProgressRequester).
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { ServiceUnavailableError, TooLargeResourceVersionError, type WatchCacheError } from '../core/errors.js';

const PROGRESS_REQUEST_PERIOD_MS = 100;

interface Waiter {
  rv: number;
  start: number;
  resolve: () => void;
  reject: (err: WatchCacheError) => void;
  timer: TimerHandle;
}

export class Freshness {
  private readonly clock: Clock;
  private readonly blockTimeoutMs: number;
  private readonly currentRV: () => number;
  private readonly observe: (seconds: number) => void;
  private readonly requestProgress: (() => void) | undefined;
  private readonly waiters = new Set<Waiter>();
  private progressTimer: TimerHandle | undefined;
  private stoppedError: WatchCacheError | undefined;

  constructor(
    clock: Clock,
    blockTimeoutMs: number,
    currentRV: () => number,
    observe: (seconds: number) => void,
    requestProgress?: () => void,
  ) {
    this.clock = clock;
    this.blockTimeoutMs = blockTimeoutMs;
    this.currentRV = currentRV;
    this.observe = observe;
    this.requestProgress = requestProgress;
  }

  /** Reads waiting right now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Resolve once the cache RV >= rv (at once for rv 0), else reject after blockTimeoutMs. */
  wait(rv: number): Promise<void> {
    if (this.stoppedError !== undefined) return Promise.reject(this.stoppedError);
    if (rv === 0) return Promise.resolve(); // "any": never waits, never arms a timer, not observed
    if (rv <= this.currentRV()) {
      this.observe(0);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const start = this.clock.now();
      const waiter: Waiter = {
        rv,
        start,
        resolve,
        reject,
        timer: this.clock.setTimeout(() => {
          this.waiters.delete(waiter);
          this.observe((this.clock.now() - start) / 1000);
          this.updateProgressTimer();
          reject(new TooLargeResourceVersionError(rv, this.currentRV()));
        }, this.blockTimeoutMs),
      };
      this.waiters.add(waiter);
      this.updateProgressTimer();
      this.requestProgress?.();
    });
  }

  /** The cache RV advanced: wake every waiter it satisfies. */
  advanced(rv: number): void {
    if (this.waiters.size === 0) return;
    for (const w of this.waiters) {
      if (w.rv > rv) continue;
      this.waiters.delete(w);
      this.clock.clearTimeout(w.timer);
      this.observe((this.clock.now() - w.start) / 1000);
      w.resolve();
    }
    this.updateProgressTimer();
  }

  /** Reject every waiter and every later wait (cache stopped). */
  stop(): void {
    this.stoppedError = new ServiceUnavailableError('watch cache is stopped');
    for (const w of this.waiters) {
      this.clock.clearTimeout(w.timer);
      w.reject(this.stoppedError);
    }
    this.waiters.clear();
    this.updateProgressTimer();
  }

  private updateProgressTimer(): void {
    if (this.requestProgress === undefined) return;
    if (this.waiters.size === 0) {
      if (this.progressTimer !== undefined) this.clock.clearTimeout(this.progressTimer);
      this.progressTimer = undefined;
      return;
    }
    if (this.progressTimer !== undefined) return;
    const tick = (): void => {
      this.progressTimer = undefined;
      if (this.waiters.size === 0) return;
      this.requestProgress!();
      this.progressTimer = this.clock.setTimeout(tick, PROGRESS_REQUEST_PERIOD_MS);
    };
    this.progressTimer = this.clock.setTimeout(tick, PROGRESS_REQUEST_PERIOD_MS);
  }
}
