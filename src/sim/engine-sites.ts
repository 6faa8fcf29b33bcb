/**
 * Where the simulator hooks into each mode's catch-up machinery:
 *  - the watchers' sync state through the engine's observer channels
 *    (watchcache:stall, :resync, :expire, :watcher-end, :catchup-main and
 *    :event for beta's ring mirror time; docs/observability.md);
 *  - the passes themselves through the engine's pass channels
 *    (watchcache:pass-start, :pass-work, :pass-resync), which PassObserver
 *    turns into modelled cost in virtual time (alpha: the cache's passes;
 *    beta: the in-process worker's, whose scheduler gets a clock view that
 *    stays busy while a modelled pass runs, through PassScheduler.useClock).
 * Nothing here reaches a private member or wraps a method.
 */
import type { WatchCache } from '../cache/watch-cache.js';
import type { WorkerPassHost } from '../beta/worker-pass-host.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import { observe } from '../observe/channels.js';
import type { SchedulingClock } from '../sync/pass-scheduler.js';
import type { PassObserver } from './pass-observer.js';
import { stallPolicyOf, betaSyncOf } from '../cache/cache-internals.js';

/** What a mode site reports beyond the observer's pass accounting. */
export interface SiteAccounting {
  /** Watchers unsynced now. */
  unsynced(): number;
  /** Real ms the main thread spent on catch-up (alpha: passes; beta: adopt, hand-back, worker messages). */
  mainThreadWorkMs(): number;
  /** Real ms spent in passes off the main thread (beta's worker; 0 for alpha). */
  offThreadWorkMs(): number;
  /** Real ms the main thread spent mirroring events into the shared ring (beta; 0 for alpha). */
  ringMirrorMs(): number;
  /** Beta: attach to the in-process worker once it exists (it is created asynchronously). */
  poll(): void;
  /** Unsubscribe from the engine's channels. */
  close(): void;
}

/** The watchers' sync state, from the observer channels (both modes); returns the live unsynced count and the unsubscribe. */
function followSyncState(cache: WatchCache, o: PassObserver): { unsynced: () => number; close: () => void } {
  const unsynced = new Set<number>();
  const offs = [
    observe(cache, 'stall', (m) => {
      unsynced.add(m.watcherId);
      o.unsynced(m.watcherId, m.unsynced);
    }),
    observe(cache, 'resync', (m) => {
      unsynced.delete(m.watcherId);
      o.resynced(m.watcherId);
    }),
    observe(cache, 'expire', (m) => {
      unsynced.delete(m.watcherId);
      o.ended(m.watcherId);
    }),
    observe(cache, 'watcherEnd', (m) => {
      unsynced.delete(m.watcherId);
      o.ended(m.watcherId);
    }),
  ];
  return { unsynced: () => unsynced.size, close: () => offs.forEach((off) => off()) };
}

export function observeAlpha(cache: WatchCache, o: PassObserver): SiteAccounting | undefined {
  const sp = stallPolicyOf(cache);
  if (sp === undefined) return undefined;
  const state = followSyncState(cache, o);
  const unfollow = o.follow({ source: cache, onMainThread: true });
  return {
    unsynced: state.unsynced,
    mainThreadWorkMs: () => sp.scheduler.workMs,
    offThreadWorkMs: () => 0,
    ringMirrorMs: () => 0,
    poll: () => {},
    close: () => {
      state.close();
      unfollow();
    },
  };
}

/**
 * The sync worker's own view of time. Under virtual time a pass takes no
 * time at all; a real worker thread is busy while it runs one: it measures
 * that duration (and scales its busy period from it), and it cannot start
 * the next pass before the last one ended. The view is the engine's clock,
 * except that after modelled pass work the worker's time stands at the end
 * of that work (busyUntil) until the engine's clock catches up, its timers
 * fire no earlier than that, and a pass asked for while it is still busy
 * starts when it is free (busyForMs, read by the PassScheduler). The main
 * thread's time is untouched: the passes run off it.
 */
class WorkerClockView implements SchedulingClock {
  private busyUntil = -Infinity;
  readonly base: Clock;
  constructor(base: Clock) {
    this.base = base;
  }
  /** The worker spent `ms` of modelled time from now. */
  spend(ms: number): void {
    this.busyUntil = this.now() + ms;
  }
  /** Engine-clock ms until the worker is free (<= 0: free now). */
  busyForMs(): number {
    return this.busyUntil - this.base.now();
  }
  now(): number {
    const t = this.base.now();
    return t > this.busyUntil ? t : this.busyUntil;
  }
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return this.base.setTimeout(callback, this.now() + Math.max(0, delayMs) - this.base.now());
  }
  clearTimeout(handle: TimerHandle): void {
    this.base.clearTimeout(handle);
  }
  workNow(): number {
    return this.base.workNow();
  }
  random(): number {
    return this.base.random();
  }
}

export function observeBeta(cache: WatchCache, o: PassObserver): SiteAccounting | undefined {
  const beta = betaSyncOf(cache);
  if (beta === undefined) return undefined;
  const state = followSyncState(cache, o);
  let mainMs = 0;
  let ringMs = 0;
  const offs = [
    observe(cache, 'catchUpMain', (m) => {
      mainMs += m.durationMs;
    }),
    observe(cache, 'mirror', (m) => {
      ringMs += m.durationMs;
    }),
  ];
  let host: WorkerPassHost | undefined;
  return {
    unsynced: state.unsynced,
    mainThreadWorkMs: () => mainMs,
    offThreadWorkMs: () => o.realMs, // measured around every pass (the worker's own figure misses deferred ones)
    ringMirrorMs: () => ringMs,
    poll: () => {
      if (host !== undefined) return;
      host = beta.inProcessHost;
      if (host === undefined) return;
      const view = new WorkerClockView(host.scheduler.schedulingClock);
      // One thread: a pass asked for while the last one is still running (in modelled time) starts when it ends.
      host.scheduler.useClock(view);
      // The worker's passes name their host as their `cache` (the worker has no cache).
      offs.push(o.follow({ source: host, onMainThread: false, spendOffThread: (ms) => view.spend(ms) }));
    },
    close: () => {
      state.close();
      for (const off of offs) off();
    },
  };
}
