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
 */
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import {
  BadRequestError,
  NotFoundError,
  ResourceExpiredError,
  ServiceUnavailableError,
  TooLargeResourceVersionError,
  TooManyRequestsError,
  toWatchCacheError,
  type WatchCacheError,
} from '../core/errors.js';
import { DEFAULT_RESOURCE, apiVersionOf, objectKey, type IndexerFunc, type KubeObject, type ResourceInfo, type Store, type StoreEvent } from '../core/types.js';
import { BookmarkScheduler, bookmarkEvent } from '../dispatch/bookmark-scheduler.js';
import { Dispatcher } from '../dispatch/dispatcher.js';
import { WatcherIndex } from '../dispatch/watcher-index.js';
import { EventHistory, type HistoryBounds } from '../history/event-history.js';
import { WatchCacheEvent } from '../history/watch-cache-event.js';
import { CacheMetrics } from '../metrics/cache-metrics.js';
import { Selection } from '../selection/selection.js';
import { resolvePassOptions } from '../sync/pass-options.js';
import { StallPolicy } from '../sync/stall-policy.js';
import { BetaSync } from '../beta/beta-sync.js';
import type { SharedWatcherChannel } from '../beta/shared-watcher-channel.js';
import { newPortState, type WatchPortHandle } from '../beta/watch-port.js';
import type { CatchUpStrategy } from '../modes/catch-up-strategy.js';
import { createStrategy } from '../modes/strategies.js';
import { SnapshotSource, type InitialSource } from '../watch/initial-source.js';
import { Watcher, type EndReason, type WatcherOwner } from '../watch/watcher.js';
import { WatchEvent, msgpack } from '../wire/watch-event.js';
import { checkMode, checkPositive, suggestedChannelSize, type Mode, type WatchCacheOptions } from './cache-options.js';
import { decodeContinue } from './continue-token.js';
import { Freshness } from './freshness.js';
import { buildPage, type ListPage } from './list-page.js';
import { ObjectState } from './object-state.js';
import { Reflector } from './reflector.js';
import { channels } from '../observe/channels.js';
import { Delivery } from '../selection/selection.js';
import { Expiry, errorEvent } from './expiry.js';
import { validateListOptions, validateWatchOptions, type GetOptions, type ListOptions, type ValidatedWatch, type WatchOptions } from './request-options.js';

export interface ListResult {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KubeObject[];
}

export class WatchCache implements WatcherOwner {
  readonly mode: Mode;
  readonly resource: ResourceInfo;
  readonly metrics: CacheMetrics;
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
  /** Everything that differs between the modes (src/modes/), chosen once here. */
  private readonly strategy: CatchUpStrategy;
  private readonly expiry: Expiry;
  private readonly dispatcher: Dispatcher;
  private readonly bookmarks: BookmarkScheduler;
  private readonly freshness: Freshness;
  private readonly reflector: Reflector;
  private readonly watchers = new Set<Watcher>();
  private readonly timeouts = new Map<Watcher, TimerHandle>();
  private rv = 0;
  private nextWatcherId = 1;
  private phase: 'new' | 'starting' | 'ready' | 'stopped' = 'new';
  /** The last error the store reported (for readiness reports). */
  lastStoreError: Error | undefined;

  constructor(options: WatchCacheOptions) {
    if (options === null || typeof options !== 'object' || options.store === undefined) throw new BadRequestError('WatchCache needs options with a store');
    this.mode = checkMode(options.mode);
    this.store = options.store;
    this.clock = options.clock ?? realClock;
    this.resource = options.resource ?? DEFAULT_RESOURCE;
    this.indexers = { ...(options.indexers ?? {}) };
    for (const [k, f] of Object.entries(this.indexers)) if (typeof f !== 'function') throw new BadRequestError(`indexer "${k}" must be a function`);
    this.triggerField = Object.keys(this.indexers)[0];
    if (options.channelCapacity !== undefined && (!Number.isInteger(options.channelCapacity) || options.channelCapacity < 1)) {
      throw new BadRequestError(`channelCapacity must be an integer >= 1, got ${String(options.channelCapacity)}`);
    }
    this.channelCapacity = options.channelCapacity;
    this.blockTimeoutMs = checkPositive('blockTimeoutMs', options.blockTimeoutMs, 3000);
    this.skipTimeoutFallback = options.skipTimeoutFallback === true;
    const passOptions = resolvePassOptions(options.pass, this.mode);
    this.metrics = new CacheMetrics(this.resource, options.registry);
    this.history = new EventHistory(options.history);
    this.history.onResize = (c) => this.metrics.capacity.set(c);
    this.metrics.capacity.set(this.history.capacity);
    this.index = new WatcherIndex(this.triggerField !== undefined);
    this.expiry = new Expiry(this.metrics, (w) => {
      this.index.remove(w);
      this.strategy.onEnded(w);
    }, this);
    this.bookmarks = new BookmarkScheduler(this.clock, checkPositive('bookmarkFrequencyMs', options.bookmarkFrequencyMs, 60_000), this.resource, () => this.dispatcher.lastDispatchedRV);
    this.strategy = createStrategy(this.mode, {
      clock: this.clock,
      history: this.history,
      metrics: this.metrics,
      index: this.index,
      bookmarks: this.bookmarks,
      expiry: this.expiry,
      options,
      pass: passOptions,
      indexers: this.indexers,
      triggerField: this.triggerField,
      resourceName: this.resource.resource,
      source: this,
      lastDispatchedRV: () => this.dispatcher.lastDispatchedRV,
      cacheRV: () => this.rv,
      register: (w, position, initial) => this.register(w, position, initial),
    });
    this.dispatcher = new Dispatcher(this.index, this.strategy, this.metrics);
    this.freshness = new Freshness(
      this.clock,
      this.blockTimeoutMs,
      () => this.rv,
      (s) => this.metrics.readWait.observe(s),
      this.store.requestProgress === undefined ? undefined : () => this.store.requestProgress!(),
    );
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
  get metricsRegistry(): CacheMetrics['registry'] {
    return this.metrics.registry;
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
    if (this.phase !== 'new') throw new BadRequestError(`cache already ${this.phase === 'stopped' ? 'stopped' : 'started'}`);
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
    this.freshness.stop();
    for (const w of [...this.watchers]) w.stop('cache-stopped');
  }

  // ------------------------------------------------------------------ ingest

  private ingest(event: StoreEvent): void {
    if (this.phase === 'stopped' || event.resourceVersion <= this.rv) return; // step 1
    const meta = event.object.metadata;
    const prev = this.state.get(meta.namespace ?? '', meta.name ?? '') ?? event.prevObject;
    const object = this.normalize(event.type === 'DELETED' ? (event.object ?? prev) : event.object);
    const wce = new WatchCacheEvent(event.type, object, prev === undefined ? undefined : this.normalize(prev), event.resourceVersion, this.clock.now(), this.trigger()); // step 2
    // Timed per phase only while someone subscribes to `watchcache:event`.
    const timed = channels.event.hasSubscribers;
    const t0 = timed ? performance.now() : 0;
    this.history.append(wce); // step 3: appended before it is dispatched (invariant 1)
    const t1 = timed ? performance.now() : 0;
    // The mode's mirror (beta: the shared ring), before the event is applied and dispatched.
    const frame = this.strategy.mirror(wce, prev === undefined ? undefined : (encode) => this.state.frameOf(wce.namespace, wce.name, encode));
    const t2 = timed ? performance.now() : 0;
    this.state.apply(wce, frame); // step 4
    this.rv = wce.rv;
    this.freshness.advanced(this.rv);
    let t3 = 0;
    let t4 = 0;
    if (timed) {
      t3 = performance.now();
      wce.deliver(Delivery.AsIs).jsonLine(this.metrics); // made once here, as encode-once would on first use
      t4 = performance.now();
    }
    this.dispatcher.dispatch(wce); // step 5
    if (timed) channels.event.publish({ cache: this, rv: wce.rv, appendMs: t1 - t0 + (t3 - t2), ringMs: t2 - t1, encodeMs: t4 - t3, fanoutMs: performance.now() - t4 });
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
    // Nothing can have been missed only if the new list is at the RV the cache had and the live
    // path had dispatched all of it (off mode may hold undispatched events behind a blocked watcher).
    const continuous = listRV === previousRV && this.dispatcher.backlog === 0 && this.dispatcher.lastDispatchedRV >= previousRV;
    this.history.reset(listRV);
    const survivors: Watcher[] = [];
    const ended: Watcher[] = [];
    for (const w of this.watchers) {
      if (w.state === 'pending' || !w.accepting) continue;
      // Synced: offered everything up to the old RV. Unsynced at the list RV: the new history
      // serves it from there. Anyone else could miss changes hidden in the new list.
      // (A history replay in progress continues from its copied batch; if the reset overtakes it,
      // initialOvertaken gives it its 410 at the RV it reached.)
      if (continuous && (!w.unsynced || this.strategy.positionOf(w) >= listRV)) survivors.push(w);
      else ended.push(w);
    }
    const endedLater = this.strategy.relistStarting(listRV, survivors, ended);
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
    return { ...object, apiVersion: object.apiVersion ?? apiVersionOf(this.resource), kind: object.kind ?? this.resource.kind };
  }

  // ------------------------------------------------------------------ watch

  /** Start a watch. Throws BadRequestError synchronously for malformed options. */
  watch(options: WatchOptions = {}): Watcher {
    return this.startWatch(options, validateWatchOptions(options), undefined);
  }

  /**
   * Register a watch now and hand it to another thread (API.md "Threads"):
   * returns a structured-cloneable handle (shared memory only) for
   * `openWatch(handle)` in any thread. Beta mode (its channels and history
   * live in shared memory); starts '0', 'N' and sendInitialEvents at an RV
   * the cache has (a consistent '' start cannot be fixed synchronously).
   */
  watchPort(options: WatchOptions = {}): WatchPortHandle {
    const ring = this.strategy.ringHandle;
    if (ring === undefined) throw new BadRequestError(`watchPort needs mode beta (this cache runs ${this.mode})`);
    const v = validateWatchOptions(options);
    if (v.rv === '') throw new BadRequestError('watchPort: resourceVersion "" (a consistent start) cannot be fixed synchronously; use "0" or an RV');
    if (options.signal !== undefined) throw new BadRequestError('watchPort: an AbortSignal cannot cross threads; call stop() on the opened watch');
    if (v.sendInitialEvents === true && v.rv > this.rv) throw new BadRequestError(`watchPort: sendInitialEvents at RV ${v.rv}, ahead of the cache (${this.rv})`);
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
    return { kind: 'watchcache.watch-port', version: 1, channel: channel.spsc.handle, ring, state, initial, resource: this.resource };
  }

  /** Initial events of remote watches, taken by watchPort right after registration. */
  private readonly remoteInitial = new Map<Watcher, WatchEvent[]>();

  private startWatch(options: WatchOptions, v: ValidatedWatch, remoteState: SharedArrayBuffer | undefined): Watcher {
    const selection = new Selection(options, this.indexers, this.triggerField);
    if (this.phase === 'stopped') throw new ServiceUnavailableError('watch cache is stopped');
    if (this.phase === 'new') throw new ServiceUnavailableError('watch cache is not started: call start() first', 1);
    const usesTrigger = selection.triggerValue !== undefined;
    const capacity = v.channelCapacity ?? this.channelCapacity ?? suggestedChannelSize(this.history.capacity, this.history.eventFreshDurationMs, this.triggerField !== undefined, usesTrigger);
    const spec = this.strategy.channelFor(capacity, remoteState);
    const w = new Watcher({ id: this.nextWatcherId++, selection, capacity, allowBookmarks: v.allowBookmarks, owner: this, ...(spec ?? {}) });
    this.watchers.add(w);
    this.metrics.registeredWatchers.set(this.watchers.size);
    this.strategy.registered(w);
    if (v.timeoutMs !== Infinity) {
      w.deadline = this.clock.now() + v.timeoutMs;
      this.timeouts.set(w, this.clock.setTimeout(() => w.stop('timeout'), v.timeoutMs));
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
    const sie = v.sendInitialEvents;
    if (v.rv === '' && sie !== false) {
      // Consistent start: catch up to the store's current RV first (up to blockTimeoutMs).
      this.consistentRV()
        .then((target) => this.freshness.wait(target))
        .then(
          () => this.startFromState(w, sie === true && v.allowBookmarks),
          (err: unknown) => this.failStart(w, toWatchCacheError(err)),
        );
    } else if (v.rv === '') {
      // sendInitialEvents=false with '': start at the store's current RV, no initial events.
      this.consistentRV().then(
        (target) => this.startFromRV(w, target),
        (err: unknown) => this.failStart(w, toWatchCacheError(err)),
      );
    } else if (sie === true && v.rv <= this.rv) {
      this.startFromState(w, v.allowBookmarks); // fresh enough already: registered now
    } else if (sie === true) {
      const n = v.rv;
      this.freshness.wait(n).then(
        () => this.startFromState(w, v.allowBookmarks),
        (err: unknown) => this.failStart(w, toWatchCacheError(err)),
      );
    } else if (v.rv === 0) {
      if (sie === false) this.startFromRV(w, this.rv);
      else this.startFromState(w, false);
    } else {
      this.startFromRV(w, v.rv);
    }
    return w;
  }

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
    this.strategy.startBehind(w, rv);
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

  // ---- WatcherOwner ----

  watcherEnded(w: Watcher, reason: EndReason): void {
    if (w.queue.remote === true && reason !== 'expired' && reason !== 'client') w.queue.endRemote?.();
    if (channels.watcherEnd.hasSubscribers) channels.watcherEnd.publish({ cache: this, watcherId: w.id, reason });
    this.index.remove(w);
    this.strategy.onEnded(w);
    const t = this.timeouts.get(w);
    if (t !== undefined) {
      this.clock.clearTimeout(t);
      this.timeouts.delete(w);
    }
    if (this.watchers.delete(w)) this.metrics.registeredWatchers.set(this.watchers.size);
  }

  watcherHasRoom(w: Watcher): void {
    this.strategy.onRoom(w);
  }

  initialOvertaken(w: Watcher): void {
    this.strategy.initialOvertaken(w);
  }

  channelOverwritten(w: Watcher): void {
    // The event its channel references has left the history: an honest 410, never wrong data.
    // Also while draining toward an expiry 410: the rest of the backlog follows a gap, so it is
    // dropped and the 410 comes now. The client resumes from what it received; that is what aged out.
    const oldest = this.history.oldestServableRV() ?? this.rv + 1;
    this.expiry.dropBacklog(w, oldest - 1, !w.reachedLive);
  }

  // ------------------------------------------------------------------ list / get

  /** List with Kubernetes RV semantics ('' consistent, '0' any, 'N' NotOlderThan or Exact; limit + continue). */
  async list(options: ListOptions = {}): Promise<ListResult> {
    const v = validateListOptions(options);
    const selection = new Selection({ namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector }, this.indexers, this.triggerField);
    this.checkRunning();
    let page: ListPage;
    if (options.continue !== undefined && options.continue !== '') {
      const point = decodeContinue(options.continue);
      page = this.pageAt(point.rv, selection, v.limit, point.start, true);
    } else if (v.rv === '') {
      page = await this.consistentRead(
        () => this.pageNow(selection, v.limit),
        async () => {
          const snap = await this.store.list();
          const byKey = new Map(snap.items.map((o) => [objectKey(o.metadata.namespace ?? '', o.metadata.name ?? ''), this.normalize(o)]));
          return buildPage([...byKey.keys()].sort(), (k) => byKey.get(k), selection, snap.resourceVersion, v.limit, undefined);
        },
      );
    } else if (v.rv === 0) {
      page = this.pageNow(selection, v.limit);
    } else {
      await this.freshness.wait(v.rv);
      page = v.match === 'Exact' ? this.pageAt(v.rv, selection, v.limit, undefined, false) : this.pageNow(selection, v.limit);
    }
    const metadata: ListResult['metadata'] = { resourceVersion: String(page.resourceVersion) };
    if (page.continue !== undefined) metadata.continue = page.continue;
    if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
    return { apiVersion: apiVersionOf(this.resource), kind: `${this.resource.kind}List`, metadata, items: page.items };
  }

  /** Get one object ('' consistent, '0' any, 'N' not older than N). */
  async get(namespace: string, name: string, options: GetOptions = {}): Promise<KubeObject> {
    const v = validateListOptions({ resourceVersion: options.resourceVersion });
    if (typeof name !== 'string' || name === '') throw new BadRequestError('name is required');
    this.checkRunning();
    const lookup = (): KubeObject => {
      const obj = this.state.get(namespace ?? '', name);
      if (obj === undefined) throw new NotFoundError(this.resource.kind, name);
      return obj;
    };
    if (v.rv === '') {
      return this.consistentRead(lookup, async () => {
        const snap = await this.store.list();
        const obj = snap.items.find((o) => (o.metadata.namespace ?? '') === (namespace ?? '') && o.metadata.name === name);
        if (obj === undefined) throw new NotFoundError(this.resource.kind, name);
        return this.normalize(obj);
      });
    }
    if (v.rv !== 0) await this.freshness.wait(v.rv);
    return lookup();
  }

  /** The history's bounds (the harness reads them to judge a 410). */
  historyBounds(): HistoryBounds {
    return this.history.bounds();
  }

  /** Test and simulator hook: alpha's unsynced watchers and pass state (undefined in off and beta). */
  get stallPolicy(): StallPolicy | undefined {
    return this.strategy instanceof StallPolicy ? this.strategy : undefined;
  }

  /** Test and benchmark hook: beta's main-thread side of the sync worker (undefined in off and alpha). */
  get betaSync(): BetaSync | undefined {
    return this.strategy instanceof BetaSync ? this.strategy : undefined;
  }

  private checkRunning(): void {
    if (this.phase === 'stopped') throw new ServiceUnavailableError('watch cache is stopped');
    if (this.phase !== 'ready' && this.phase !== 'starting') throw new ServiceUnavailableError('watch cache is not started', 1);
  }

  /** The store's current RV, for a consistent read or start. */
  private async consistentRV(): Promise<number> {
    try {
      return await this.store.currentResourceVersion();
    } catch (err) {
      throw new ServiceUnavailableError(`cannot reach the store for a consistent read: ${(err as Error).message}`, 1);
    }
  }

  /**
   * Consistent read (seed 001): wait until the cache has the store's current
   * RV, then serve from the cache; on timeout fall back to the store, or
   * answer 429 when skipTimeoutFallback is set.
   */
  private async consistentRead<T>(fromCache: () => T, fromStore: () => Promise<T>): Promise<T> {
    const target = await this.consistentRV();
    try {
      await this.freshness.wait(target);
    } catch (err) {
      if (!(err instanceof TooLargeResourceVersionError)) throw err;
      if (this.skipTimeoutFallback) {
        this.metrics.consistentReadDone(false, 'skipped');
        throw new TooManyRequestsError(err.message, 1);
      }
      try {
        const result = await fromStore();
        this.metrics.consistentReadDone(true, 'true');
        return result;
      } catch (fallbackErr) {
        this.metrics.consistentReadDone(false, 'true');
        throw fallbackErr;
      }
    }
    try {
      const result = fromCache();
      this.metrics.consistentReadDone(true, 'false');
      return result;
    } catch (e) {
      this.metrics.consistentReadDone(false, 'false');
      throw e;
    }
  }

  private pageNow(selection: Selection, limit: number): ListPage {
    return buildPage(this.state.keys(), (k) => this.state.get(...splitKey(k)), selection, this.rv, limit, undefined);
  }

  /** A page of the state exactly at `rv` (410 if the history no longer reaches back to it). */
  private pageAt(rv: number, selection: Selection, limit: number, start: string | undefined, fromContinue: boolean): ListPage {
    if (rv > this.rv) throw new TooLargeResourceVersionError(rv, this.rv);
    if (rv === this.rv) return buildPage(this.state.keys(), (k) => this.state.get(...splitKey(k)), selection, rv, limit, start);
    if (this.history.isTooOld(rv)) {
      const oldest = this.history.oldestServableRV();
      throw fromContinue
        ? new ResourceExpiredError('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.')
        : ResourceExpiredError.tooOld(rv, oldest === undefined ? this.rv : oldest - 1);
    }
    const after = [];
    for (let i = this.history.indexAfter(rv); i < this.history.endIndex; i++) after.push(this.history.at(i));
    const state = this.state.stateAt(after);
    return buildPage([...state.keys()].sort(), (k) => state.get(k), selection, rv, limit, start);
  }
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}

export { errorEvent };
