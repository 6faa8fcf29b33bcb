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

  /** Take `watcher` (in this bucket) out: the last one moves into its slot (O(1), order not kept). */
  take(watcher: Watcher): void {
    watcher.indexBucket = undefined;
    const list = this.watchers;
    const i = watcher.indexSlot;
    const last = list.pop()!;
    if (last !== watcher) {
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
   * Call `visit` for every watcher that could select `event` (a coarse
   * pre-filter; the exact decision is Selection.classify). Each watcher is
   * visited at most once per event.
   */
  forEachCandidate(event: WatchCacheEvent, visit: (w: Watcher) => void): void {
    const ns = event.namespace;
    const name = event.name;
    const nsNames = this.byScope.get(ns);
    if (nsNames !== undefined) {
      visitBucket(nsNames.get(name), visit);
      if (name !== '') visitBucket(nsNames.get(''), visit);
    }
    if (ns !== '') {
      const anyNs = this.byScope.get('');
      if (anyNs !== undefined) {
        if (name !== '') visitBucket(anyNs.get(name), visit);
        visitBucket(anyNs.get(''), visit);
      }
    }
    if (this.hasTrigger) {
      visitBucket(this.byTrigger.get(event.triggerValue), visit);
      if (event.prevTriggerValue !== event.triggerValue) visitBucket(this.byTrigger.get(event.prevTriggerValue), visit);
    }
  }

  /** Every indexed watcher (for bookmarks, relists and stop), bucket by bucket. */
  *all(): IterableIterator<Watcher> {
    for (const names of this.byScope.values()) for (const b of names.values()) yield* b.watchers;
    for (const b of this.byTrigger.values()) yield* b.watchers;
  }
}

function visitBucket(bucket: WatcherBucket | undefined, visit: (w: Watcher) => void): void {
  if (bucket === undefined) return;
  const list = bucket.watchers;
  // Iterate over a stable length: a visit may remove the current watcher (swap-remove moves the last into i).
  for (let i = 0; i < list.length; i++) {
    const w = list[i]!;
    visit(w);
    if (list[i] !== w) i--; // w was removed and the last watcher moved into slot i
  }
}
