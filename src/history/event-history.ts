/**
 * EventHistory: the self-resizing ring of recent events (seed 001,
 * watch_cache_history.go), the source every "watch from RV N", every resume
 * and every sync pass reads from.
 *
 * Rules, each enforced where marked:
 *  1. Capacity starts at lowerBound (100) and stays within [lowerBound, upperBound].
 *  2. Before each append, when the ring is full: grow x2 if the OLDEST event is
 *     younger than eventFreshDuration; else shrink /2 if the event a quarter of
 *     the way in from the newest end is OLDER than it (hysteresis).
 *  3. Append evicts the oldest event when still full and remembers that
 *     something was removed since the last list.
 *  4. Oldest servable RV: listRV + 1 while nothing was removed since the last
 *     list, else the oldest kept event's RV. A start RV below oldest - 1 is too old.
 *  5. Absolute indices only grow; a relist empties the ring by moving start to
 *     end, so intervals opened before it are invalidated, never misread.
 */
import { BadRequestError } from '../core/errors.js';
import type { WatchCacheEvent } from './watch-cache-event.js';
import { HistoryInterval } from './history-interval.js';

export const DEFAULT_LOWER_BOUND = 100;
export const DEFAULT_UPPER_BOUND = 100 * 1024;
export const DEFAULT_EVENT_FRESH_DURATION_MS = 75_000;

/**
 * Upper bound for a fresh duration (seed 001 `capacityUpperBound`): 102,400 up
 * to 75 s; longer windows scale it by the ratio rounded up to a power of two,
 * capped so it fits in an int32.
 */
export function capacityUpperBound(eventFreshDurationMs: number, base = DEFAULT_UPPER_BOUND): number {
  if (eventFreshDurationMs <= DEFAULT_EVENT_FRESH_DURATION_MS) return base;
  let exponent = Math.ceil(Math.log2(eventFreshDurationMs / DEFAULT_EVENT_FRESH_DURATION_MS));
  const maxExponent = Math.floor(Math.log2(2147483647 / base));
  if (exponent > maxExponent) exponent = maxExponent;
  return base * 2 ** exponent;
}

export interface HistoryOptions {
  lowerBound?: number;
  /** Default: capacityUpperBound(eventFreshDurationMs). */
  upperBound?: number;
  eventFreshDurationMs?: number;
}

export interface HistoryBounds {
  /** The oldest servable RV by rule 4, or undefined before the first list. */
  oldest: number | undefined;
  capacity: number;
  size: number;
  firstRV: number | undefined;
  lastRV: number | undefined;
  listRV: number;
  removed: boolean;
}

export class EventHistory {
  readonly lowerBound: number;
  readonly upperBound: number;
  readonly eventFreshDurationMs: number;
  private buf: (WatchCacheEvent | undefined)[];
  private cap: number;
  /** Absolute index of the oldest kept event. */
  private start = 0;
  /** Absolute index one past the newest event. */
  private end = 0;
  private listRV = 0;
  private removedSinceList = false;
  /** Called with the new capacity after every resize (drives the capacity gauge). */
  onResize: ((capacity: number) => void) | undefined;

  constructor(options: HistoryOptions = {}) {
    const fresh = options.eventFreshDurationMs ?? DEFAULT_EVENT_FRESH_DURATION_MS;
    const upper = options.upperBound ?? capacityUpperBound(fresh);
    // API.md: an upper bound below the lower bound lowers the lower bound with it.
    const lower = Math.min(options.lowerBound ?? DEFAULT_LOWER_BOUND, upper);
    if (!Number.isInteger(lower) || lower < 1)
      throw new BadRequestError(`history lowerBound must be an integer >= 1, got ${lower}`);
    if (!Number.isInteger(upper) || upper < 1)
      throw new BadRequestError(`history upperBound must be an integer >= 1, got ${upper}`);
    if (!(fresh > 0)) throw new BadRequestError(`history eventFreshDurationMs must be > 0, got ${fresh}`);
    this.lowerBound = lower;
    this.upperBound = upper;
    this.eventFreshDurationMs = fresh;
    this.cap = lower; // rule 1
    this.buf = new Array<WatchCacheEvent | undefined>(lower).fill(undefined);
  }

  get capacity(): number {
    return this.cap;
  }
  get size(): number {
    return this.end - this.start;
  }
  /** Absolute index of the oldest kept event. */
  get startIndex(): number {
    return this.start;
  }
  /** Absolute index one past the newest event. */
  get endIndex(): number {
    return this.end;
  }
  get lastRV(): number | undefined {
    return this.end > this.start ? this.at(this.end - 1).rv : undefined;
  }

  /** The event at absolute index `index` (must be in [startIndex, endIndex)). */
  at(index: number): WatchCacheEvent {
    return this.buf[index % this.cap]!;
  }

  /** Empty the ring after a (re)list at `listRV` (rule 5). */
  reset(listRV: number): void {
    for (let i = this.start; i < this.end; i++) this.buf[i % this.cap] = undefined;
    this.start = this.end;
    this.listRV = listRV;
    this.removedSinceList = false;
  }

  append(event: WatchCacheEvent): void {
    this.resizeIfNeeded(event.recordTime);
    if (this.end - this.start === this.cap) {
      // Rule 3: evict the oldest and remember it.
      this.buf[this.start % this.cap] = undefined;
      this.start++;
      this.removedSinceList = true;
    }
    event.index = this.end;
    this.buf[this.end % this.cap] = event;
    this.end++;
  }

  /** Rule 4: the oldest RV the history can serve, or undefined if it cannot serve anything yet. */
  oldestServableRV(): number | undefined {
    if (this.listRV > 0 && !this.removedSinceList) return this.listRV + 1;
    if (this.end > this.start) return this.at(this.start).rv;
    return this.listRV > 0 ? this.listRV + 1 : undefined;
  }

  /** True when a start position `rv` predates what the history can serve (rule 4: rv < oldest - 1). */
  isTooOld(rv: number): boolean {
    const oldest = this.oldestServableRV();
    return oldest === undefined || rv < oldest - 1;
  }

  /** Absolute index of the first event with RV > rv (endIndex when none). */
  indexAfter(rv: number): number {
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (this.at(mid).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** An interval over the events with RV > afterRV, up to the current end (frozen). */
  intervalAfter(afterRV: number): HistoryInterval {
    return new HistoryInterval(this, this.indexAfter(afterRV), this.end);
  }

  bounds(): HistoryBounds {
    return {
      oldest: this.oldestServableRV(),
      capacity: this.cap,
      size: this.size,
      firstRV: this.end > this.start ? this.at(this.start).rv : undefined,
      lastRV: this.lastRV,
      listRV: this.listRV,
      removed: this.removedSinceList,
    };
  }

  /** Rule 2. */
  private resizeIfNeeded(eventTime: number): void {
    if (this.end - this.start !== this.cap) return;
    if (eventTime - this.at(this.start).recordTime < this.eventFreshDurationMs) {
      const grown = Math.min(this.cap * 2, this.upperBound);
      if (grown > this.cap) this.resize(grown);
      return;
    }
    if (eventTime - this.at(this.end - Math.floor(this.cap / 4)).recordTime > this.eventFreshDurationMs) {
      const shrunk = Math.max(Math.floor(this.cap / 2), this.lowerBound);
      if (shrunk < this.cap) this.resize(shrunk);
    }
  }

  private resize(capacity: number): void {
    const next = new Array<WatchCacheEvent | undefined>(capacity).fill(undefined);
    if (capacity < this.end - this.start) {
      // A shrink drops the oldest events: they are gone, so rule 4 must stop
      // claiming listRV + 1 (Kubernetes leaves this implicit; we record it).
      this.start = this.end - capacity;
      this.removedSinceList = true;
    }
    for (let i = this.start; i < this.end; i++) next[i % capacity] = this.buf[i % this.cap];
    this.buf = next;
    this.cap = capacity;
    this.onResize?.(capacity);
  }
}
