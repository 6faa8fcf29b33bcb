/**
 * StallHandOver: beta's stall, spread over turns of the event loop (issue
 * 13, deliverable 1). When one event fills 10,000 channels at once, the
 * dispatch that offers it must not also hand 10,000 watchers to the sync
 * worker (~2–10 µs each: set membership, index removal, the channel's
 * hand-off, the adopt row): that was a pause of 20–100 ms for every healthy
 * watcher. So:
 * 1. Right after the offers of X (`stalled`, once per event): each position
 *    drops to X − 1 in the cursor cell (the number), the cursor is flagged
 *    unsynced (the flag), the watcher leaves the live index, the stall is
 *    counted and the watcher queued: a few stores per watcher. The dispatch
 *    loop only records the full channels (dispatcher.ts), so its optimized
 *    code never meets the stall's code. From here the live path and the
 *    bookmarks skip the watcher.
 * 2. One slice per turn (the clock's setImmediate: timers and I/O, so the
 *    healthy watchers' events, run between two slices), in stall order: `handOver`
 *    (BetaSync) makes each a member of the unsynced set, hands its channel
 *    to the worker and queues its adopt row.
 *    A watcher that stopped accepting meanwhile is dropped (`drop`). A slice
 *    ends after HAND_OVER_CHUNK watchers or HAND_OVER_SLICE_MS of main-thread
 *    time, whichever comes first (at least HAND_OVER_MIN per slice), so the
 *    healthy watchers' events are dispatched between slices however slow
 *    the machine is.
 * 3. `complete()` hands over what is left at once (before a relist round
 *    trip, which must find every unsynced watcher owned by the worker).
 *
 * Between steps 1 and 2 nothing moves the watcher: the main thread still
 * owns its channel but never pushes into it (the flag), the worker has not
 * heard of it, and its consumer only reads what is already queued.
 */
import type { Clock } from '../core/clock.js';
import { NextTurn } from '../core/next-turn.js';
import type { Watcher } from '../watch/watcher.js';

/** At most this many watchers are handed over per turn of the event loop. */
export const HAND_OVER_CHUNK = 256;
/** A slice stops once it has taken this much main-thread time (checked every HAND_OVER_MIN watchers). */
const HAND_OVER_SLICE_MS = 0.3;
/** Watchers handed over between two looks at the clock (and at least per slice: progress on any machine). */
export const HAND_OVER_MIN = 16;

export interface HandOverSteps {
  /**
   * Step 1's mark for the channels one event (`rv`) found full: position X - 1, the cursor flagged,
   * the stall counted; appends each one that was synced to `into` (UnsyncedSet.markStalled).
   */
  mark(full: readonly (Watcher | undefined)[], count: number, rv: number, into: (Watcher | undefined)[]): number;
  /** Step 2 for one accepting watcher. */
  handOver(w: Watcher): void;
  /** Step 2 for one that stopped accepting before its turn (ended, or draining to its 410), or at close. */
  drop(w: Watcher): void;
  /** A slice of step 2 ended: `count` watchers in `durationMs` of main-thread time. */
  sliced?(count: number, durationMs: number): void;
}

export class StallHandOver {
  private readonly clock: Clock;
  private readonly steps: HandOverSteps;
  private readonly chunk: number;
  private readonly sliceMs: number;
  /** Marked, not yet handed over, in stall order; `head` is the next one. */
  private queue: (Watcher | undefined)[] = [];
  private head = 0;
  /** The next slice (cancelled by `complete` and `close`: a slice that fires after them finds nothing to do). */
  private readonly nextSlice: NextTurn;
  private closed = false;

  constructor(clock: Clock, steps: HandOverSteps, chunk = HAND_OVER_CHUNK, sliceMs = HAND_OVER_SLICE_MS) {
    this.clock = clock;
    this.steps = steps;
    this.chunk = chunk;
    this.sliceMs = sliceMs;
    this.nextSlice = new NextTurn(clock, () => this.run(this.chunk, this.sliceMs));
  }

  /** Watchers marked and not handed over yet. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /**
   * Step 1, right after the offers of X (`rv`): the pushes of X into the
   * channels of `full[0..count)` failed. One call per event, not per watcher.
   */
  stalled(full: readonly (Watcher | undefined)[], count: number, rv: number): void {
    if (this.closed) return;
    // Invariant 1 (position): each position drops to X - 1 at most (SyncCursor.stalledAt); X is in the
    // history and in the ring, so the worker re-offers it.
    if (this.steps.mark(full, count, rv, this.queue) > 0) this.nextSlice.schedule();
  }

  /** Step 3: hand over every marked watcher now. */
  complete(): void {
    this.nextSlice.cancel();
    this.run(Infinity, Infinity);
  }

  /** No more hand-overs (the cache stopped): every marked watcher is dropped. */
  close(): void {
    this.closed = true;
    this.nextSlice.close();
    const q = this.queue;
    for (let i = this.head; i < q.length; i++) this.steps.drop(q[i]!);
    this.queue = [];
    this.head = 0;
  }

  /**
   * Step 2: up to `n` watchers or `budgetMs` of main-thread time, in stall
   * order (invariant 2 needs no more: each has its own channel).
   */
  private run(n: number, budgetMs: number): void {
    const q = this.queue;
    const t0 = this.clock.workNow();
    let done = 0;
    while (this.head < q.length && done < n) {
      const w = q[this.head]!;
      q[this.head++] = undefined; // let it go
      if (w.accepting) this.steps.handOver(w);
      else this.steps.drop(w);
      if (++done % HAND_OVER_MIN === 0 && this.clock.workNow() - t0 >= budgetMs) break;
    }
    this.steps.sliced?.(done, this.clock.workNow() - t0);
    if (this.head === q.length) {
      this.queue = [];
      this.head = 0;
    } else this.nextSlice.schedule();
  }
}
