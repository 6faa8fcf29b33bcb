/**
 * CandidateWalk: one event's walk over the watchers that could select it
 * (WatcherIndex.candidateBuckets), that can stop when its budget of visits is
 * spent and go on from there in a later turn (the dispatcher's live-first
 * walk, src/dispatch/dispatcher.ts: at 100,000 watchers one event's walk
 * held the main thread ~7 ms).
 *
 * 1. `begin`: the event's non-empty candidate buckets, in routing order.
 * 2. `run`: visit each bucket from its cursor (WatcherBucket.cursor) up,
 *    one watcher a budget unit; stop at 0 with the cursor where it is.
 * 3. A bucket walked to its end gets its cursor back to 0; the walk ends
 *    after the last bucket.
 *
 * Each watcher that stays in a bucket is visited exactly once per event,
 * however many turns the walk takes: WatcherBucket.take keeps the visited
 * slots below the cursor when a watcher leaves; a watcher that joins (at the
 * end) is visited too, and its position decides whether it takes the event
 * (invariant 2, in offer()). Allocation-free: the bucket list is reused.
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { Watcher } from '../watch/watcher.js';
import { MAX_CANDIDATE_BUCKETS, type WatcherBucket, type WatcherIndex } from './watcher-index.js';

/** A budget that never runs out (`run` counts it down and stops only at exactly 0). */
export const UNBOUNDED = -1;

export class CandidateWalk {
  private readonly buckets = new Array<WatcherBucket | undefined>(MAX_CANDIDATE_BUCKETS).fill(undefined);
  private count = 0;
  private at = 0;

  /** True from `begin` until the last candidate was visited (or `abandon`). */
  get active(): boolean {
    return this.at < this.count;
  }

  /** Step 1 for `event` (the previous walk must have ended). */
  begin(index: WatcherIndex, event: WatchCacheEvent): void {
    this.count = index.candidateBuckets(event, this.buckets);
    this.at = 0;
  }

  /**
   * Steps 2-3: visit candidates until the walk ends or `budget` visits were made (UNBOUNDED: until it
   * ends). Returns the budget left; the walk stopped early when it is still `active`.
   */
  run(budget: number, visit: (w: Watcher) => void): number {
    const buckets = this.buckets;
    while (this.at < this.count) {
      const bucket = buckets[this.at]!;
      const list = bucket.watchers;
      // The cursor moves before the visit: a visit that takes its watcher out moves the next one into
      // the cursor's slot (WatcherBucket.take).
      while (bucket.cursor < list.length) {
        if (budget === 0) return 0;
        budget--;
        visit(list[bucket.cursor++]!);
      }
      bucket.cursor = 0;
      buckets[this.at++] = undefined;
    }
    return budget;
  }

  /** Drop a walk that has not ended (the cache stopped): its buckets' cursors go back to 0. */
  abandon(): void {
    for (let k = this.at; k < this.count; k++) {
      this.buckets[k]!.cursor = 0;
      this.buckets[k] = undefined;
    }
    this.at = this.count = 0;
  }
}
