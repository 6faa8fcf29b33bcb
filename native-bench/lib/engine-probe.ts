/**
 * Bench-only probes into a running WatchCache, without changing the engine:
 *
 * - PassProbe, alpha: wraps `cache.stallPolicy.pass.run` on that instance to
 *   add up every pass's stats (the engine keeps only `lastStats`), and reads
 *   the scheduler's pass count and main-thread pass time (`scheduler.workMs`).
 *   Beta: reads the sync worker's cumulative stats (`betaSync.workerStats`:
 *   passes, scanned, pushes, worker-thread time) and times the main thread's
 *   side of catch-up by wrapping `adopt` and the worker-message handler
 *   (hand-back deliveries, consumer wake-ups, expiries).
 * - PhaseProbe wraps the cache's private `history.append`, `state.apply` and
 *   `dispatcher.dispatch` on that instance to time append (history + state),
 *   encode (the one jsonLine per event, made before dispatch, as encode-once
 *   does on first use) and fan-out (dispatch, including waking consumers and
 *   any pass it triggers); beta's ring mirror (`betaSync.appended`: msgpack
 *   encode + ring append + publish) is timed as `ringMs`. It reaches into
 *   private fields: when they are not
 *   there (renamed), `available` is false and the split is reported as such.
 *
 * A public per-phase timing hook in the engine would make PhaseProbe
 * unnecessary (see the suite's README notes).
 */
import type { WatchCache } from '../../src/index.js';
import type { PassStats } from '../../src/sync/sync-pass.js';
import type { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { Delivery } from '../../src/selection/selection.js';

export interface PassTotals {
  passes: number;
  /** Pass time on the main thread (alpha: passes; beta: adopt + hand-back + wake-ups). */
  workMs: number;
  /** Pass time in the sync worker thread (beta only). */
  workerMs: number;
  scanned: number;
  pushes: number;
  cohorts: number;
  resynced: number;
  expired: number;
}

export class PassProbe {
  private readonly cache: WatchCache;
  private scanned = 0;
  private pushes = 0;
  private cohorts = 0;
  private resynced = 0;
  private expired = 0;
  private basePasses = 0;
  private baseWorkMs = 0;
  private betaMainMs = 0;
  private betaBase = { passes: 0, pushes: 0, scanned: 0, workMs: 0 };

  constructor(cache: WatchCache) {
    this.cache = cache;
    const beta = cache.betaSync as unknown as BetaInternals | undefined;
    if (beta !== undefined) {
      const timed = <A extends unknown[]>(fn: (...a: A) => void): ((...a: A) => void) => (...a: A) => {
        const t0 = performance.now();
        fn(...a);
        this.betaMainMs += performance.now() - t0;
      };
      if (typeof beta.adopt === 'function') beta.adopt = timed(beta.adopt.bind(beta));
      if (typeof beta.onWorkerMessage === 'function') beta.onWorkerMessage = timed(beta.onWorkerMessage.bind(beta));
    }
    const stall = cache.stallPolicy;
    if (stall === undefined) return;
    const pass = stall.pass;
    const run = pass.run.bind(pass);
    pass.run = (unsynced, done) =>
      run(unsynced, (stats: PassStats) => {
        this.scanned += stats.scanned;
        this.pushes += stats.pushes;
        this.cohorts += stats.cohorts;
        this.resynced += stats.resynced;
        this.expired += stats.expired;
        done(stats);
      });
  }

  /** Start counting from now. */
  reset(): void {
    this.scanned = this.pushes = this.cohorts = this.resynced = this.expired = 0;
    this.betaMainMs = 0;
    const ws = this.cache.betaSync?.workerStats;
    if (ws !== undefined) this.betaBase = { ...ws };
    const s = this.cache.stallPolicy?.scheduler;
    this.basePasses = s?.passes ?? 0;
    this.baseWorkMs = s?.workMs ?? 0;
  }

  totals(): PassTotals {
    const ws = this.cache.betaSync?.workerStats;
    if (ws !== undefined) {
      const b = this.betaBase;
      return { passes: ws.passes - b.passes, workMs: this.betaMainMs, workerMs: ws.workMs - b.workMs, scanned: ws.scanned - b.scanned, pushes: ws.pushes - b.pushes, cohorts: 0, resynced: 0, expired: 0 };
    }
    const s = this.cache.stallPolicy?.scheduler;
    return {
      passes: (s?.passes ?? 0) - this.basePasses,
      workMs: (s?.workMs ?? 0) - this.baseWorkMs,
      workerMs: 0,
      scanned: this.scanned,
      pushes: this.pushes,
      cohorts: this.cohorts,
      resynced: this.resynced,
      expired: this.expired,
    };
  }
}

interface BetaInternals {
  adopt(w: unknown): void;
  onWorkerMessage(msg: unknown): void;
  appended(e: WatchCacheEvent): void;
}

interface Internals {
  history?: { append(e: WatchCacheEvent): void };
  state?: { apply(e: WatchCacheEvent): void };
  dispatcher?: { dispatch(e: WatchCacheEvent): void };
}

export interface PhaseTotals {
  events: number;
  encodeMs: number;
  appendMs: number;
  /** Beta: mirroring into the shared ring (msgpack encode, ring append, publish). */
  ringMs: number;
  fanoutMs: number;
}

export class PhaseProbe {
  readonly available: boolean;
  private t: PhaseTotals = { events: 0, encodeMs: 0, appendMs: 0, ringMs: 0, fanoutMs: 0 };

  constructor(cache: WatchCache) {
    const x = cache as unknown as Internals;
    const h = x.history;
    const s = x.state;
    const d = x.dispatcher;
    this.available = typeof h?.append === 'function' && typeof s?.apply === 'function' && typeof d?.dispatch === 'function';
    if (!this.available) return;
    const now = (): number => performance.now();
    const append = h!.append.bind(h);
    const apply = s!.apply.bind(s);
    const dispatch = d!.dispatch.bind(d);
    const metrics = cache.metrics;
    h!.append = (e) => {
      const t0 = now();
      append(e);
      this.t.appendMs += now() - t0;
    };
    s!.apply = (e) => {
      const t0 = now();
      apply(e);
      this.t.appendMs += now() - t0;
    };
    const beta = cache.betaSync as unknown as BetaInternals | undefined;
    if (beta !== undefined && typeof beta.appended === 'function') {
      const appended = beta.appended.bind(beta);
      beta.appended = (e) => {
        const t0 = now();
        appended(e);
        this.t.ringMs += now() - t0;
      };
    }
    d!.dispatch = (e) => {
      const t0 = now();
      e.deliver(Delivery.AsIs).jsonLine(metrics);
      const t1 = now();
      dispatch(e);
      const t2 = now();
      this.t.encodeMs += t1 - t0;
      this.t.fanoutMs += t2 - t1;
      this.t.events++;
    };
  }

  reset(): void {
    this.t = { events: 0, encodeMs: 0, appendMs: 0, ringMs: 0, fanoutMs: 0 };
  }

  totals(): PhaseTotals {
    return { ...this.t };
  }
}
