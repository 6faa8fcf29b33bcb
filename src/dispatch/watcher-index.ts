/**
 * WatcherIndex: the live path's routing table (Kubernetes cacher
 * `indexedWatchers`, §5 of kubernetes-etcd-semantics.md).
 *
 * A watcher whose field selector pins the trigger index lives only in
 * `byTrigger[value]`; every other watcher lives in `byScope[namespace][name]`
 * ('' = any). An event reaches: scope (ns,name), (ns,''), ('',name), ('',''),
 * and the trigger buckets of its new and previous trigger values. So an event
 * costs nothing for watchers that cannot select it. Buckets are arrays with
 * swap-remove; routing allocates nothing.
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { IndexBucket, Watcher } from '../watch/watcher.js';

export class WatcherBucket implements IndexBucket {
  readonly watchers: Watcher[] = [];
  /**
   * The slot a walk of this bucket visits next (CandidateWalk, src/dispatch/candidate-walk.ts); 0 when no
   * walk is in it. Slots below it were visited, and `take` keeps them so: a walk that stops here for a turn
   * and goes on later visits every watcher that stayed in the bucket exactly once.
   */
  cursor = 0;

  /**
   * Take `watcher` (in this bucket) out (O(1), order not kept): the last one moves into its slot. When
   * the slot was visited by a walk still in this bucket, the last visited one moves into it and the last
   * one into that slot instead, so the visited ones stay below the cursor and the unvisited above it.
   */
  take(watcher: Watcher): void {
    watcher.indexBucket = undefined;
    const list = this.watchers;
    let i = watcher.indexSlot;
    if (i < this.cursor) {
      const visited = this.cursor - 1;
      const moved = list[visited]!;
      list[i] = moved;
      moved.indexSlot = i;
      this.cursor = i = visited;
    }
    const last = list.pop()!;
    if (i < list.length) {
      list[i] = last;
      last.indexSlot = i;
    }
    watcher.indexSlot = -1;
  }
}

export class WatcherIndex {
  private readonly byScope = new Map<string, Map<string, WatcherBucket>>();
  private readonly byTrigger = new Map<string, WatcherBucket>();
  private readonly hasTrigger: boolean;
  /** Watchers indexed (each one's bucket is its `indexBucket` field: no lookup on add or remove). */
  private count = 0;
  /** The size last reported to `grown` (see `onGrow`): twice the count at the time, plus 16. */
  private room = 0;
  private grown: ((size: number) => void) | undefined;

  constructor(hasTrigger: boolean) {
    this.hasTrigger = hasTrigger;
  }

  get size(): number {
    return this.count;
  }

  /**
   * `listener(size)` runs in add() whenever the index outgrows the size it last reported, so per-candidate
   * room (the dispatcher's full list) grows at registration, never inside a dispatch.
   */
  onGrow(listener: (size: number) => void): void {
    this.grown = listener;
    this.grow();
  }

  has(watcher: Watcher): boolean {
    return watcher.indexBucket !== undefined;
  }

  add(watcher: Watcher): void {
    if (watcher.indexBucket !== undefined) return;
    const sel = watcher.selection;
    let bucket: WatcherBucket | undefined;
    if (this.hasTrigger && sel.triggerValue !== undefined) {
      bucket = this.byTrigger.get(sel.triggerValue);
      if (bucket === undefined) this.byTrigger.set(sel.triggerValue, (bucket = new WatcherBucket()));
    } else {
      let names = this.byScope.get(sel.namespace);
      if (names === undefined) this.byScope.set(sel.namespace, (names = new Map<string, WatcherBucket>()));
      bucket = names.get(sel.name);
      if (bucket === undefined) names.set(sel.name, (bucket = new WatcherBucket()));
    }
    watcher.indexSlot = bucket.watchers.length;
    watcher.indexBucket = bucket;
    watcher.liveBatch = 0; // it enters the live path offered nothing ahead (the dispatcher's live-first marks)
    bucket.watchers.push(watcher);
    if (++this.count > this.room) this.grow();
  }

  private grow(): void {
    this.room = 2 * this.count + 16;
    this.grown?.(this.room);
  }

  remove(watcher: Watcher): void {
    const bucket = watcher.indexBucket;
    if (bucket === undefined) return;
    this.count--;
    bucket.take(watcher);
  }

  /**
   * `remove` for `watchers[from..to)` (each one indexed or not), in one flat loop with one call per
   * watcher (its bucket's take): beta's mass stall takes 10,000 watchers out at once, and that first
   * run is interpreted (issue 13).
   */
  removeAll(watchers: readonly (Watcher | undefined)[], from: number, to: number): void {
    let removed = 0;
    for (let k = from; k < to; k++) {
      const watcher = watchers[k]!;
      const bucket = watcher.indexBucket;
      if (bucket === undefined) continue;
      removed++;
      bucket.take(watcher);
    }
    this.count -= removed;
  }

  /**
   * The buckets whose watchers could select `event` (a coarse pre-filter; the exact decision is
   * Selection.classify), non-empty ones only, into `out` from slot 0; returns how many (at most
   * MAX_CANDIDATE_BUCKETS). A watcher is in one bucket, so each is a candidate once per event.
   */
  candidateBuckets(event: WatchCacheEvent, out: (WatcherBucket | undefined)[]): number {
    const ns = event.namespace;
    const name = event.name;
    let n = 0;
    const nsNames = this.byScope.get(ns);
    if (nsNames !== undefined) {
      n = put(out, n, nsNames.get(name));
      if (name !== '') n = put(out, n, nsNames.get(''));
    }
    if (ns !== '') {
      const anyNs = this.byScope.get('');
      if (anyNs !== undefined) {
        if (name !== '') n = put(out, n, anyNs.get(name));
        n = put(out, n, anyNs.get(''));
      }
    }
    if (this.hasTrigger) {
      n = put(out, n, this.byTrigger.get(event.triggerValue));
      if (event.prevTriggerValue !== event.triggerValue) n = put(out, n, this.byTrigger.get(event.prevTriggerValue));
    }
    return n;
  }

  /** Every indexed watcher (for bookmarks, relists and stop), bucket by bucket. */
  *all(): IterableIterator<Watcher> {
    for (const names of this.byScope.values()) for (const b of names.values()) yield* b.watchers;
    for (const b of this.byTrigger.values()) yield* b.watchers;
  }
}

/** Buckets one event can reach: four scope buckets and two trigger buckets (candidateBuckets). */
export const MAX_CANDIDATE_BUCKETS = 6;

/** `bucket` into `out[n]` when it has watchers; the new count. */
function put(out: (WatcherBucket | undefined)[], n: number, bucket: WatcherBucket | undefined): number {
  if (bucket === undefined || bucket.watchers.length === 0) return n;
  out[n] = bucket;
  return n + 1;
}
