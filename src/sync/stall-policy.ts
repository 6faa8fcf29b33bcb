/**
 * StallPolicy: `alpha` mode's live-path rule and its sync passes on the main
 * thread (KEP-6268 "Live path", "Sync pass", "When passes run").
 *
 * Live path: a failed push of event X marks the watcher unsynced with its
 * position at X - 1 (never lower than before); the dispatcher never waits
 * and never closes. Unsynced watchers are then served by SyncPass against
 * the EventHistory, scheduled by PassScheduler.
 */
import type { Clock } from '../core/clock.js';
import type { FullChannelPolicy } from '../dispatch/full-channel-policy.js';
import type { EventHistory } from '../history/event-history.js';
import type { HistoryInterval } from '../history/history-interval.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { Watcher } from '../watch/watcher.js';
import type { FaultPoints } from '../watch/fault-points.js';
import { offer } from '../watch/offer.js';
import type { PassOptions } from './pass-options.js';
import { PassScheduler } from './pass-scheduler.js';
import { UnsyncedSet } from './unsynced-set.js';
import { channels } from '../observe/channels.js';
import { Offer, SyncPass, type PassHost, type PassStats } from './sync-pass.js';

/** What the cache does when a watcher changes sets or a pass expires it. */
export interface StallHooks {
  /** Stop `watcher` in drain mode: backlog, then one 410 ERROR (`too old resource version: position (oldest - 1)`). */
  expire(watcher: Watcher, oldest: number): void;
  /** The watcher became unsynced (beta: leaves the live path's index: separate sets). */
  unsynced(watcher: Watcher): void;
  /** The watcher resynced (beta: rejoins the live path's index). */
  resynced(watcher: Watcher): void;
  /** The resync point: alpha, the end of the history; beta, the last dispatched RV. */
  resyncPoint(): number;
}

export class StallPolicy implements FullChannelPolicy, PassHost<WatchCacheEvent, Watcher> {
  /** A full channel never makes the live path wait: it may offer to waiting consumers first. */
  readonly liveFirst = true;
  /** The unsynced watchers (insertion order = order they stalled). */
  readonly unsynced: UnsyncedSet<Watcher>;
  readonly scheduler: PassScheduler;
  readonly pass: SyncPass<WatchCacheEvent, Watcher>;
  /** Stats of the last completed pass (tests, simulator). */
  lastStats: PassStats | undefined;
  private readonly clock: Clock;
  private readonly history: EventHistory;
  private readonly metrics: CacheMetrics;
  private readonly hooks: StallHooks;

  /** The cache this policy serves (the observer channels' `cache`). */
  private readonly source: object;

  constructor(
    clock: Clock,
    options: PassOptions,
    history: EventHistory,
    metrics: CacheMetrics,
    hooks: StallHooks,
    source?: object,
    faults?: FaultPoints,
  ) {
    this.source = source ?? this;
    this.clock = clock;
    this.history = history;
    this.metrics = metrics;
    this.hooks = hooks;
    this.unsynced = new UnsyncedSet(metrics, this.source);
    this.pass = new SyncPass(options, this, { source: this.source, faults });
    this.scheduler = new PassScheduler(clock, options, {
      hasWork: () => this.unsynced.size > 0,
      runPass: (done) =>
        this.pass.run(this.unsynced, (stats) => {
          this.lastStats = stats;
          done(stats);
        }),
      observeDuration: (s) => this.metrics.passDuration.observe(s),
      passEnded: (stats, workMs) => {
        if (!channels.pass.hasSubscribers) return;
        const { scanned, pushes, cohorts, resynced, expired } = stats;
        channels.pass.publish({
          cache: this.source,
          thread: 'main',
          passes: 1,
          durationMs: workMs,
          scanned,
          pushes,
          cohorts,
          resynced,
          expired,
        });
      },
    });
  }

  // ---- FullChannelPolicy (live path) ----

  onFull(full: readonly (Watcher | undefined)[], count: number, event: WatchCacheEvent): void {
    for (let i = 0; i < count; i++) {
      const watcher = full[i]!;
      // Invariant 1 (position): a failed push of X leaves the position at most X - 1, never lower
      // than before; X is in the history (appended before dispatch), so a pass re-offers it.
      watcher.cursor.missed(event.rv);
      this.markUnsynced(watcher);
    }
  }

  afterEvent(): boolean {
    return false; // never waits
  }

  onRoom(watcher: Watcher): void {
    if (watcher.unsynced) this.scheduler.onRoom();
  }

  onEnded(watcher: Watcher): void {
    this.unsynced.remove(watcher);
  }

  afterDispatch(): void {
    this.scheduler.afterDispatch();
  }

  close(): void {
    this.scheduler.stop();
    this.unsynced.clear();
  }

  /** Mark a watcher unsynced (a stall): the live path skips it and passes serve it. */
  markUnsynced(watcher: Watcher): void {
    if (!this.unsynced.stall(watcher)) return;
    this.hooks.unsynced(watcher);
    this.scheduler.onStall();
  }

  // ---- PassHost (what a pass needs from alpha) ----

  oldestServableRV(): number | undefined {
    return this.history.oldestServableRV();
  }

  resyncPoint(): number {
    return this.hooks.resyncPoint();
  }

  open(afterRV: number): HistoryInterval {
    return this.history.intervalAfter(afterRV);
  }

  offer(watcher: Watcher, event: WatchCacheEvent): Offer {
    // The same delivery primitive as the live path (selection, push, position).
    const r = offer(watcher, event);
    if (r === Offer.Pushed) this.metrics.deferredEvents.inc();
    return r;
  }

  expire(watcher: Watcher, oldest: number): void {
    this.unsynced.remove(watcher);
    this.hooks.expire(watcher, oldest);
  }

  resync(watcher: Watcher): void {
    this.unsynced.resync(watcher);
    this.hooks.resynced(watcher);
  }

  drop(watcher: Watcher): void {
    this.onEnded(watcher);
  }

  defer(fn: () => void): void {
    this.clock.setTimeout(fn, 0);
  }
}
