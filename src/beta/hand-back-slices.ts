/**
 * HandBackSlices: the sync worker's hand-backs, applied a slice per turn of
 * the event loop (issue 13, deliverables 1 and 4).
 *
 * Why: Node hands every message queued on the worker's port to the main
 * thread in one task, and each hand-back costs ~10-15 µs there (the last
 * events pushed, the resync). In the KEP rate variant (1,000 slow watchers
 * handed back and stalled again in waves) runs of 100-400 hand-backs held
 * the main thread 2-6 ms in one go, and the writer's timer and the healthy
 * watchers' events waited behind them. So:
 * 1. `add` (the message handler): wake the watcher's consumer (the worker's
 *    last pushes are queued in its channel) and queue the hand-back; the
 *    first one of a turn schedules a slice.
 * 2. One slice per turn (the clock's setImmediate: timers and I/O run
 *    between two slices), in arrival order: `apply` (hand-back.ts) for up to
 *    HAND_BACK_CHUNK hand-backs or HAND_BACK_SLICE_MS of main-thread time,
 *    whichever comes first (at least HAND_BACK_MIN per slice).
 * 3. `complete()` applies what is left at once: before a relist round trip
 *    and before a restarted worker's re-adopts, which must find every
 *    unsynced watcher the worker's again (none handed back and pending).
 *    `close()` drops them (the cache stops every watcher).
 *
 * Between steps 1 and 2 the watcher stays in the unsynced set, its channel
 * the main thread's (the worker handed the writer side back before its
 * message): nothing pushes into it, no bookmark reaches it (invariant 3),
 * and its consumer reads what the worker queued. Invariant 2 (order, single
 * delivery) holds as at once: its hand-back offers the history from its
 * position up to the last dispatched RV when its slice runs (more events
 * than at the message, never a gap), and the worker forgot it, so nothing
 * else names it until then.
 */
import type { Clock } from '../core/clock.js';
import { NextTurn } from '../core/next-turn.js';

/** At most this many hand-backs are applied per turn of the event loop. */
export const HAND_BACK_CHUNK = 128;
/** A slice stops once it has taken this much main-thread time (checked every HAND_BACK_MIN hand-backs). */
const HAND_BACK_SLICE_MS = 0.5;
/** Hand-backs applied between two looks at the clock (and at least per slice: progress on any machine). */
const HAND_BACK_MIN = 8;

export interface HandBackSteps {
  /** Step 1: wake the consumer of watcher `id` (the worker's last pushes wait in its channel). */
  notify(id: number): void;
  /** Step 2 for one hand-back (hand-back.ts `handBack`). */
  apply(id: number, position: number, passPushes: number): void;
  /** A slice (or a `complete`) applied `count` hand-backs in `durationMs` of main-thread time. */
  sliced?(count: number, durationMs: number): void;
}

export class HandBackSlices {
  private readonly clock: Clock;
  private readonly steps: HandBackSteps;
  /** Queued hand-backs, three numbers each (id, position, pass pushes), in arrival order from `head`. */
  private queue: number[] = [];
  private head = 0;
  private readonly nextSlice: NextTurn;
  private closed = false;

  constructor(clock: Clock, steps: HandBackSteps) {
    this.clock = clock;
    this.steps = steps;
    this.nextSlice = new NextTurn(clock, () => this.run(HAND_BACK_CHUNK, HAND_BACK_SLICE_MS));
  }

  /** Hand-backs queued and not applied yet. */
  get pending(): number {
    return (this.queue.length - this.head) / 3;
  }

  /** Step 1: the worker handed watcher `id` back at `position`. */
  add(id: number, position: number, passPushes: number): void {
    if (this.closed) return;
    this.steps.notify(id);
    this.queue.push(id, position, passPushes);
    this.nextSlice.schedule();
  }

  /** Step 3: every queued hand-back, now. */
  complete(): void {
    if (this.closed) return;
    this.nextSlice.cancel();
    this.run(Infinity, Infinity);
  }

  /** The cache stops: nothing queued is applied. */
  close(): void {
    this.closed = true;
    this.nextSlice.close();
    this.queue = [];
    this.head = 0;
  }

  /** Step 2: up to `n` hand-backs or `budgetMs` of main-thread time, in arrival order. */
  private run(n: number, budgetMs: number): void {
    const t0 = this.clock.workNow();
    let done = 0;
    // The queue and head are read afresh each round: nothing an apply does adds to the queue (the worker's
    // messages come in tasks of their own), but a `complete` or `close` inside one would empty it.
    while (this.head < this.queue.length && done < n) {
      const q = this.queue;
      const at = this.head;
      this.head = at + 3;
      this.steps.apply(q[at]!, q[at + 1]!, q[at + 2]!);
      if (++done % HAND_BACK_MIN === 0 && this.clock.workNow() - t0 >= budgetMs) break;
    }
    if (done > 0) this.steps.sliced?.(done, this.clock.workNow() - t0);
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else this.nextSlice.schedule();
  }
}
