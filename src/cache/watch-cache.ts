/**
 * WatchCache: the engine. It wires the reflector, the history, the object
 * state, the live dispatcher, bookmarks and the mode's full-channel policy,
 * and serves watch, list and get with Kubernetes RV semantics.
 *
 * Ingest, for every store event, in this order (KEP invariant 1 rests on it):
 *   1. drop it if its RV is not above the cache RV (RVs never go backwards);
 *   2. build the immutable WatchCacheEvent (selection keys computed once);
 *   3. append it to the history;
 *   4. apply it to the object state and advance the cache RV (waking reads);
 *   5. hand it to the dispatcher (live path).
 *
 * Watch start: the initial events (a state snapshot or a stretch of history)
 * are cut and the watcher registered for live dispatch in one synchronous
 * step, so nothing can fall between them (rule 1 of the semantics notes).
 * Which start a watch gets is a table of start kinds (src/cache/start-kinds.ts).
 */
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { BadRequestError, ServiceUnavailableError, toWatchCacheError, type WatchCacheError } from '../core/errors.js';
import {
  DEFAULT_RESOURCE,
  apiVersionOf,
  type IndexerFunc,
  type KubeObject,
  type ResourceInfo,
  type Store,
  type StoreEvent,
} from '../core/types.js';
import { BookmarkScheduler, bookmarkEvent } from '../dispatch/bookmark-scheduler.js';
import { Dispatcher } from '../dispatch/dispatcher.js';
import { WatcherIndex } from '../dispatch/watcher-index.js';
import { EventHistory, type HistoryBounds } from '../history/event-history.js';
import { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { Registry } from 'prom-client';
import { CacheMetrics } from '../metrics/cache-metrics.js';
import { totalIndexers } from '../selection/field-selector.js';
import { SelectionTable } from '../selection/selection-table.js';
import { resolvePassOptions } from '../sync/pass-options.js';
import type { SharedWatcherChannel } from '../beta/shared-watcher-channel.js';
import type { WatchPortHandle } from '../beta/watch-port.js';
import { newPortState } from '../protocol/port-state-cells.js';
import type { CatchUpStrategy } from '../modes/catch-up-strategy.js';
import { createStrategy } from '../modes/strategies.js';
import { registerStrategy } from './cache-internals.js';
import { SnapshotSource, type InitialSource } from '../watch/initial-source.js';
import type { Watch } from '../watch/watch.js';
import { Watcher, type EndReason, type WatcherOwner } from '../watch/watcher.js';
import { msgpack, type EncodingCounter, type WatchEvent } from '../wire/watch-event.js';
import { checkMode, checkPositive, suggestedChannelSize, type Mode, type WatchCacheOptions } from './cache-options.js';
import { engineOptionsOf } from './engine-options.js';
import type { FaultPoints } from '../watch/fault-points.js';
import { Freshness } from './freshness.js';
import { ObjectState, splitKey } from './object-state.js';
import { CacheReads, type ListResult } from './cache-reads.js';
import { Reflector } from './reflector.js';
import { startKindOf, type StartActions } from './start-kinds.js';
import { channels } from '../observe/channels.js';
import { Delivery } from '../selection/selection.js';
import { Expiry, errorEvent } from './expiry.js';
import {
  validateWatchOptions,
  type GetOptions,
  type ListOptions,
  type ValidatedWatch,
  type WatchOptions,
} from './request-options.js';

export type { ListResult } from './cache-reads.js';

export class WatchCache {
  readonly mode: Mode;
  readonly resource: ResourceInfo;
  /** The prom-client Registry the cache's metrics are in (options.registry, or its own). */
  readonly metrics: Registry;
  /** The metrics themselves (engine-internal). */
  private readonly counters: CacheMetrics;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly indexers: Record<string, IndexerFunc>;
  private readonly triggerField: string | undefined;
  private readonly channelCapacity: number | undefined;
  private readonly blockTimeoutMs: number;
  private readonly skipTimeoutFallback: boolean;
  private readonly history: EventHistory;
  private readonly state = new ObjectState();
  private readonly index: WatcherIndex;
  /** The watchers' selections, one per distinct request (shared: classified once per event). */
  private readonly selections: SelectionTable;
  /** Everything that differs between the modes (src/modes/), chosen once here. */
  private readonly strategy: CatchUpStrategy;
  private readonly expiry: Expiry;
  private readonly dispatcher: Dispatcher;
  private readonly bookmarks: BookmarkScheduler;
  private readonly freshness: Freshness;
  private readonly reflector: Reflector;
  private readonly reads: CacheReads;
  /** Test-only fault points (engine-internal option, src/cache/engine-options.ts); undefined outside the harness. */
  private readonly faults: FaultPoints | undefined;
  private readonly watchers = new Set<Watcher>();
  private readonly timeouts = new Map<Watcher, TimerHandle>();
  private rv = 0;
  private nextWatcherId = 1;
  private phase: 'new' | 'starting' | 'ready' | 'stopped' = 'new';
  /** The last error the store reported (for readiness reports). */
  lastStoreError: Error | undefined;

  constructor(options: WatchCacheOptions) {
    if (options === null || typeof options !== 'object' || options.store === undefined)
      throw new BadRequestError('WatchCache needs options with a store');
    this.mode = checkMode(options.mode);
    this.store = options.store;
    this.clock = options.clock ?? realClock;
    this.resource = options.resource ?? DEFAULT_RESOURCE;
    this.indexers = { ...(options.indexers ?? {}) };
    for (const [k, f] of Object.entries(this.indexers))
      if (typeof f !== 'function') throw new BadRequestError(`indexer "${k}" must be a function`);
    this.indexers = totalIndexers(this.indexers); // a throwing indexer reads as "absent", never a crash
    this.triggerField = Object.keys(this.indexers)[0];
    if (
      options.channelCapacity !== undefined &&
      (!Number.isInteger(options.channelCapacity) || options.channelCapacity < 1)
    ) {
      throw new BadRequestError(`channelCapacity must be an integer >= 1, got ${String(options.channelCapacity)}`);
    }
    this.channelCapacity = options.channelCapacity;
    this.blockTimeoutMs = checkPositive('blockTimeoutMs', options.blockTimeoutMs, 3000);
    this.skipTimeoutFallback = options.skipTimeoutFallback === true;
    this.faults = engineOptionsOf(options)?.faults;
    const passOptions = resolvePassOptions(options.pass, this.mode);
    this.counters = new CacheMetrics(this.resource, options.registry);
    this.metrics = this.counters.registry;
    this.history = new EventHistory(options.history);
    this.history.onResize = (c) => this.counters.capacity.set(c);
    this.counters.capacity.set(this.history.capacity);
    this.index = new WatcherIndex(this.triggerField !== undefined);
    this.selections = new SelectionTable(this.indexers, this.triggerField);
    this.expiry = new Expiry(
      this.counters,
      (w) => {
        this.index.remove(w);
        this.strategy.onEnded(w);
      },
      this,
    );
    this.bookmarks = new BookmarkScheduler(
      this.clock,
      checkPositive('bookmarkFrequencyMs', options.bookmarkFrequencyMs, 60_000),
      this.resource,
      () => this.dispatchedRV(),
    );
    this.strategy = createStrategy(this.mode, {
      clock: this.clock,
      history: this.history,
      metrics: this.counters,
      index: this.index,
      bookmarks: this.bookmarks,
      expiry: this.expiry,
      options,
      pass: passOptions,
      indexers: this.indexers,
      triggerField: this.triggerField,
      resourceName: this.resource.resource,
      source: this,
      faults: this.faults,
      lastDispatchedRV: () => this.dispatchedRV(),
      walkedRV: () => this.dispatcher.lastDispatchedRV,
      cacheRV: () => {
        this.dispatcher.settle(); // a pass resyncs here: the live path has walked every event up to it
        return this.rv;
      },
      register: (w, position, initial) => this.register(w, position, initial),
    });
    registerStrategy(this, this.strategy);
    this.dispatcher = new Dispatcher(this.index, this.strategy, this.counters, {
      minWatchers: engineOptionsOf(options)?.liveFirstMinWatchers,
      walkChunk: engineOptionsOf(options)?.liveFirstWalkChunk,
      clock: this.clock,
    });
    this.freshness = new Freshness(
      this.clock,
      this.blockTimeoutMs,
      () => this.rv,
      (s) => this.counters.readWait.observe(s),
      this.store.requestProgress === undefined ? undefined : () => this.store.requestProgress!(),
    );
    this.reads = new CacheReads({
      store: this.store,
      state: this.state,
      history: this.history,
      freshness: this.freshness,
      counters: this.counters,
      resource: this.resource,
      indexers: this.indexers,
      triggerField: this.triggerField,
      skipTimeoutFallback: this.skipTimeoutFallback,
      cacheRV: () => this.rv,
      normalize: (o) => this.normalize(o),
      checkRunning: () => this.checkRunning(),
      consistentRV: () => this.consistentRV(),
    });
    this.reflector = new Reflector(this.store, this.clock, {
      replace: (items, rv) => this.replace(items, rv),
      apply: (event) => this.ingest(event),
      progress: (rv) => this.progress(rv),
      failed: (err) => {
        this.lastStoreError = err;
      },
    });
  }

  /** The last RV the cache has applied. */
  get resourceVersion(): number {
    return this.rv;
  }
  /** Same as `metrics` (kept for older callers). */
  get metricsRegistry(): Registry {
    return this.metrics;
  }
  /** Counts event encodings: pass it to `WatchEvent.jsonLine` / `msgpackFrame` when writing a stream. */
  get encodings(): EncodingCounter {
    return this.counters;
  }
  /**
   * The current value of one of this cache's metrics (its group/resource series only;
   * `labels` narrows further). Counters and gauges: the value; histograms: the count.
   */
  metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
    return this.counters.value(name, labels);
  }
  /** Listed once and watching its store. */
  get ready(): boolean {
    return this.phase === 'ready' && this.reflector.watching;
  }
  /** Watchers currently registered. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /** List and watch the store; resolves when the cache is ready. */
  async start(): Promise<void> {
    if (this.phase !== 'new')
      throw new BadRequestError(`cache already ${this.phase === 'stopped' ? 'stopped' : 'started'}`);
    this.phase = 'starting';
    try {
      await this.reflector.start();
    } catch (err) {
      this.phase = 'new';
      throw err;
    }
    if ((this.phase as string) === 'starting') this.phase = 'ready';
  }

  /** Ends every watch cleanly and stops timers and the reflector. */
  async stop(): Promise<void> {
    if (this.phase === 'stopped') return;
    this.phase = 'stopped';
    this.reflector.stop();
    this.bookmarks.stop();
    this.strategy.close();
    this.dispatcher.stop();
    this.freshness.stop();
    for (const w of [...this.watchers]) w.stop('cache-stopped');
  }

  // ------------------------------------------------------------------ ingest

  private ingest(event: StoreEvent): void {
    if (this.phase === 'stopped' || event.resourceVersion <= this.rv) return; // step 1
    const meta = event.object.metadata;
    const prev = this.state.get(meta.namespace ?? '', meta.name ?? '') ?? event.prevObject;
    const object = this.normalize(event.type === 'DELETED' ? (event.object ?? prev) : event.object);
    const wce = new WatchCacheEvent(
      event.type,
      object,
      prev === undefined ? undefined : this.normalize(prev),
      event.resourceVersion,
      this.clock.now(),
      this.trigger(),
    ); // step 2
    // Timed per phase only while someone subscribes to `watchcache:event`.
    const timed = channels.event.hasSubscribers;
    const t0 = timed ? performance.now() : 0;
    this.history.append(wce); // step 3: appended before it is dispatched (invariant 1)
    const t1 = timed ? performance.now() : 0;
    // The mode's mirror (beta: the shared ring; made after the dispatch, src/beta/deferred-mirror.ts).
    const frame = this.strategy.watchers.mirror(
      wce,
      // The previous object's frame: the state's (made once), or, for a previous object only the store
      // event carried, its own, so the worker classifies against the same previous object as the live path.
      prev === undefined
        ? undefined
        : (encode) => this.state.frameOf(wce.namespace, wce.name, encode) ?? (wce.prevObject && encode(wce.prevObject)),
    );
    const t2 = timed ? performance.now() : 0;
    this.state.apply(wce, frame); // step 4
    this.rv = wce.rv;
    this.freshness.advanced(this.rv);
    let t3 = 0;
    let t4 = 0;
    if (timed) {
      t3 = performance.now();
      wce.deliver(Delivery.AsIs).jsonLine(this.counters); // made once here, as encode-once would on first use
      t4 = performance.now();
    }
    this.dispatcher.dispatch(wce); // step 5
    if (timed)
      channels.event.publish({
        cache: this,
        rv: wce.rv,
        appendMs: t1 - t0 + (t3 - t2),
        ringMs: t2 - t1,
        encodeMs: t4 - t3,
        fanoutMs: performance.now() - t4,
      });
  }

  private progress(rv: number): void {
    if (this.phase === 'stopped' || rv <= this.rv) return;
    this.rv = rv;
    this.freshness.advanced(rv);
    this.dispatcher.progress(rv);
  }

  /** A (re)list: reset the history and the state; watchers that could miss changes end. */
  private replace(items: KubeObject[], listRV: number): void {
    if (this.phase === 'stopped') return;
    const previousRV = this.rv;
    this.dispatcher.settle(); // every event offered ahead is walked before the relist decides who survives
    // Nothing can have been missed only if the new list is at the RV the cache had and the live
    // path had dispatched all of it (off mode may hold undispatched events behind a blocked watcher).
    const continuous =
      listRV === previousRV && this.dispatcher.backlog === 0 && this.dispatcher.lastDispatchedRV >= previousRV;
    this.history.reset(listRV);
    const survivors: Watcher[] = [];
    const ended: Watcher[] = [];
    for (const w of this.watchers) {
      if (w.state === 'pending' || !w.accepting) continue;
      // Synced: offered everything up to the old RV. Unsynced at the list RV: the new history
      // serves it from there. Anyone else could miss changes hidden in the new list.
      // (A history replay in progress continues from its copied batch; if the reset overtakes it,
      // initialOvertaken gives it its 410 at the RV it reached.)
      if (continuous && (!w.unsynced || this.strategy.watchers.positionOf(w) >= listRV)) survivors.push(w);
      else ended.push(w);
    }
    const endedLater = this.strategy.watchers.relistStarting(listRV, survivors, ended);
    this.state.replace(items.map((o) => this.normalize(o)));
    this.rv = Math.max(this.rv, listRV);
    this.dispatcher.reset(this.rv);
    for (const w of ended) if (!endedLater.has(w)) this.strategy.endAtRelist(w, listRV);
    this.freshness.advanced(this.rv);
  }

  private trigger(): IndexerFunc | undefined {
    return this.triggerField === undefined ? undefined : this.indexers[this.triggerField];
  }

  private normalize(object: KubeObject): KubeObject {
    if (object.kind !== undefined && object.apiVersion !== undefined) return object;
    return {
      ...object,
      apiVersion: object.apiVersion ?? apiVersionOf(this.resource),
      kind: object.kind ?? this.resource.kind,
    };
  }

  // ------------------------------------------------------------------ watch

  /** Start a watch. Throws BadRequestError synchronously for malformed options. */
  watch(options: WatchOptions = {}): Watch {
    // The engine's events are the public union at runtime: an ERROR event is only ever built by
    // errorEvent() around a Status (src/cache/expiry.ts).
    return this.startWatch(options, validateWatchOptions(options), undefined) as unknown as Watch;
  }

  /**
   * Register a watch now and hand it to another thread (API.md "Threads"):
   * returns a structured-cloneable handle (shared memory only) for
   * `openWatch(handle)` in any thread. Beta mode (its channels and history
   * live in shared memory); starts '0', 'N' and sendInitialEvents at an RV
   * the cache has (a consistent '' start cannot be fixed synchronously).
   */
  watchPort(options: WatchOptions = {}): WatchPortHandle {
    const ring = this.strategy.watchers.ringHandle;
    if (ring === undefined) throw new BadRequestError(`watchPort needs mode beta (this cache runs ${this.mode})`);
    const v = validateWatchOptions(options);
    if (v.rv === '')
      throw new BadRequestError(
        'watchPort: resourceVersion "" (a consistent start) cannot be fixed synchronously; use "0" or an RV',
      );
    if (options.signal !== undefined)
      throw new BadRequestError('watchPort: an AbortSignal cannot cross threads; call stop() on the opened watch');
    if (v.sendInitialEvents === true && v.rv > this.rv)
      throw new BadRequestError(`watchPort: sendInitialEvents at RV ${v.rv}, ahead of the cache (${this.rv})`);
    const state = newPortState();
    const w = this.startWatch(options, v, state);
    const channel = w.queue as SharedWatcherChannel; // beta's channel: the strategy made it
    channel.onRemoteCancel = () => w.stop('client');
    let initial: SharedArrayBuffer | null = null;
    const pending = this.remoteInitial.get(w);
    this.remoteInitial.delete(w);
    if (pending !== undefined && pending.length > 0) {
      const bytes = msgpack.pack(pending.map((e) => ({ type: e.type, object: e.object })));
      initial = new SharedArrayBuffer(bytes.length);
      new Uint8Array(initial).set(bytes);
    }
    if (w.state === 'draining') channel.endRemote(); // (defensive: a start that already failed)
    return {
      kind: 'watchcache.watch-port',
      version: 1,
      channel: channel.handle,
      ring,
      state,
      cursor: w.cursor.cell,
      room: this.strategy.watchers.roomSignal,
      initial,
      resource: this.resource,
    };
  }

  /** Initial events of remote watches, taken by watchPort right after registration. */
  private readonly remoteInitial = new Map<Watcher, WatchEvent[]>();

  private startWatch(options: WatchOptions, v: ValidatedWatch, remoteState: SharedArrayBuffer | undefined): Watcher {
    const selection = this.selections.acquire(options); // a bad selector throws first; released in watcherEnded
    if (this.phase === 'stopped' || this.phase === 'new') {
      this.selections.release(selection);
      if (this.phase === 'stopped') throw new ServiceUnavailableError('watch cache is stopped');
      throw new ServiceUnavailableError('watch cache is not started: call start() first', 1);
    }
    const usesTrigger = selection.triggerValue !== undefined;
    const capacity =
      v.channelCapacity ??
      this.channelCapacity ??
      suggestedChannelSize(
        this.history.capacity,
        this.history.eventFreshDurationMs,
        this.triggerField !== undefined,
        usesTrigger,
      );
    const spec = this.strategy.watchers.channelFor(capacity, remoteState);
    const w = new Watcher({
      id: this.nextWatcherId++,
      selection,
      capacity,
      allowBookmarks: v.allowBookmarks,
      owner: this.owner,
      faults: this.faults,
      ...(spec ?? {}),
    });
    this.watchers.add(w);
    this.counters.registeredWatchers.set(this.watchers.size);
    this.strategy.watchers.registered(w);
    if (v.timeoutMs !== Infinity) {
      w.deadline = this.clock.now() + v.timeoutMs;
      this.timeouts.set(
        w,
        this.clock.setTimeout(() => w.stop('timeout'), v.timeoutMs),
      );
    }
    if (options.signal !== undefined) {
      const signal = options.signal;
      if (signal.aborted) {
        w.stop('client');
        return w;
      }
      const onAbort = (): void => w.stop('client');
      signal.addEventListener('abort', onAbort, { once: true });
    }
    // The start kinds, in order (src/cache/start-kinds.ts): the first that applies starts it.
    startKindOf(v, this.rv).start(this.startActions, w, v, this.rv);
    return w;
  }

  /** What the start kinds use (src/cache/start-kinds.ts). */
  private readonly startActions: StartActions = {
    consistentRV: () => this.consistentRV(),
    untilFresh: (rv) => this.freshness.wait(rv),
    fromState: (w, endBookmark) => this.startFromState(w, endBookmark),
    fromRV: (w, rv) => this.startFromRV(w, rv),
    fail: (w, err) => this.failStart(w, toWatchCacheError(err)),
  };

  /** Initial state as ADDED events (then the initial-events-end bookmark if asked), then live. */
  private startFromState(w: Watcher, endBookmark: boolean): void {
    if (w.state !== 'pending' || this.phase === 'stopped') return;
    const events: WatchEvent[] = [];
    const sel = w.selection;
    for (const key of this.state.keys()) {
      const obj = this.state.get(...splitKey(key));
      if (obj !== undefined && sel.matches(obj)) events.push(this.state.addedEvent(key)!);
    }
    if (endBookmark) events.push(bookmarkEvent(this.resource, this.rv, { 'k8s.io/initial-events-end': 'true' }));
    if (w.queue.remote === true) {
      this.remoteInitial.set(w, events); // encoded into the port handle
      this.register(w, this.rv, undefined);
      return;
    }
    this.register(w, this.rv, new SnapshotSource(events));
  }

  /** Every event after `rv`: from the history (410 if too old), or from now on for a future RV. */
  private startFromRV(w: Watcher, rv: number): void {
    if (w.state !== 'pending' || this.phase === 'stopped') return;
    if (rv >= this.rv) {
      this.register(w, rv, undefined); // a future RV starts at once and delivers only events above it
      return;
    }
    if (this.history.isTooOld(rv)) {
      const oldest = this.history.oldestServableRV();
      this.expiry.atStart(w, rv, oldest === undefined ? this.rv : oldest - 1);
      return;
    }
    this.strategy.watchers.startBehind(w, rv);
  }

  private register(w: Watcher, position: number, initial: InitialSource | undefined): void {
    w.activate(position, initial);
    this.index.add(w);
    this.bookmarks.schedule(w);
  }

  /** A start that cannot be served (504 and friends; a 410 goes through the expiry path): one ERROR event, then the end. */
  private failStart(w: Watcher, err: WatchCacheError): void {
    if (w.state !== 'pending') return;
    w.activate(0, undefined);
    w.drain('error', errorEvent(err));
  }

  // ---- WatcherOwner (internal: what a watcher tells its cache) ----

  private readonly owner: WatcherOwner = {
    watcherEnded: (w, reason) => this.watcherEnded(w, reason),
    watcherHasRoom: (w) => this.strategy.onRoom(w),
    initialOvertaken: (w) => this.strategy.initialOvertaken(w),
    channelOverwritten: (w) => this.channelOverwritten(w),
    watcherParked: (w) => this.dispatcher.watcherParked(w),
  };

  /** The live path's last dispatched RV, once it has walked every event offered ahead (Dispatcher.settle). */
  private dispatchedRV(): number {
    this.dispatcher.settle();
    return this.dispatcher.lastDispatchedRV;
  }

  private watcherEnded(w: Watcher, reason: EndReason): void {
    if (w.queue.remote === true && reason !== 'expired' && reason !== 'client') w.queue.endRemote?.();
    if (channels.watcherEnd.hasSubscribers) channels.watcherEnd.publish({ cache: this, watcherId: w.id, reason });
    this.index.remove(w);
    this.selections.release(w.selection);
    this.strategy.onEnded(w);
    const t = this.timeouts.get(w);
    if (t !== undefined) {
      this.clock.clearTimeout(t);
      this.timeouts.delete(w);
    }
    if (this.watchers.delete(w)) this.counters.registeredWatchers.set(this.watchers.size);
  }

  private channelOverwritten(w: Watcher): void {
    // The event its channel references has left the history: an honest 410, never wrong data.
    // Also while draining toward an expiry 410: the rest of the backlog follows a gap, so it is
    // dropped and the 410 comes now. The client resumes from what it received; that is what aged out.
    const oldest = this.history.oldestServableRV() ?? this.rv + 1;
    this.expiry.dropBacklog(w, oldest - 1, !w.reachedLive);
  }

  // ------------------------------------------------------------------ list / get (src/cache/cache-reads.ts)

  /** List with Kubernetes RV semantics ('' consistent, '0' any, 'N' NotOlderThan or Exact; limit + continue). */
  list(options: ListOptions = {}): Promise<ListResult> {
    return this.reads.list(options);
  }

  /** Get one object ('' consistent, '0' any, 'N' not older than N). */
  get(namespace: string, name: string, options: GetOptions = {}): Promise<KubeObject> {
    return this.reads.get(namespace, name, options);
  }

  /** The history's bounds (the harness reads them to judge a 410). */
  historyBounds(): HistoryBounds {
    return this.history.bounds();
  }

  private checkRunning(): void {
    if (this.phase === 'stopped') throw new ServiceUnavailableError('watch cache is stopped');
    if (this.phase !== 'ready' && this.phase !== 'starting')
      throw new ServiceUnavailableError('watch cache is not started', 1);
  }

  /** The store's current RV, for a consistent read or start. */
  private async consistentRV(): Promise<number> {
    try {
      return await this.store.currentResourceVersion();
    } catch (err) {
      throw new ServiceUnavailableError(`cannot reach the store for a consistent read: ${(err as Error).message}`, 1);
    }
  }
}

export { errorEvent };
