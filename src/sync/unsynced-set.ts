/**
 * UnsyncedSet: the watchers a mode serves by catch-up instead of the live
 * path (KEP "separate sets"), with the set's metrics: alpha's StallPolicy
 * and beta's main-thread side both keep theirs here. Insertion order is the
 * order the watchers stalled (the 'fifo' candidate order relies on it).
 *
 * Entering and leaving move the member's cursor flags with the set, so the
 * cursor's `unsynced` and membership cannot disagree.
 */
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { channels } from '../observe/channels.js';
import { SyncCursor } from './sync-cursor.js';

export interface UnsyncedMember {
  readonly id: number;
  readonly cursor: SyncCursor;
}

export class UnsyncedSet<W extends UnsyncedMember> implements Iterable<W> {
  private readonly members = new Map<number, W>();
  private readonly metrics: CacheMetrics;
  /** The cache this set belongs to (the observer channels' `cache`). */
  private readonly source: object;

  /** Stalls counted but not yet added to the counter (at the next flush: metricsChanged). */
  private pendingStalls = 0;
  /** Watchers marked stalled that have not joined yet (beta's chunked hand-over); the gauge counts them. */
  private joining = 0;
  /**
   * Bring the stall counter and the stalled-watchers gauge up to date, once per turn and before every
   * read (CacheMetrics.batched): 10,000 watchers stalling on one event would otherwise spend ~50 ms on
   * labelled prom-client updates alone (~3 µs each).
   */
  private readonly metricsChanged: () => void;

  constructor(metrics: CacheMetrics, source: object) {
    this.metrics = metrics;
    this.source = source;
    this.metricsChanged = metrics.batched(() => {
      this.metrics.stalledWatchers.set(this.members.size + this.joining);
      if (this.pendingStalls > 0) this.metrics.stalls.inc(this.pendingStalls);
      this.pendingStalls = 0;
    });
  }

  get size(): number {
    return this.members.size;
  }
  has(w: W): boolean {
    return this.members.has(w.id);
  }
  get(id: number): W | undefined {
    return this.members.get(id);
  }
  values(): IterableIterator<W> {
    return this.members.values();
  }
  [Symbol.iterator](): IterableIterator<W> {
    return this.members.values();
  }

  /** A full channel on the live path: enter the set, counted as a stall (once per episode). */
  stall(w: W): boolean {
    const fresh = this.enter(w, 'full');
    if (fresh) this.pendingStalls++; // counted at the next flush (metricsChanged)
    return fresh;
  }

  /**
   * Full channels on the live path, in two steps (beta's chunked stall,
   * src/beta/stall-hand-over.ts). `markStalled`, right after the offers of
   * X (`rv`), moves each position to X - 1 at most and flags the cursor
   * unsynced (the live path and the bookmarks skip it from here), appends it
   * to `into` and counts and observes the stall, once per episode (one
   * already unsynced is skipped). `join` makes it a member later; `remove`
   * before that drops the mark (it ended first). The gauge counts it from
   * the mark on. One call for every channel the event found full: this is
   * all a mass stall costs the dispatch, and its first run is cold code, so
   * the per-watcher work is one flat loop (SyncCursor.stallAll) with no call
   * per watcher. `marked` gets the fresh ones, `into[from..to)`, in one call
   * (beta takes them out of the live index there, in a flat loop of its own).
   * The members of `full` are cursors themselves (a Watcher is its own).
   */
  markStalled(
    full: readonly ((W & SyncCursor) | undefined)[],
    count: number,
    rv: number,
    into: ((W & SyncCursor) | undefined)[],
    marked?: (fresh: readonly (W | undefined)[], from: number, to: number) => void,
  ): number {
    const from = into.length;
    // Invariant 1 (position): each position at X - 1 at most, never lower, in the cell before anyone else reads it.
    const fresh = SyncCursor.stallAll(full, count, rv, into);
    if (fresh === 0) return 0;
    if (marked !== undefined) marked(into, from, from + fresh);
    this.pendingStalls += fresh; // counted at the next flush (metricsChanged)
    this.joining += fresh;
    this.metricsChanged();
    if (channels.stall.hasSubscribers) for (let i = from; i < into.length; i++) this.observeStall(into[i]!, 'full');
    return fresh;
  }

  /** A watcher marked by `markStalled` becomes a member; false when it was removed meanwhile. */
  join(w: W): boolean {
    if (!w.cursor.joinPending) return false;
    w.cursor.setJoinPending(false);
    this.joining--;
    this.members.set(w.id, w);
    return true;
  }

  /**
   * Enter (or re-enter, within the same episode) the set without counting a
   * stall (beta: a watch from an old RV, a re-adopt). True when the watcher
   * was synced until now.
   */
  enter(w: W, cause: 'full' | 'start' = 'start'): boolean {
    const fresh = w.cursor.markUnsynced();
    this.members.set(w.id, w);
    this.metricsChanged();
    if (fresh) this.observeStall(w, cause);
    return fresh;
  }

  private observeStall(w: W, cause: 'full' | 'start'): void {
    if (channels.stall.hasSubscribers)
      channels.stall.publish({
        cache: this.source,
        watcherId: w.id,
        position: w.cursor.position,
        cause,
        unsynced: this.members.size + this.joining,
      });
  }

  /** Caught up: back on the live path; the episode's pushes are observed. */
  resync(w: W): void {
    w.cursor.markSynced();
    this.members.delete(w.id);
    this.metrics.catchupRounds.inc();
    this.metrics.catchupEvents.observe(w.cursor.passPushes);
    this.metricsChanged();
    if (channels.resync.hasSubscribers)
      channels.resync.publish({
        cache: this.source,
        watcherId: w.id,
        position: w.cursor.position,
        passPushes: w.cursor.passPushes,
        unsynced: this.members.size + this.joining,
      });
  }

  /** Leave the set (or its queue, `markStalled`) without resyncing (ended, expired, or handed over); true if it was in. */
  remove(w: W): boolean {
    if (w.cursor.joinPending) {
      w.cursor.setJoinPending(false);
      this.joining--;
      this.metricsChanged();
      return true;
    }
    if (!this.members.delete(w.id)) return false;
    this.metricsChanged();
    return true;
  }

  /** Empty the set (a relist: beta hands over every marked watcher first; a stop). */
  clear(): void {
    this.members.clear();
    this.joining = 0;
    this.metricsChanged();
  }
}
