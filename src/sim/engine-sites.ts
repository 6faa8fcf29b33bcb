/**
 * Where the simulator hooks into each mode's catch-up machinery:
 *  - the watchers' sync state through the engine's observer channels
 *    (watchcache:stall, :resync, :expire, :watcher-end, :catchup-main and
 *    :event for beta's ring mirror time; docs/observability.md);
 *  - the passes themselves through PassObserver.attach, which interposes on
 *    a SyncPass and its host to model their cost in virtual time (alpha: the
 *    StallPolicy's pass; beta: the in-process worker's pass, whose scheduler
 *    gets a clock view that stays busy while a modelled pass runs).
 * Nothing here reaches a private member.
 */
import type { WatchCache } from '../cache/watch-cache.js';
import type { RingEventRef, WorkerMember, WorkerPassHost } from '../beta/worker-pass-host.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import { observe } from '../observe/channels.js';
import type { PassStats } from '../sync/sync-pass.js';
import type { Watcher } from '../watch/watcher.js';
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
  o.attach<Watcher, WatchCacheEvent>({ pass: sp.pass, host: sp, idOf: (w) => w.id, onMainThread: true });
  return {
    unsynced: state.unsynced,
    mainThreadWorkMs: () => sp.scheduler.workMs,
    offThreadWorkMs: () => 0,
    ringMirrorMs: () => 0,
    poll: () => {},
    close: state.close,
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
 * starts when it is free (see observeBeta). The main thread's time is
 * untouched: the passes run off it.
 */
class WorkerClockView implements Clock {
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
  freeIn(): number {
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
      const pass = host.pass;
      const view = new WorkerClockView(host.scheduler.schedulingClock);
      host.scheduler.useClock(view);
      o.attach<WorkerMember, RingEventRef>({ pass, host, idOf: (m) => m.id, onMainThread: false, spendOffThread: (ms) => view.spend(ms) });
      // One thread: a pass asked for while the last one is still running (in modelled time) starts when it ends.
      const run = pass.run.bind(pass);
      const members = host.members;
      pass.run = (unsynced: Iterable<WorkerMember>, done: (stats: PassStats) => void): void => {
        const wait = view.freeIn();
        if (wait <= 0) run(unsynced, done);
        else view.base.setTimeout(() => run(members.values(), done), wait);
      };
    },
    close: () => {
      state.close();
      for (const off of offs) off();
    },
  };
}
