/**
 * BetaSync: `beta` mode on the main thread (KEP-6268 "Target design").
 *
 * The main thread ingests and runs live dispatch over the synced set only.
 * 1. Every event appended to the history is also encoded once with msgpackr
 *    into the SharedArrayBuffer history ring (same absolute index) and
 *    published with Atomics; the control block carries the last dispatched
 *    RV and the oldest servable RV.
 * 2. A failed live push marks the watcher unsynced at X - 1, removes it from
 *    the live index (separate sets), hands its shared channel to the sync
 *    worker and sends one `adopt` message. A watch that starts at an old RV
 *    is adopted the same way (one resync path).
 * 3. The worker serves it off the main thread. When it is within the hand-off
 *    distance of the last dispatched RV, the worker hands it back; the main
 *    thread delivers those last few events and marks it synced. The resync
 *    point is the last dispatched RV, so the live path never skips an event.
 * 4. An expired watcher comes back with its position and the oldest RV; the
 *    main thread drains its backlog and sends the 410.
 */
import type { EventLoopUtilization } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { IndexerFunc, KubeObject } from '../core/types.js';
import type { FullChannelPolicy } from '../dispatch/full-channel-policy.js';
import type { EventHistory } from '../history/event-history.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { eventTypeCode, HistoryRing } from '../ring/history-ring.js';
import { hash32, hashOptional } from '../ring/hash32.js';
import { WriterOwner } from '../ring/spsc-channel.js';
import { Delivery } from '../selection/selection.js';
import { UnsyncedSet } from '../sync/unsynced-set.js';
import { channels } from '../observe/channels.js';
import { Offer, offer } from '../watch/offer.js';
import type { PassOptions } from '../sync/pass-options.js';
import type { StallHooks } from '../sync/stall-policy.js';
import type { Watcher } from '../watch/watcher.js';
import { msgpack } from '../wire/watch-event.js';
import { ControlBlock } from './control-block.js';
import { SharedWatcherChannel, VARIANT_BOOKMARK } from './shared-watcher-channel.js';
import { ChannelSlabs, type SlabSlot } from './channel-slabs.js';
import { type AdoptRequest, type MainToWorker, type WorkerToMain } from './sync-messages.js';
import type { RingSelectionData, WorkerPassHost } from './worker-pass-host.js';
import { SyncWorkerEndpoint } from './sync-worker-endpoint.js';

/** Where the sync worker runs: a worker thread (production) or in-process on the engine's clock (simulation). */
export type SyncWorkerPlacement = 'thread' | 'in-process';

/** Arena bytes the ring may grow to per event of the largest history (payloads are ~4 KiB for a 2 KiB pod). */
const RING_BYTES_PER_EVENT = 8 * 1024;
/** The ring's arena limit (Int32 offsets). */
const MAX_ARENA_BYTES = 0x7ffffff8;

/** Introductions posted per turn of the event loop. */
const INTRO_CHUNK = 256;

export interface BetaSyncInit {
  clock: Clock;
  placement: SyncWorkerPlacement;
  pass: PassOptions;
  history: EventHistory;
  metrics: CacheMetrics;
  hooks: StallHooks;
  indexers: Record<string, IndexerFunc>;
  triggerField: string | undefined;
  lastDispatchedRV: () => number;
  /** For logs. */
  resourceName: string;
  /** The cache (the observer channels' `cache`); default this object. */
  source?: object;
}

/** Worker-side accounting the main thread receives once per pass. */
export interface BetaWorkerStats {
  passes: number;
  pushes: number;
  scanned: number;
  /** Scanned events whose payload some member's scope made worth decoding. */
  decodes: number;
  workMs: number;
}

export class BetaSync implements FullChannelPolicy {
  /** Watchers the sync worker owns (main thread's view). */
  readonly unsynced: UnsyncedSet<Watcher>;
  readonly workerStats: BetaWorkerStats = { passes: 0, pushes: 0, scanned: 0, decodes: 0, workMs: 0 };
  private readonly history: EventHistory;
  private readonly metrics: CacheMetrics;
  private readonly hooks: StallHooks;
  private readonly source: object;
  private readonly indexers: Record<string, IndexerFunc>;
  private readonly indexerFields: string[];
  private readonly lastDispatched: () => number;
  private readonly ring: HistoryRing;
  private readonly control = new ControlBlock();
  /** Pooled channels and position cells: the worker gets each slab once, a watcher is then two numbers. */
  private readonly slabs = new ChannelSlabs((id, buffer) => this.post({ op: 'slab', id, buffer }));
  /** Regions of ended watchers whose writer side the worker still holds: pooled once it hands them back. */
  private quarantine: { slot: SlabSlot; channel: SharedWatcherChannel }[] = [];
  private worker: Worker | undefined;
  private inProcess: SyncWorkerEndpoint | undefined;
  private readonly clock: Clock;
  private readonly placement: SyncWorkerPlacement;
  private readonly passOptions: PassOptions;
  private readonly triggerField: string | undefined;
  private readonly resourceName: string;
  /** Watchers whose channel and selection the worker has (first adopt sends them). */
  private readonly introduced = new Set<number>();
  private readonly lowerBound: number;
  private closed = false;
  /** Set when the ring could not mirror the history: the worker can no longer serve anyone. */
  private desynced = false;
  /** Called when the worker reports an internal error (tests assert it never happens). */
  onWorkerError: ((message: string) => void) | undefined;

  constructor(init: BetaSyncInit) {
    this.history = init.history;
    this.resourceName = init.resourceName;
    this.metrics = init.metrics;
    this.hooks = init.hooks;
    this.source = init.source ?? this;
    this.unsynced = new UnsyncedSet(init.metrics, this.source);
    this.indexers = init.indexers;
    this.indexerFields = Object.keys(init.indexers);
    this.lastDispatched = init.lastDispatchedRV;
    this.lowerBound = init.history.lowerBound;
    let maxCapacity = this.lowerBound;
    while (maxCapacity < init.history.upperBound) maxCapacity *= 2;
    // The ring must hold the whole history (issue 13, deliverable 5): a payload (the event's frame, its
    // selection data and the previous object's frame) is ~4 KiB for a 2 KiB pod, so the arena may grow
    // to 8 KiB per event of the largest history (address space reserved, memory used only as it grows);
    // capped at 2 KiB per event it held about half of a 50,000-event history.
    const arenaBytes = Math.max(64 * 1024, this.lowerBound * 2048);
    this.ring = new HistoryRing({
      capacity: this.lowerBound,
      maxCapacity,
      arenaBytes,
      maxArenaBytes: Math.max(arenaBytes, Math.min(MAX_ARENA_BYTES, maxCapacity * RING_BYTES_PER_EVENT)),
    });
    this.clock = init.clock;
    this.placement = init.placement;
    this.passOptions = init.pass;
    this.triggerField = init.triggerField;
    this.startWorker();
  }

  /** Start (or restart) the sync worker and send it the shared memory it reads. */
  private startWorker(): void {
    if (this.placement === 'thread') {
      this.inProcess = undefined;
      const worker = new Worker(new URL('../../workers/sync-worker.js', import.meta.url));
      this.worker = worker;
      worker.unref();
      worker.on('message', (msg: WorkerToMain) => this.worker === worker && this.onWorkerMessage(msg));
      worker.on('error', (err) => this.worker === worker && this.workerDied(`error: ${err.stack ?? err.message}`));
      worker.on('exit', (code) => this.worker === worker && this.workerDied(`exit code ${code}`));
    } else {
      // Same endpoint code, messages delivered asynchronously on the engine's clock.
      this.worker = undefined;
      this.inProcess = new SyncWorkerEndpoint(
        (msg) => this.clock.setTimeout(() => this.onWorkerMessage(msg), 0),
        this.clock,
      );
    }
    this.post({
      op: 'init',
      ring: this.ring.handle,
      control: this.control.buffer,
      pass: this.passOptions,
      indexerFields: this.indexerFields,
      triggerField: this.triggerField,
    });
    // A restarted worker gets every slab again (once each, never per watcher).
    this.slabs.buffers.forEach((buffer, id) => this.post({ op: 'slab', id, buffer }));
  }

  /**
   * The worker died: count and log it, start a new one and hand it every
   * unsynced watcher again at its true position: the furthest of what the
   * dead worker recorded, what is still queued in the channel and what the
   * consumer already took. Nothing is lost (the history still holds what
   * follows) and nothing is pushed twice.
   */
  private workerDied(why: string): void {
    if (this.closed) return;
    this.metrics.syncWorkerRestarts.inc();
    console.error(`watchcache: the ${this.resourceName} sync worker died (${why}); restarting it`);
    this.onWorkerError?.(`sync worker died: ${why}`);
    this.worker = undefined;
    this.introduced.clear();
    // The dead worker writes nothing any more: the regions it held are free.
    for (const q of this.quarantine) this.slabs.release(q.slot);
    this.quarantine = [];
    this.pendingAdopts = []; // every unsynced watcher is adopted again below, with its channel
    this.pendingRows = [];
    this.pendingIntros.clear();
    this.startWorker();
    for (const w of [...this.unsynced.values()]) {
      const channel = w.queue as SharedWatcherChannel;
      w.cursor.raiseTo(w.receivedRV);
      const ref = channel.spsc.lastPushedRef();
      if (
        ref >= 0 &&
        (channel.spsc.lastPushedVariant as number) !== VARIANT_BOOKMARK &&
        ref >= this.history.startIndex &&
        ref < this.history.endIndex
      ) {
        w.cursor.raiseTo(this.history.at(ref).rv); // pushed, but the dead worker may not have recorded it
      }
      channel.spsc.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN); // the dead worker's role
      this.adopt(w);
      // The dead worker's last "pushed" notice may be lost: wake every consumer it may have fed.
      w.notify();
    }
  }

  /**
   * How far a watcher the worker serves has really got: its cursor is the
   * shared cell the worker writes, and the consumer may already have taken
   * an event the worker pushed just before it recorded it.
   */
  positionOf(w: Watcher): number {
    return Math.max(w.position, w.receivedRV);
  }

  /** The in-process sync worker's pass host (placement 'in-process': the simulator models its cost). */
  get inProcessHost(): WorkerPassHost | undefined {
    return this.inProcess?.host;
  }

  /**
   * The sync worker thread's event-loop utilization since `since` (Node's
   * EventLoopUtilization; undefined in-process): how busy the thread was,
   * pass work and wake-ups included (the bench's "worker busy" figure).
   */
  workerUtilization(since?: EventLoopUtilization): EventLoopUtilization | undefined {
    const w = this.worker;
    if (w === undefined) return undefined;
    return since === undefined ? w.performance.eventLoopUtilization() : w.performance.eventLoopUtilization(since);
  }

  /** Test hook: kill the worker thread as a crash would. */
  crashWorkerForTest(): Promise<number> | undefined {
    return this.worker?.terminate();
  }

  /**
   * A channel for a new beta watcher: shared memory, so the worker can write
   * it while it is unsynced. A watcher consumed here gets a pooled slab
   * region; one consumed in another thread (remoteState) buffers of its own.
   */
  sharedChannel(capacity: number, remoteState?: SharedArrayBuffer): SharedWatcherChannel {
    if (remoteState !== undefined || this.closed) return new SharedWatcherChannel(capacity, this.history, remoteState);
    this.recycleQuarantine();
    const slot = this.slabs.allocate(capacity);
    const channel = new SharedWatcherChannel(capacity, this.history, undefined, {
      slot,
      buffer: this.slabs.bufferOf(slot),
    });
    channel.onRoomForWorker = () => this.control.signalRoom(channel.spsc);
    return channel;
  }

  /** Pooled regions in use (tests, memory figures). */
  get pooledChannels(): number {
    return this.slabs.inUse;
  }

  /** Slabs the pool has (each sent to the worker once). */
  get slabCount(): number {
    return this.slabs.buffers.length;
  }

  /**
   * An ended watcher's region goes back to the pool once no thread uses it:
   * at once when this thread owns its writer side (the worker pushes only
   * into channels it owns, and it got no adopt for this one since), else when
   * the worker hands it back (it does on `forget`).
   */
  private releaseRegion(channel: SharedWatcherChannel): void {
    const slot = channel.slot;
    if (slot === undefined || this.releasing.has(channel)) return;
    this.releasing.add(channel); // once: onEnded may be called again for a stopped watcher
    if (channel.spsc.writerOwner === WriterOwner.MAIN) {
      channel.detach();
      this.slabs.release(slot);
    } else this.quarantine.push({ slot, channel });
  }

  private readonly releasing = new WeakSet<SharedWatcherChannel>();

  private recycleQuarantine(): void {
    if (this.quarantine.length === 0) return;
    const still: typeof this.quarantine = [];
    for (const q of this.quarantine) {
      if (q.channel.spsc.writerOwner === WriterOwner.MAIN) {
        q.channel.detach();
        this.slabs.release(q.slot);
      } else still.push(q);
    }
    this.quarantine = still;
  }

  /** The history ring's handle (for consumers in other threads). */
  get ringHandle(): HistoryRing['handle'] {
    return this.ring.handle;
  }

  /** The control block, whose room signal a consumer in another thread raises (watch-port.ts). */
  get roomSignal(): SharedArrayBuffer {
    return this.control.buffer;
  }

  /** A msgpack frame for an object no event has carried yet (one from the initial list). */
  encodeFrame(object: KubeObject): Uint8Array {
    this.metrics.encoded('msgpack');
    return msgpack.pack({ type: 'ADDED', object });
  }

  /**
   * Step 1: mirror an appended history event into the ring, then publish.
   * Payload: the event's wire frame `{type, object}` (its one msgpack
   * encoding, shared with msgpack streams), the selection data, and the
   * frame that carried the previous object (reused bytes, not re-encoded).
   * Returns the event's frame (the object state keeps it for the next event).
   */
  appended(event: WatchCacheEvent, prevFrame: Uint8Array | undefined): Uint8Array | undefined {
    if (this.desynced) return undefined;
    this.syncCapacity();
    const frame = event.deliver(Delivery.AsIs).msgpackFrame(this.metrics);
    const sel: RingSelectionData = { hasPrev: prevFrame !== undefined };
    if (this.indexerFields.length > 0) {
      sel.iv = indexValues(this.indexers, event.object);
      if (event.prevObject !== undefined) sel.piv = indexValues(this.indexers, event.prevObject);
    }
    const selBytes = msgpack.pack(sel);
    const bytes = new Uint8Array(frame.length + selBytes.length + (prevFrame?.length ?? 0));
    bytes.set(frame, 0);
    bytes.set(selBytes, frame.length);
    if (prevFrame !== undefined) bytes.set(prevFrame, frame.length + selBytes.length);
    try {
      const abs = this.ring.append(
        {
          rv: event.rv,
          type: eventTypeCode(event.type),
          nsHash: hash32(event.namespace),
          nameHash: hash32(event.name),
          triggerHash: hashOptional(event.triggerValue === '' ? undefined : event.triggerValue),
          prevTriggerHash: hashOptional(event.prevTriggerValue === '' ? undefined : event.prevTriggerValue),
          hasPrev: prevFrame !== undefined,
        },
        bytes,
      );
      if (abs !== event.index) throw new Error(`ring index ${abs} != history index ${event.index}`);
    } catch (err) {
      // The ring can no longer mirror the history: nobody unsynced can be served. End them honestly.
      this.desynced = true;
      this.onWorkerError?.(`history ring desynchronized: ${(err as Error).message}`);
      for (const w of [...this.unsynced.values()]) this.hooks.expire(w, this.history.oldestServableRV() ?? event.rv);
      return frame;
    }
    this.ring.publish();
    if (this.inProcess !== undefined) {
      const endpoint = this.inProcess;
      this.clock.setTimeout(() => endpoint.published(), 0);
    }
    return frame;
  }

  /**
   * A relist: the ring restarts after listRV. The worker drops every member
   * and hands their channels back itself (it may be mid-pass: the main thread
   * never takes a channel from it). Watchers that stay unsynced at the list
   * RV (`keep`) are adopted again; the cache ends the others.
   */
  reset(listRV: number, keep: readonly Watcher[], end: readonly Watcher[]): void {
    this.flushAdopts();
    this.post({ op: 'reset' });
    for (const w of this.unsynced) w.cursor.raiseTo(w.receivedRV); // what the worker reached
    this.unsynced.clear();
    if (!this.desynced && listRV >= this.ring.lastRV) this.ring.clear(listRV);
    this.publishControl();
    for (const w of keep) this.readopt.add(w);
    for (const w of end) this.expireAfterReset.set(w, listRV + 1);
  }

  /** Watchers to end with a 410 once the worker confirms a reset, with the oldest servable RV. */
  private readonly expireAfterReset = new Map<Watcher, number>();

  /** Watchers to adopt again once the worker confirms a reset (it owns their channels until then). */
  private readonly readopt = new Set<Watcher>();

  // ---- FullChannelPolicy (live path) ----

  onFull(watcher: Watcher, event: WatchCacheEvent): void {
    // Invariant 1 (position): a failed push of X leaves the position at X - 1 at most (never lower);
    // X is in the history and in the ring, so the worker re-offers it.
    watcher.cursor.missed(event.rv);
    this.adopt(watcher, true);
  }

  afterEvent(): boolean {
    return false; // never waits
  }

  onRoom(): void {}

  onEnded(watcher: Watcher): void {
    this.unsynced.remove(watcher);
    if (this.pendingIntros.delete(watcher.id)) this.introduced.delete(watcher.id); // never posted: nothing to forget
    if (this.introduced.delete(watcher.id)) {
      this.flushAdopts(); // keep the order: adopt before forget
      this.post({ op: 'forget', id: watcher.id });
    }
    // Only once it has stopped for good (a drain ends here too, after its last event).
    if (watcher.stopped && watcher.queue instanceof SharedWatcherChannel) this.releaseRegion(watcher.queue);
  }

  afterDispatch(): void {
    this.publishControl();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.post({ op: 'stop' });
    const worker = this.worker;
    this.worker = undefined; // its exit is expected now
    if (worker !== undefined) void worker.terminate();
    this.unsynced.clear();
  }

  /**
   * Hand `watcher` to the sync worker at its position: a stall, or (one resync
   * path) a watch that starts at an old RV.
   */
  adopt(watcher: Watcher, stall = false): void {
    const timed = channels.catchUpMain.hasSubscribers; // timed only while someone listens
    const t0 = timed ? performance.now() : 0;
    this.adoptNow(watcher, stall);
    if (timed) channels.catchUpMain.publish({ cache: this.source, step: 'adopt', durationMs: performance.now() - t0 });
  }

  private adoptNow(watcher: Watcher, stall: boolean): void {
    if (this.closed || !watcher.accepting) return;
    if (this.desynced) {
      this.hooks.expire(watcher, this.history.oldestServableRV() ?? watcher.position + 1);
      return;
    }
    const channel = watcher.queue as SharedWatcherChannel;
    // The cursor is the shared cell: the worker reads the position from it.
    if (stall ? this.unsynced.stall(watcher) : this.unsynced.enter(watcher)) this.hooks.unsynced(watcher); // separate sets: out of the live index
    // Single writer: the main thread stops pushing before the worker may start.
    channel.handToWorker();
    // Normally introduced at registration; after a worker restart, or while its introduction still
    // waits for its turn, the adopt carries it.
    const queued = this.pendingIntros.delete(watcher.id);
    const first = queued || !this.introduced.has(watcher.id);
    this.introduced.add(watcher.id);
    if (first) {
      this.pendingAdopts.push({
        id: watcher.id,
        position: watcher.position,
        capacity: watcher.capacity,
        reachedLive: watcher.reachedLive,
        ...introduction(watcher),
      });
    } else {
      // Already introduced (every watcher of a mass stall): the ADOPT_ROW numbers, no object per watcher.
      this.pendingRows.push(watcher.id, watcher.position, watcher.capacity, watcher.reachedLive ? 1 : 0);
    }
    this.scheduleFlush();
  }

  /**
   * Tell the worker about a new beta watcher (its shared channel, position
   * cell and selection) at registration, batched, so that a stall later is a
   * few numbers: 10,000 watchers stalling at once cost one small message.
   */
  introduce(watcher: Watcher): void {
    if (this.closed || this.introduced.has(watcher.id)) return;
    this.introduced.add(watcher.id);
    this.pendingIntros.set(watcher.id, watcher);
    this.scheduleFlush();
  }

  /** Watchers whose introduction has not been posted yet (in registration order). */
  private pendingIntros = new Map<number, Watcher>();
  private introTimer: TimerHandle | undefined;
  private flushScheduled = false;

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flushAdopts());
  }

  private publishControl(): void {
    let oldest = this.history.oldestServableRV();
    // The worker reads the ring: never claim an RV the ring has already dropped.
    const ringOldest = this.ring.floorRV + 1;
    if (oldest !== undefined && ringOldest > oldest) oldest = ringOldest;
    this.control.publish(this.lastDispatched(), oldest);
  }

  private syncCapacity(): void {
    let want = this.lowerBound;
    while (want < this.history.capacity) want *= 2;
    if (want !== this.ring.capacity && want <= this.ring.maxCapacity) this.ring.setCapacity(want);
  }

  private onWorkerMessage(msg: WorkerToMain): void {
    const timed = channels.catchUpMain.hasSubscribers;
    const t0 = timed ? performance.now() : 0;
    this.handleWorkerMessage(msg);
    if (timed)
      channels.catchUpMain.publish({ cache: this.source, step: 'worker-message', durationMs: performance.now() - t0 });
  }

  private handleWorkerMessage(msg: WorkerToMain): void {
    if (this.closed) return;
    switch (msg.op) {
      case 'pushed':
        this.recycleQuarantine();
        if (channels.pass.hasSubscribers) {
          const b = this.workerStats;
          channels.pass.publish({
            cache: this.source,
            thread: 'worker',
            passes: msg.passes - b.passes,
            durationMs: msg.workMs - b.workMs,
            scanned: msg.scanned - b.scanned,
            pushes: msg.pushes - b.pushes,
            cohorts: 0,
            resynced: 0,
            expired: 0,
          });
        }
        this.workerStats.passes = msg.passes;
        this.workerStats.workMs = msg.workMs;
        this.workerStats.pushes = msg.pushes;
        this.workerStats.scanned = msg.scanned;
        this.workerStats.decodes = msg.decodes;
        this.metrics.deferredEvents.inc(Math.max(0, msg.pushes - this.reportedPushes));
        this.reportedPushes = msg.pushes;
        for (const id of msg.ids) this.unsynced.get(id)?.notify();
        break;
      case 'handback':
        this.handBack(msg.id, msg.position, msg.passPushes);
        break;
      case 'expire': {
        const w = this.unsynced.get(msg.id);
        if (w === undefined) return;
        this.unsynced.remove(w);
        w.cursor.raiseTo(msg.position);
        w.notify();
        this.hooks.expire(w, msg.oldest);
        break;
      }
      case 'reset-done':
        for (const [w, oldest] of this.expireAfterReset) {
          w.cursor.raiseTo(w.receivedRV);
          w.notify();
          this.hooks.expire(w, oldest);
        }
        this.expireAfterReset.clear();
        for (const w of this.readopt) if (w.accepting && w.unsynced) this.adopt(w);
        this.readopt.clear();
        break;
      case 'error':
        this.onWorkerError?.(msg.message);
        break;
    }
  }

  private reportedPushes = 0;
  /** Adopts that carry an introduction (rare: after a worker restart, or before the watcher's turn). */
  private pendingAdopts: AdoptRequest[] = [];
  /** Adopts of introduced watchers, ADOPT_ROW numbers each (id, position, capacity, reachedLive 0/1). */
  private pendingRows: number[] = [];

  /**
   * Post introductions in chunks of INTRO_CHUNK per turn of the event loop:
   * cloning a watcher's shared buffers costs ~14 µs, so 10,000 registrations
   * at once would otherwise hold the main thread for ~140 ms.
   */
  private flushIntroductions(): void {
    if (this.pendingIntros.size === 0 || this.closed) return;
    const watchers: AdoptRequest[] = [];
    for (const [id, w] of this.pendingIntros) {
      this.pendingIntros.delete(id);
      if (w.accepting || w.state === 'pending')
        watchers.push({ id, position: 0, capacity: w.capacity, reachedLive: false, ...introduction(w) });
      if (watchers.length === INTRO_CHUNK) break;
    }
    if (watchers.length > 0) this.post({ op: 'introduce', watchers });
    if (this.pendingIntros.size > 0 && this.introTimer === undefined) {
      this.introTimer = this.clock.setTimeout(() => {
        this.introTimer = undefined;
        this.flushIntroductions();
      }, 0);
    }
  }

  /** Post what is pending, introductions first (an adopt may refer to them). */
  private flushAdopts(): void {
    this.flushScheduled = false;
    this.flushIntroductions();
    // A watcher adopted and then ended before the flush is forgotten right after; the worker drops it.
    if (this.pendingAdopts.length > 0) {
      const first = this.pendingAdopts;
      this.pendingAdopts = [];
      this.post({ op: 'adopt', watchers: first });
    }
    if (this.pendingRows.length > 0) {
      // A mass stall: one Float64Array, cloned as one block.
      const rows = Float64Array.from(this.pendingRows);
      this.pendingRows = [];
      this.post({ op: 'adopt-rows', rows });
    }
  }

  private post(msg: MainToWorker): void {
    if (this.closed && msg.op !== 'stop') return;
    if (this.worker !== undefined) this.worker.postMessage(msg);
    else {
      const endpoint = this.inProcess!;
      this.clock.setTimeout(() => endpoint.handle(msg), 0);
    }
  }

  /** Step 3: deliver the last few events on the main thread, then the watcher is synced. */
  private handBack(id: number, position: number, passPushes: number): void {
    const w = this.unsynced.get(id);
    if (w === undefined) return;
    this.unsynced.remove(w);
    w.cursor.raiseTo(position);
    w.cursor.setPassPushes(passPushes);
    w.notify();
    if (!w.accepting) return;
    if (this.history.isTooOld(w.position)) {
      this.hooks.expire(w, this.history.oldestServableRV() ?? w.position + 1);
      return;
    }
    const h = this.history;
    const last = this.lastDispatched();
    for (let i = h.indexAfter(w.position); i < h.endIndex; i++) {
      const ev = h.at(i);
      if (ev.rv > last) break;
      const r = offer(w, ev);
      if (r === Offer.Full) {
        w.cursor.missed(ev.rv);
        this.adopt(w); // still behind: back to the worker (the same unsynced episode)
        return;
      }
      if (r === Offer.Pushed) {
        w.cursor.pushedByPass();
        this.metrics.deferredEvents.inc();
      }
    }
    // Resync at the last dispatched RV: the live path continues right after it, nothing to skip.
    w.cursor.raiseTo(last);
    this.unsynced.resync(w);
    this.hooks.resynced(w);
  }
}

/**
 * What the worker keeps of a watcher: its channel and position cell (a slab
 * region as two numbers; buffers of its own only for a remote watcher) and
 * its selection.
 */
function introduction(watcher: Watcher): Pick<AdoptRequest, 'channel' | 'selection' | 'cell' | 'slot'> {
  const channel = watcher.queue as SharedWatcherChannel;
  const s = watcher.selection;
  const selection = {
    namespace: s.namespace,
    name: s.name,
    labelSelector: s.labels.toString(),
    fieldSelector: s.fields.toString(),
  };
  if (channel.slot !== undefined) return { slot: { slab: channel.slot.slab, offset: channel.slot.offset }, selection };
  return { channel: channel.spsc.handle, selection, cell: channel.positionCell.buffer as SharedArrayBuffer };
}

function indexValues(indexers: Record<string, IndexerFunc>, object: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, fn] of Object.entries(indexers)) {
    const v = fn(object);
    if (v !== undefined) out[field] = v;
  }
  return out;
}
