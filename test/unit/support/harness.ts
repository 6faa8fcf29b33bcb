/**
 * Shared helpers for the unit tests: a cache on a VirtualClock, a reader that
 * takes only what a watcher has ready (never waits on real time), store
 * wrappers that lag or pause, and small fakes for host-agnostic units.
 *
 * No helper measures wall-clock time; the only real-time bound is the
 * generous failure timeout of `withTimeout`.
 */
import {
  MemoryStore,
  WatchCache,
  type KubeObject,
  type Store,
  type StoreEvent,
  type StoreListResult,
  type StoreWatch,
  type WatchCacheOptions,
} from '../../../src/index.js';
import { VirtualClock, settle } from '../../../src/sim/virtual-clock.js';
import { Watcher, type WatcherOwner } from '../../../src/watch/watcher.js';
import { Selection } from '../../../src/selection/selection.js';
import type { WatchEvent } from '../../../src/wire/watch-event.js';

export { VirtualClock };

export interface Env {
  clock: VirtualClock;
  store: MemoryStore;
  cache: WatchCache;
}

export type CacheOptions = Omit<WatchCacheOptions, 'store' | 'clock'>;

/** A MemoryStore and a started WatchCache, both on one VirtualClock. `wrap` may put a wrapper between them. */
export async function setup(
  options: CacheOptions = {},
  wrap?: (store: MemoryStore) => Store,
  extra: { clock?: VirtualClock; seed?: KubeObject[] } = {},
): Promise<Env & { backing: Store }> {
  const clock = extra.clock ?? new VirtualClock();
  const store = new MemoryStore({ clock });
  for (const o of extra.seed ?? []) await store.create(o);
  const backing = wrap === undefined ? store : wrap(store);
  const cache = new WatchCache({ ...options, store: backing, clock });
  await cache.start();
  return { clock, store, cache, backing };
}

/** Let store deliveries (microtasks) and consumers run; several turns to be safe. */
export async function flush(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await settle();
}

export function pod(
  name: string,
  extra: {
    ns?: string;
    labels?: Record<string, string>;
    nodeName?: string;
    spec?: Record<string, unknown>;
    status?: Record<string, unknown>;
  } = {},
): KubeObject {
  const metadata: KubeObject['metadata'] = { namespace: extra.ns ?? 'default', name };
  if (extra.labels !== undefined) metadata.labels = extra.labels;
  const spec: Record<string, unknown> = { ...(extra.spec ?? {}) };
  if (extra.nodeName !== undefined) spec.nodeName = extra.nodeName;
  const obj: KubeObject = { metadata, spec };
  if (extra.status !== undefined) obj.status = extra.status;
  return obj;
}

/** Write `n` updates (or creates) to one object, `name`, in `ns`. Returns the last RV. */
export async function churn(store: MemoryStore, n: number, name = 'churn', ns = 'churn-ns'): Promise<number> {
  let cur: KubeObject | undefined;
  try {
    cur = await store.get(ns, name);
  } catch {
    cur = undefined;
  }
  for (let i = 0; i < n; i++) {
    cur =
      cur === undefined
        ? await store.create(pod(name, { ns, spec: { i } }))
        : await store.update({ ...cur, spec: { i } });
  }
  await flush();
  return store.resourceVersion;
}

const NOT_YET = Symbol('not-yet');

/**
 * Reads a watcher without ever blocking the test: `drain` takes only what is
 * ready. A pending next() is kept between calls (the watcher refuses a second
 * one), so after a `drain` that found nothing the watcher has a waiting
 * consumer; pass `max` to stop before that.
 */
export class Reader {
  readonly events: WatchEvent[] = [];
  done = false;
  private pending: Promise<IteratorResult<WatchEvent>> | undefined;
  constructor(readonly w: Watcher) {}

  async drain(max = Infinity): Promise<WatchEvent[]> {
    const out: WatchEvent[] = [];
    while (!this.done && out.length < max) {
      this.pending ??= this.w.next();
      const r = await Promise.race([this.pending, settle().then((): typeof NOT_YET => NOT_YET)]);
      if (typeof r === 'symbol') break;
      this.pending = undefined;
      if (r.done) {
        this.done = true;
        break;
      }
      out.push(r.value);
      this.events.push(r.value);
    }
    return out;
  }

  /** Short strings `TYPE:rv` of everything read so far. */
  get summary(): string[] {
    return this.events.map(brief);
  }
}

function brief(ev: { type: string; object: KubeObject }): string {
  return `${ev.type}:${ev.object.metadata?.resourceVersion ?? ''}`;
}

/** RVs of the object events (ADDED/MODIFIED/DELETED) in `events`. */
export function objectRVs(events: readonly { type: string; object: KubeObject }[]): number[] {
  return events
    .filter((e) => e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED')
    .map((e) => Number(e.object.metadata.resourceVersion));
}

/** Reject after `ms` of real time: a failure bound only, never an assertion on timing. */
export async function withTimeout<T>(p: Promise<T>, ms = 10_000, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms (failure bound)`)), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Whether a promise has settled after letting continuations run. */
export async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await flush();
  return settled;
}

/** Capture a promise's rejection (or throw if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** A store whose currentResourceVersion() is ahead of anything the cache will see. */
export class LaggingStore implements Store {
  constructor(
    readonly inner: MemoryStore,
    public lag = 100,
  ) {}
  list(): Promise<StoreListResult> {
    return this.inner.list();
  }
  watch(afterRV: number, onEvent: (e: StoreEvent) => void, onError: (e: Error) => void): StoreWatch {
    return this.inner.watch(afterRV, onEvent, onError);
  }
  async currentResourceVersion(): Promise<number> {
    return (await this.inner.currentResourceVersion()) + this.lag;
  }
}

/** A store whose watch delivery can be held back (`pause`/`resume`) and broken (`fail`). */
export class PausableStore implements Store {
  paused = false;
  lists = 0;
  private held: { e: StoreEvent; sink: (e: StoreEvent) => void }[] = [];
  private errorSinks: ((e: Error) => void)[] = [];
  constructor(readonly inner: MemoryStore) {}
  list(): Promise<StoreListResult> {
    this.lists++;
    return this.inner.list();
  }
  currentResourceVersion(): Promise<number> {
    return this.inner.currentResourceVersion();
  }
  watch(afterRV: number, onEvent: (e: StoreEvent) => void, onError: (e: Error) => void): StoreWatch {
    let stopped = false;
    const sink = (e: StoreEvent): void => {
      if (!stopped) onEvent(e);
    };
    const errSink = (e: Error): void => {
      if (!stopped) onError(e);
    };
    this.errorSinks.push(errSink);
    const inner = this.inner.watch(
      afterRV,
      (e) => {
        if (this.paused) this.held.push({ e, sink });
        else sink(e);
      },
      errSink,
    );
    return {
      stop: () => {
        stopped = true;
        inner.stop();
      },
    };
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    const held = this.held;
    this.held = [];
    for (const { e, sink } of held) sink(e);
  }
  /** Break every running watch with `err` (the reflector then re-lists). */
  fail(err: Error): void {
    const sinks = this.errorSinks;
    this.errorSinks = [];
    for (const s of sinks) s(err);
  }
}

/** A WatcherOwner that records what it is told (for Watcher/BookmarkScheduler/ForceClosePolicy units). */
export class FakeOwner implements WatcherOwner {
  ended: { w: Watcher; reason: string }[] = [];
  room: Watcher[] = [];
  overtaken: Watcher[] = [];
  onRoom: ((w: Watcher) => void) | undefined;
  watcherEnded(w: Watcher, reason: string): void {
    this.ended.push({ w, reason });
  }
  watcherHasRoom(w: Watcher): void {
    this.room.push(w);
    this.onRoom?.(w);
  }
  initialOvertaken(w: Watcher): void {
    this.overtaken.push(w);
  }
  channelOverwritten(w: Watcher): void {
    this.overwritten.push(w);
  }
  overwritten: Watcher[] = [];
}

/** A match-all watcher of `owner`, active at RV 1, with a channel of `capacity` (dispatcher units). */
export function activeWatcher(id: number, owner: FakeOwner, capacity: number): Watcher {
  const w = new Watcher({ id, selection: new Selection({}, {}, undefined), capacity, allowBookmarks: false, owner });
  w.activate(1, undefined);
  return w;
}

/** Take the oldest event out of a watcher's channel directly (no consumer bookkeeping). */
export function shiftEvent(w: Watcher): WatchEvent | undefined {
  const ev = w.queue.shift();
  if (typeof ev === 'symbol') throw new Error('channel event overwritten');
  return ev;
}
