/**
 * Where a watch's first events come from before its live channel: a snapshot
 * of the current objects (as shared ADDED events, optionally closed by the
 * initial-events-end bookmark), or a stretch of history replayed through the
 * watcher's selection. Read lazily by the consumer, like the Kubernetes
 * watcher goroutine's processInterval.
 */
import type { Selection } from '../selection/selection.js';
import { Delivery } from '../selection/selection.js';
import type { HistoryInterval } from '../history/history-interval.js';
import type { WatchEvent } from '../wire/watch-event.js';

export interface InitialSource {
  /** The next initial event, or undefined when done. Throws IntervalInvalidatedError when overtaken. */
  next(): WatchEvent | undefined;
  /** True when it reads the history (a relist or eviction can overtake it); a snapshot cannot be. */
  readonly readsHistory: boolean;
}

/** A materialized list of events (snapshot ADDED events, then an optional end bookmark). */
export class SnapshotSource implements InitialSource {
  readonly readsHistory = false;
  private readonly events: (WatchEvent | undefined)[];
  private pos = 0;
  constructor(events: WatchEvent[]) {
    this.events = events;
  }
  next(): WatchEvent | undefined {
    if (this.pos >= this.events.length) return undefined;
    const ev = this.events[this.pos];
    this.events[this.pos++] = undefined; // drop the reference as it is handed over
    return ev;
  }
}

/** History events after the start RV that the selection picks, in RV order. */
export class HistorySource implements InitialSource {
  readonly readsHistory = true;
  private readonly interval: HistoryInterval;
  private readonly selection: Selection;
  private readonly trailer: WatchEvent | undefined;
  private trailerSent = false;
  constructor(interval: HistoryInterval, selection: Selection, trailer?: WatchEvent) {
    this.interval = interval;
    this.selection = selection;
    this.trailer = trailer;
  }
  next(): WatchEvent | undefined {
    for (;;) {
      const ev = this.interval.next();
      if (ev === undefined) break;
      const d = this.selection.classify(ev);
      if (d !== Delivery.None) return ev.deliver(d);
    }
    if (this.trailer !== undefined && !this.trailerSent) {
      this.trailerSent = true;
      return this.trailer;
    }
    return undefined;
  }
}
