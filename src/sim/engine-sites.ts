/**
 * Where the simulator hooks into each mode's catch-up machinery (observation
 * only; every call is passed through):
 *  - alpha: the StallPolicy on the main thread (markUnsynced, onEnded, and
 *    its SyncPass/host via PassObserver.attach);
 *  - beta: BetaSync on the main thread (adopt, onEnded, the hand-back that
 *    resyncs, the worker messages and the ring mirror, timed in real ms) and
 *    the in-process sync worker's WorkerPassHost and SyncPass.
 * Beta's in-process worker host and the hand-back are not public API yet;
 * this file is the one place that reaches them (see docs/tuning.md, "Engine
 * hooks wanted").
 */
import type { BetaSync } from '../beta/beta-sync.js';
import type { SyncWorkerEndpoint } from '../beta/sync-worker-endpoint.js';
import type { WorkerToMain } from '../beta/sync-messages.js';
import type { RingEventRef, WorkerMember, WorkerPassHost } from '../beta/worker-pass-host.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { StallPolicy } from '../sync/stall-policy.js';
import type { PassStats, SyncPass } from '../sync/sync-pass.js';
import type { Watcher } from '../watch/watcher.js';
import type { PassObserver } from './pass-observer.js';

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
}

export function observeAlpha(sp: StallPolicy, o: PassObserver): SiteAccounting {
  const mark = sp.markUnsynced.bind(sp);
  sp.markUnsynced = (w: Watcher): void => {
    const was = w.unsynced;
    mark(w);
    if (!was && w.unsynced) o.unsynced(w.id, sp.unsynced.size);
  };
  const onEnded = sp.onEnded.bind(sp);
  sp.onEnded = (w: Watcher): void => {
    onEnded(w);
    o.ended(w.id);
  };
  o.attach<Watcher, WatchCacheEvent>({ pass: sp.pass, host: sp, idOf: (w) => w.id, onMainThread: true, resyncIsFinal: true });
  return {
    unsynced: () => sp.unsynced.size,
    mainThreadWorkMs: () => sp.scheduler.workMs,
    offThreadWorkMs: () => 0,
    ringMirrorMs: () => 0,
    poll: () => {},
  };
}

/** The parts of BetaSync and WorkerPassHost that are private today. */
interface BetaInternals {
  inProcess: SyncWorkerEndpoint | undefined;
  handBack(id: number, position: number, passPushes: number): void;
  onWorkerMessage(msg: WorkerToMain): void;
}
interface HostInternals {
  pass: SyncPass<RingEventRef, WorkerMember>;
}
interface SchedulerInternals {
  clock: Clock;
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

export function observeBeta(beta: BetaSync, o: PassObserver): SiteAccounting {
  const internals = beta as unknown as BetaInternals;
  let mainMs = 0;
  let ringMs = 0;
  const adopt = beta.adopt.bind(beta);
  beta.adopt = (w: Watcher): void => {
    const t0 = performance.now();
    const was = w.unsynced;
    adopt(w);
    mainMs += performance.now() - t0;
    if (!was && w.unsynced) o.unsynced(w.id, beta.unsynced.size);
  };
  const onEnded = beta.onEnded.bind(beta);
  beta.onEnded = (w: Watcher): void => {
    onEnded(w);
    o.ended(w.id);
  };
  const appended = beta.appended.bind(beta);
  beta.appended = (ev: WatchCacheEvent, prevFrame: Uint8Array | undefined): Uint8Array | undefined => {
    const t0 = performance.now();
    const frame = appended(ev, prevFrame);
    ringMs += performance.now() - t0;
    return frame;
  };
  const handBack = internals.handBack.bind(beta);
  internals.handBack = (id: number, position: number, passPushes: number): void => {
    const w = beta.unsynced.get(id);
    handBack(id, position, passPushes);
    if (w !== undefined && !w.unsynced) o.resynced(id);
  };
  const onMessage = internals.onWorkerMessage.bind(beta);
  internals.onWorkerMessage = (msg: WorkerToMain): void => {
    const t0 = performance.now();
    onMessage(msg);
    mainMs += performance.now() - t0;
  };
  let host: WorkerPassHost | undefined;
  return {
    unsynced: () => beta.unsynced.size,
    mainThreadWorkMs: () => mainMs,
    offThreadWorkMs: () => o.realMs, // measured around every pass (the worker's own figure misses deferred ones)
    ringMirrorMs: () => ringMs,
    poll: () => {
      if (host !== undefined) return;
      host = internals.inProcess?.host;
      if (host === undefined) return;
      const pass = (host as unknown as HostInternals).pass;
      const scheduler = host.scheduler as unknown as SchedulerInternals;
      const view = new WorkerClockView(scheduler.clock);
      scheduler.clock = view;
      o.attach<WorkerMember, RingEventRef>({ pass, host, idOf: (m) => m.id, onMainThread: false, resyncIsFinal: false, spendOffThread: (ms) => view.spend(ms) });
      // One thread: a pass asked for while the last one is still running (in modelled time) starts when it ends.
      const run = pass.run.bind(pass);
      const members = host.members;
      pass.run = (unsynced: Iterable<WorkerMember>, done: (stats: PassStats) => void): void => {
        const wait = view.freeIn();
        if (wait <= 0) run(unsynced, done);
        else view.base.setTimeout(() => run(members.values(), done), wait);
      };
    },
  };
}
