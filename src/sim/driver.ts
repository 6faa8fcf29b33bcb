/**
 * SimDriver: how a simulated run moves through time. The virtual driver
 * runs the engine on a VirtualClock (timers fire in order, promise
 * continuations settle between them, modelled work moves time forward); the
 * real driver runs the same workload on the real clock with real sleeps, so
 * a test can check that both give the same deliveries.
 */
import { realClock, type Clock } from '../core/clock.js';
import { VirtualClock, settle } from './virtual-clock.js';

export interface SimDriver {
  readonly kind: 'virtual' | 'real';
  readonly clock: Clock;
  /** Move time to clock time `t`, running whatever falls due (timers, continuations). */
  advanceTo(t: number): Promise<void>;
  /** The thread is busy for `ms` of modelled work (virtual only; real work takes real time). */
  spend(ms: number): void;
  /** Let pending continuations run without moving time. */
  settle(): Promise<void>;
}

export function virtualDriver(clock = new VirtualClock()): SimDriver {
  return {
    kind: 'virtual',
    clock,
    // Settle first: what the last step started (store deliveries, reads) happens at its own time.
    advanceTo: async (t) => {
      await settle();
      await clock.advanceTo(t);
    },
    spend: (ms) => clock.spend(ms),
    settle,
  };
}

export function realDriver(): SimDriver {
  return {
    kind: 'real',
    clock: realClock,
    advanceTo: async (t) => {
      const wait = t - realClock.now();
      if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
      await settle();
    },
    spend: () => {},
    settle,
  };
}
