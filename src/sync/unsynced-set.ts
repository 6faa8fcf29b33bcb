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
import type { SyncCursor } from './sync-cursor.js';

export interface UnsyncedMember {
  readonly id: number;
  readonly cursor: SyncCursor;
}

export class UnsyncedSet<W extends UnsyncedMember> implements Iterable<W> {
  private readonly members = new Map<number, W>();
  private readonly metrics: CacheMetrics;
  /** The cache this set belongs to (the observer channels' `cache`). */
  private readonly source: object;

  /** Stalls counted but not yet added to the counter, and whether the gauge lags the size. */
  private pendingStalls = 0;
  private metricsDirty = false;

  constructor(metrics: CacheMetrics, source: object) {
    this.metrics = metrics;
    this.source = source;
    metrics.beforeRead.push(this.flushMetrics);
  }

  /**
   * Bring the stall counter and the stalled-watchers gauge up to date. A
   * labelled prom-client update hashes its labels (~3 µs): 10,000 watchers
   * stalling on one event would spend ~50 ms on metrics alone, so the set
   * writes them once per turn (a microtask) and before every read.
   */
  readonly flushMetrics = (): void => {
    if (!this.metricsDirty) return;
    this.metricsDirty = false;
    this.metrics.stalledWatchers.set(this.members.size);
    if (this.pendingStalls > 0) this.metrics.stalls.inc(this.pendingStalls);
    this.pendingStalls = 0;
  };

  private metricsChanged(): void {
    if (this.metricsDirty) return;
    this.metricsDirty = true;
    queueMicrotask(this.flushMetrics);
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
    if (fresh) this.pendingStalls++; // counted at the next flushMetrics
    return fresh;
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
    if (fresh && channels.stall.hasSubscribers)
      channels.stall.publish({
        cache: this.source,
        watcherId: w.id,
        position: w.cursor.position,
        cause,
        unsynced: this.members.size,
      });
    return fresh;
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
        unsynced: this.members.size,
      });
  }

  /** Leave the set without resyncing (ended, expired, or handed over); true if it was a member. */
  remove(w: W): boolean {
    if (!this.members.delete(w.id)) return false;
    this.metricsChanged();
    return true;
  }

  clear(): void {
    this.members.clear();
    this.metricsChanged();
  }
}
