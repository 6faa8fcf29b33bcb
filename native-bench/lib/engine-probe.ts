/**
 * Bench-side observers of a running WatchCache, through the engine's
 * observer API (node:diagnostics_channel, docs/observability.md); nothing
 * here touches a private member or wraps a method:
 *
 * - PassProbe adds up `watchcache:pass` (alpha: main-thread passes; beta:
 *   the sync worker's reports: passes, scanned, pushes, worker-thread time)
 *   and, for beta, `watchcache:catchup-main` (the main thread's share of
 *   catch-up: adopt, hand-back deliveries, consumer wake-ups, expiries).
 * - PhaseProbe adds up `watchcache:event`: per ingested event, append
 *   (history + state), ring (beta's mirror: msgpack encode, ring append,
 *   publish), encode (the JSON line, made once before fan-out) and fan-out.
 *
 * Call close() when done: a subscriber makes the engine time what it publishes.
 */
import type { WatchCache } from '../../src/index.js';
import { observe } from '../../src/observe/channels.js';

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

const zeroPasses = (): PassTotals => ({
  passes: 0,
  workMs: 0,
  workerMs: 0,
  scanned: 0,
  pushes: 0,
  cohorts: 0,
  resynced: 0,
  expired: 0,
});

export class PassProbe {
  private t = zeroPasses();
  private readonly unsubscribe: (() => void)[];

  constructor(cache: WatchCache) {
    this.unsubscribe = [
      observe(cache, 'pass', (m) => {
        const t = this.t;
        t.passes += m.passes;
        if (m.thread === 'main') t.workMs += m.durationMs;
        else t.workerMs += m.durationMs;
        t.scanned += m.scanned;
        t.pushes += m.pushes;
        t.cohorts += m.cohorts;
        t.resynced += m.resynced;
        t.expired += m.expired;
      }),
      observe(cache, 'catchUpMain', (m) => {
        this.t.workMs += m.durationMs;
      }),
    ];
  }

  /** Start counting from now. */
  reset(): void {
    this.t = zeroPasses();
  }

  totals(): PassTotals {
    return { ...this.t };
  }

  close(): void {
    for (const u of this.unsubscribe) u();
  }
}

export interface PhaseTotals {
  events: number;
  encodeMs: number;
  appendMs: number;
  /** Beta: mirroring into the shared ring (msgpack encode, ring append, publish). */
  ringMs: number;
  fanoutMs: number;
}

const zeroPhases = (): PhaseTotals => ({ events: 0, encodeMs: 0, appendMs: 0, ringMs: 0, fanoutMs: 0 });

export class PhaseProbe {
  /** The engine publishes the split itself: always available. */
  readonly available = true;
  private t = zeroPhases();
  private readonly unsubscribe: (() => void)[];

  constructor(cache: WatchCache) {
    this.unsubscribe = [
      observe(cache, 'event', (m) => {
        const t = this.t;
        t.events++;
        t.appendMs += m.appendMs;
        t.encodeMs += m.encodeMs;
        t.fanoutMs += m.fanoutMs;
      }),
      // Beta mirrors after the dispatch, outside the event's own phases: its cost is the mirror channel's.
      observe(cache, 'mirror', (m) => {
        this.t.ringMs += m.durationMs;
      }),
    ];
  }

  reset(): void {
    this.t = zeroPhases();
  }

  totals(): PhaseTotals {
    return { ...this.t };
  }

  close(): void {
    for (const off of this.unsubscribe) off();
  }
}
