/**
 * ParkedWatchers: the watchers whose consumer last waited in next() with an
 * empty channel, as the live-first dispatch (src/dispatch/dispatcher.ts,
 * step 0) finds them without walking every candidate.
 *
 * A watcher joins when its consumer parks (Watcher.next, `parkedListed`
 * keeps it from joining twice) and stays listed while it goes on parking
 * between events; the list is compacted (entries whose consumer is not
 * waiting any more, or that ended, leave it and may join again) when a batch
 * starts and when it has doubled since the last compaction. So an entry is a hint: the
 * dispatcher checks `waiting` at use.
 */
import type { Watcher } from '../watch/watcher.js';

/** The list is never compacted below this many entries. */
const MIN_COMPACT_AT = 64;

export class ParkedWatchers {
  private list: (Watcher | undefined)[] = [];
  private n = 0;
  /** The next add compacts first once this many entries are listed (twice what the last compaction kept). */
  private compactAt = MIN_COMPACT_AT;

  /** Entries (some may no longer wait). */
  get count(): number {
    return this.n;
  }

  /** The entry at `i` (i < count). */
  at(i: number): Watcher {
    return this.list[i]!;
  }

  /** `w`'s consumer parked; `openBatch`: the current batch, whose marked entries must stay. */
  add(w: Watcher, openBatch: number): void {
    w.parkedListed = true;
    // Stale entries are dropped once the list has doubled since it was last compacted: amortized O(1) per
    // add, however many consumers park at once (a bound from the index, which beta's unsynced watchers
    // leave, compacted at every add once 10,000 resuming consumers waited: quadratic).
    if (this.n >= this.compactAt) this.compact(openBatch);
    this.list[this.n++] = w;
  }

  /**
   * Keep only the entries whose consumer waits now and those marked for the current batch (`openBatch`,
   * 0: none), in their order; the others may join again. A marked entry stays until its batch is walked:
   * the offers ahead find it here, and the walk skips it for every event of the batch.
   */
  compact(openBatch = 0): void {
    const list = this.list;
    let kept = 0;
    for (let i = 0; i < this.n; i++) {
      const w = list[i]!;
      list[i] = undefined;
      if ((w.waiting && w.accepting) || (openBatch !== 0 && w.liveBatch === openBatch)) list[kept++] = w;
      else w.parkedListed = false;
    }
    this.n = kept;
    this.compactAt = Math.max(MIN_COMPACT_AT, 2 * kept);
  }

  /** Clear every entry's live-first mark (the dispatcher's batch numbers wrapped). */
  unmarkAll(): void {
    for (let i = 0; i < this.n; i++) this.list[i]!.liveBatch = 0;
  }

  /** Forget every entry (the cache stopped). */
  clear(): void {
    for (let i = 0; i < this.n; i++) {
      const w = this.list[i]!;
      w.parkedListed = false;
      w.liveBatch = 0;
    }
    this.list = [];
    this.n = 0;
    this.compactAt = MIN_COMPACT_AT;
  }
}
