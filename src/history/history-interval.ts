/**
 * HistoryInterval: a reader over a stretch of the history, taken in batches
 * (seed 001, watch_cache_interval.go): up to 100 events are copied per
 * refill, and each reference is dropped from the batch as it is handed over,
 * so a long-lived reader never pins events the ring has evicted.
 *
 * If the ring evicts the interval's next event before it is read, the
 * interval is invalidated: `next()` throws IntervalInvalidatedError instead
 * of returning a later event (that would be a silent gap).
 */
import type { WatchCacheEvent } from './watch-cache-event.js';

export const INTERVAL_BATCH_SIZE = 100;

export class IntervalInvalidatedError extends Error {
  constructor(index: number, start: number) {
    super(`cache interval invalidated, interval startIndex: ${index}, history startIndex: ${start}`);
    this.name = 'IntervalInvalidatedError';
  }
}

/** The part of EventHistory an interval reads. */
export interface IntervalSource {
  readonly startIndex: number;
  at(index: number): WatchCacheEvent;
}

export class HistoryInterval {
  private nextIndex: number;
  private readonly endIndex: number;
  private readonly source: IntervalSource;
  private readonly batch: (WatchCacheEvent | undefined)[] = [];
  private batchPos = 0;
  private batchLen = 0;

  constructor(source: IntervalSource, startIndex: number, endIndex: number) {
    this.source = source;
    this.nextIndex = startIndex;
    this.endIndex = endIndex;
  }

  /** Events not handed out yet. */
  get remaining(): number {
    return this.endIndex - this.nextIndex + (this.batchLen - this.batchPos);
  }

  /** The next event, or undefined at the end of the interval. */
  next(): WatchCacheEvent | undefined {
    if (this.batchPos === this.batchLen && !this.refill()) return undefined;
    const ev = this.batch[this.batchPos]!;
    this.batch[this.batchPos] = undefined; // drop the reference as it is handed over
    this.batchPos++;
    return ev;
  }

  /** The RV of the next event without consuming it, or undefined at the end. */
  peekRV(): number | undefined {
    if (this.batchPos === this.batchLen && !this.refill()) return undefined;
    return this.batch[this.batchPos]!.rv;
  }

  private refill(): boolean {
    if (this.nextIndex >= this.endIndex) return false;
    if (this.nextIndex < this.source.startIndex)
      throw new IntervalInvalidatedError(this.nextIndex, this.source.startIndex);
    const n = Math.min(INTERVAL_BATCH_SIZE, this.endIndex - this.nextIndex);
    for (let i = 0; i < n; i++) this.batch[i] = this.source.at(this.nextIndex + i);
    this.nextIndex += n;
    this.batchPos = 0;
    this.batchLen = n;
    return true;
  }
}
