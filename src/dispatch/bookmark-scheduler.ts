/**
 * BookmarkScheduler: periodic BOOKMARK events (Kubernetes cacher §2.1-2.2).
 *
 * Only watchers with allowWatchBookmarks are scheduled, in 1-second buckets.
 * A tick every 1-1.25 s (only while some watcher is scheduled) offers one
 * shared bookmark, at the last RV the dispatcher processed, to every watcher
 * that is due: every `frequencyMs` (60 s), and once about 2 s before the
 * watch's deadline. Bookmarks never block and never cause a stall or a close.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { ResourceInfo } from '../core/types.js';
import { apiVersionOf } from '../core/types.js';
import { WatchEvent } from '../wire/watch-event.js';
import type { Watcher } from '../watch/watcher.js';

const DEADLINE_BOOKMARK_LEAD_MS = 2000;

/** A BOOKMARK event: only kind, apiVersion and metadata.resourceVersion (plus annotations if given). */
export function bookmarkEvent(resource: ResourceInfo, rv: number, annotations?: Record<string, string>): WatchEvent {
  const metadata: { resourceVersion: string; annotations?: Record<string, string> } = { resourceVersion: String(rv) };
  if (annotations !== undefined) metadata.annotations = annotations;
  return new WatchEvent('BOOKMARK', { kind: resource.kind, apiVersion: apiVersionOf(resource), metadata }, rv);
}

export class BookmarkScheduler {
  private readonly clock: Clock;
  private readonly frequencyMs: number;
  private readonly resource: ResourceInfo;
  private readonly currentRV: () => number;
  private readonly buckets = new Map<number, Watcher[]>();
  private timer: TimerHandle | undefined;
  private scheduled = 0;
  private stopped = false;

  constructor(clock: Clock, frequencyMs: number, resource: ResourceInfo, currentRV: () => number) {
    this.clock = clock;
    this.frequencyMs = frequencyMs;
    this.resource = resource;
    this.currentRV = currentRV;
  }

  /** Schedule the next bookmark of `w` (no-op without allowWatchBookmarks or past its deadline). */
  schedule(w: Watcher): void {
    if (!w.allowBookmarks || this.stopped || w.stopped) return;
    const now = this.clock.now();
    let due = now + this.frequencyMs;
    if (w.deadline !== Infinity) {
      const last = w.deadline - DEADLINE_BOOKMARK_LEAD_MS;
      if (last <= now) {
        w.nextBookmarkAt = Infinity;
        return;
      }
      if (last < due) due = last;
    }
    w.nextBookmarkAt = due;
    const second = Math.floor(due / 1000);
    let bucket = this.buckets.get(second);
    if (bucket === undefined) this.buckets.set(second, (bucket = []));
    bucket.push(w);
    this.scheduled++;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.buckets.clear();
  }

  private arm(): void {
    if (this.timer !== undefined || this.scheduled === 0 || this.stopped) return;
    this.timer = this.clock.setTimeout(() => this.tick(), 1000 + this.clock.random() * 250);
  }

  private tick(): void {
    this.timer = undefined;
    const nowSecond = Math.floor(this.clock.now() / 1000);
    const due: Watcher[] = [];
    for (const [second, list] of this.buckets) {
      if (second > nowSecond) continue;
      this.buckets.delete(second);
      this.scheduled -= list.length;
      for (const w of list) due.push(w);
    }
    if (due.length > 0) {
      const rv = this.currentRV();
      let bookmark: WatchEvent | undefined;
      for (const w of due) {
        if (w.stopped || !w.accepting) continue;
        // Invariant 3 (bookmarks): none while unsynced, none below the position, and
        // none at or below the start (it would tell the client nothing new).
        if (!w.unsynced && rv >= w.position && rv > w.startPosition) {
          bookmark ??= bookmarkEvent(this.resource, rv);
          if (w.faults !== undefined && w.faults.bookmarkBelowPosition(w)) {
            w.push(bookmarkEvent(this.resource, w.position - 1));
            this.schedule(w);
            continue;
          }
          // An accepted bookmark advances the position; a full channel just misses it.
          if (w.push(bookmark)) w.cursor.accepted(rv);
        }
        this.schedule(w);
      }
    }
    this.arm();
  }
}
