/**
 * BetaSync: `beta` mode on the main thread (KEP-6268 "Target design"): the
 * watchers' shared channels, their adoption by the sync worker, and the
 * shared memory the worker reads. The main thread ingests and runs live
 * dispatch over the synced set only.
 * 1. Every event appended to the history is also encoded once with msgpackr
 *    into the SharedArrayBuffer history ring (same absolute index) and
 *    published with Atomics, right after the live dispatch has delivered it
 *    (deferred-mirror.ts: the healthy watchers never wait for the ring); the
 *    control block carries the last dispatched RV and the oldest servable RV
 *    once the ring holds them (`mirrorEvent`, `publishControl`).
 * 2. A failed live push marks the watcher unsynced at X - 1, removes it from
 *    the live index (separate sets), hands its shared channel to the sync
 *    worker and queues its adopt (`adopt`; the policy is the strategy's,
 *    src/modes/beta/beta-strategy.ts). A watch that starts at an old RV is
 *    adopted the same way (one resync path). The messages are the worker
 *    link's (sync-worker-link.ts).
 * 3. The worker serves it off the main thread. When it is within the hand-off
 *    distance of the last dispatched RV, the worker hands it back; the main
 *    thread delivers those last few events and marks it synced (hand-back.ts).
 *    The resync point is the last dispatched RV, so the live path never skips
 *    an event.
 * 4. An expired watcher comes back with its position and the oldest RV; the
 *    main thread drains its backlog and sends the 410 (hand-back.ts).
 * A relist is a round trip with the worker (relist-reset.ts).
 */
import type { EventLoopUtilization } from 'node:perf_hooks';
import type { Clock } from '../core/clock.js';
import type { IndexerFunc, KubeObject } from '../core/types.js';
import type { FrameSource } from '../wire/frame-source.js';
import { DeferredMirror } from './deferred-mirror.js';
import type { EventHistory } from '../history/event-history.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { WriterOwner } from '../protocol/channel-variants.js';
import { UnsyncedSet } from '../sync/unsynced-set.js';
import { channels } from '../observe/channels.js';
import type { PassOptions } from '../sync/pass-options.js';
import type { StallHooks } from '../sync/stall-policy.js';
import type { Watcher } from '../watch/watcher.js';
import { ControlBlock } from './control-block.js';
import { SharedWatcherChannel } from './shared-watcher-channel.js';
import { ChannelSlabs, type SlabSlot } from './channel-slabs.js';
import { expiredByWorker, handBack, type HandBackContext } from './hand-back.js';
import { HandBackSlices } from './hand-back-slices.js';
import { RelistReset } from './relist-reset.js';
import { RingMirror } from './ring-mirror.js';
import { warmUpMessage } from './warm-up-ring.js';
import { StallHandOver } from './stall-hand-over.js';
import type { SyncWorkerEndpoint } from './sync-worker-endpoint.js';
import {
  recoverPosition,
  SyncWorkerLink,
  type BetaWorkerStats,
  type SyncWorkerPlacement,
  type WorkerLinkHandler,
} from './sync-worker-link.js';
import type { WorkerPassHost } from './worker-pass-host.js';

/** Beta's stall hooks: StallPolicy's, and the mass stall's way out of the live index. */
export interface BetaStallHooks extends StallHooks {
  /** `watchers[from..to)` became unsynced at once (beta's mass stall: one call per event, a flat loop inside). */
  unsyncedAll(watchers: readonly (Watcher | undefined)[], from: number, to: number): void;
}

export interface BetaSyncInit {
  clock: Clock;
  placement: SyncWorkerPlacement;
  pass: PassOptions;
  history: EventHistory;
  metrics: CacheMetrics;
  hooks: BetaStallHooks;
  indexers: Record<string, IndexerFunc>;
  triggerField: string | undefined;
  lastDispatchedRV: () => number;
  /**
   * The last dispatched RV without walking a pending live-first batch (src/dispatch/dispatcher.ts): what the
   * control block publishes. Publishing must not walk: the deferred mirror publishes in the middle of a
   * writer's burst, and a walk there ran before the consumers the burst's events were offered to ahead
   * (100,000 stalled: ~0.4 s). Default: lastDispatchedRV.
   */
  walkedRV?: () => number;
  /** For logs. */
  resourceName: string;
  /** The cache (the observer channels' `cache`); default this object. */
  source?: object;
}

export class BetaSync implements HandBackContext {
  /** Watchers the sync worker owns (main thread's view). */
  readonly unsynced: UnsyncedSet<Watcher>;
  readonly history: EventHistory;
  readonly metrics: CacheMetrics;
  readonly hooks: BetaStallHooks;
  private readonly source: object;
  private readonly indexerFields: string[];
  private readonly lastDispatched: () => number;
  private readonly walked: () => number;
  /** Step 1: the history mirrored into the shared ring (src/beta/ring-mirror.ts)... */
  private readonly ringMirror: RingMirror;
  /** ...after each dispatch (deferred-mirror.ts). */
  private readonly deferred: DeferredMirror;
  /** Channels consumed in another thread: while there is one, the ring is written before the dispatch. */
  private readonly remotes = new Set<SharedWatcherChannel>();
  private readonly control = new ControlBlock();
  /** Pooled channels and position cells: the worker gets each slab once, a watcher is then two numbers. */
  private readonly slabs = new ChannelSlabs((id, buffer) => this.link.post({ op: 'slab', id, buffer }));
  /** Regions of ended watchers whose writer side the worker still holds: pooled once it hands them back. */
  private quarantine: { slot: SlabSlot; channel: SharedWatcherChannel }[] = [];
  private readonly link: SyncWorkerLink;
  private readonly relist: RelistReset;
  /** Stalls marked in the dispatch, handed to the worker in chunks (stall-hand-over.ts). */
  private readonly stalls: StallHandOver;
  /** The worker's hand-backs, applied a slice per turn (hand-back-slices.ts). */
  private readonly handBacks: HandBackSlices;
  private readonly clock: Clock;
  private closed = false;
  /** Called when the worker reports an internal error (tests assert it never happens). */
  onWorkerError: ((message: string) => void) | undefined;

  constructor(init: BetaSyncInit) {
    this.history = init.history;
    this.metrics = init.metrics;
    this.hooks = init.hooks;
    this.source = init.source ?? this;
    this.unsynced = new UnsyncedSet(init.metrics, this.source);
    this.indexerFields = Object.keys(init.indexers);
    this.lastDispatched = init.lastDispatchedRV;
    this.walked = init.walkedRV ?? init.lastDispatchedRV;
    this.ringMirror = new RingMirror({
      history: init.history,
      metrics: init.metrics,
      indexers: init.indexers,
      // The ring can no longer mirror the history: nobody unsynced can be served. End them honestly.
      onDesync: (message, event) => {
        this.onWorkerError?.(message);
        for (const w of [...this.unsynced.values()]) this.hooks.expire(w, this.history.oldestServableRV() ?? event.rv);
      },
      onPublished: () => {
        const endpoint = this.inProcess;
        if (endpoint !== undefined) this.clock.setTimeout(() => endpoint.published(), 0);
      },
      // A worker thread commits the arena ahead of the writer; in-process it would fault on this thread anyway.
      prefaultArena: init.placement === 'thread' ? (upTo) => this.link.post({ op: 'prefault', upTo }) : undefined,
    });
    this.deferred = new DeferredMirror({
      clock: init.clock,
      ring: this.ringMirror,
      source: this.source,
      flushed: () => this.publishControlNow(),
    });
    this.clock = init.clock;
    this.handBacks = new HandBackSlices(init.clock, {
      notify: (id) => this.unsynced.get(id)?.notify(),
      apply: (id, position, passPushes) => handBack(this, id, position, passPushes),
      // The worker's messages as the main thread handles them: a slice reports as one (the bench's catch-up share).
      sliced: (_count, durationMs) => {
        if (channels.catchUpMain.hasSubscribers)
          channels.catchUpMain.publish({ cache: this.source, step: 'worker-message', durationMs });
      },
    });
    const handler: WorkerLinkHandler = {
      pushedInto: (ids) => {
        this.recycleQuarantine();
        for (const id of ids) this.unsynced.get(id)?.notify();
      },
      workerHasMembers: () => this.unsynced.size > 0,
      handBack: (id, position, passPushes) => this.handBacks.add(id, position, passPushes),
      expired: (id, position, oldest) => expiredByWorker(this, id, position, oldest),
      resetDone: () => this.relist.done(),
      restarted: () => this.workerRestarted(),
      // In message order: the hand-backs the worker sent before its error (or death) are applied first.
      error: (message) => {
        this.handBacks.complete();
        this.onWorkerError?.(message);
      },
    };
    this.link = new SyncWorkerLink({
      clock: init.clock,
      placement: init.placement,
      metrics: init.metrics,
      resourceName: init.resourceName,
      source: this.source,
      hello: () => [
        {
          op: 'init',
          ring: this.ringMirror.handle,
          control: this.control.buffer,
          pass: init.pass,
          indexerFields: this.indexerFields,
          triggerField: init.triggerField,
        },
        // A restarted worker gets every slab again (once each, never per watcher).
        ...this.slabs.buffers.map((buffer, id) => ({ op: 'slab' as const, id, buffer })),
        // A worker thread rehearses catch-up on a ring of its own until real work arrives (worker-warm-up.ts).
        // Not in-process: there the JIT is the main thread's, and a rehearsal would disturb a seeded run.
        ...(init.placement === 'thread' ? [warmUpMessage(init.indexers, init.triggerField)] : []),
      ],
      handler,
    });
    this.relist = new RelistReset(this.link, this.unsynced, this.hooks, (w) => this.adopt(w));
    const hooks = this.hooks;
    const leaveLive = (ws: readonly (Watcher | undefined)[], from: number, to: number): void =>
      hooks.unsyncedAll(ws, from, to);
    this.stalls = new StallHandOver(init.clock, {
      // Separate sets: out of the live index at once (in the mark's call, one flat loop), so no later event
      // visits the stalled watchers while they wait for their slice (10,000 skips per event kept the main
      // thread from the slices).
      mark: (full, count, rv, into) => this.unsynced.markStalled(full, count, rv, into, leaveLive),
      handOver: (w) => this.handOverStalled(w),
      drop: (w) => this.unsynced.remove(w), // a no-op when watcherEnded removed it already
      // One observation per slice, not per watcher (a slice is up to HAND_OVER_CHUNK of them).
      sliced: (count, durationMs) => {
        if (count > 0 && channels.catchUpMain.hasSubscribers)
          channels.catchUpMain.publish({ cache: this.source, step: 'adopt', durationMs });
      },
    });
  }

  /**
   * A new worker replaced a dead one: the dead one writes nothing any more,
   * so the regions it held are free; every unsynced watcher is handed to the
   * new one at its true position.
   */
  private workerRestarted(): void {
    this.handBacks.complete(); // a no-op after the error that reported the death (the re-adopts below count on it)
    for (const q of this.quarantine) this.slabs.release(q.slot);
    this.quarantine = [];
    for (const w of [...this.unsynced.values()]) {
      recoverPosition(w, this.history);
      this.adopt(w);
      // The dead worker's last "pushed" notice may be lost: wake every consumer it may have fed.
      w.notify();
    }
  }

  lastDispatchedRV(): number {
    return this.lastDispatched();
  }

  /** Worker-side accounting the main thread receives once per pass. */
  get workerStats(): BetaWorkerStats {
    return this.link.stats;
  }

  /** The in-process sync worker's pass host (placement 'in-process': the simulator models its cost). */
  get inProcessHost(): WorkerPassHost | undefined {
    return this.link.inProcessHost;
  }

  /** The in-process endpoint, told of every publish (undefined: a worker thread, woken by Atomics). */
  private get inProcess(): SyncWorkerEndpoint | undefined {
    return this.link.inProcessEndpoint;
  }

  /** The sync worker thread's event-loop utilization since `since` (SyncWorkerLink.utilization). */
  workerUtilization(since?: EventLoopUtilization): EventLoopUtilization | undefined {
    return this.link.utilization(since);
  }

  /** Test hook: kill the worker thread as a crash would. */
  crashWorkerForTest(): Promise<number> | undefined {
    return this.link.crashForTest();
  }

  /**
   * A channel for a new beta watcher: shared memory, so the worker can write
   * it while it is unsynced. A watcher consumed here gets a pooled slab
   * region; one consumed in another thread (remoteState) buffers of its own.
   */
  sharedChannel(capacity: number, remoteState?: SharedArrayBuffer): SharedWatcherChannel {
    if (remoteState !== undefined) {
      // Its consumer reads every pushed reference from the ring: from now on the ring is written first.
      this.deferred.flush();
      const channel = new SharedWatcherChannel(capacity, this.history, remoteState);
      if (!this.closed) this.remotes.add(channel);
      return channel;
    }
    if (this.closed) return new SharedWatcherChannel(capacity, this.history);
    this.recycleQuarantine();
    const slot = this.slabs.allocate(capacity);
    const channel = new SharedWatcherChannel(capacity, this.history, undefined, {
      slot,
      buffer: this.slabs.bufferOf(slot),
    });
    channel.onRoomForWorker = (free) => this.control.signalRoom(free, capacity);
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
    if (channel.writerOwner === WriterOwner.MAIN) {
      channel.detach();
      this.slabs.release(slot);
    } else this.quarantine.push({ slot, channel });
  }

  private readonly releasing = new WeakSet<SharedWatcherChannel>();

  private recycleQuarantine(): void {
    if (this.quarantine.length === 0) return;
    const still: typeof this.quarantine = [];
    for (const q of this.quarantine) {
      if (q.channel.writerOwner === WriterOwner.MAIN) {
        q.channel.detach();
        this.slabs.release(q.slot);
      } else still.push(q);
    }
    this.quarantine = still;
  }

  /** The history ring's handle (for consumers in other threads). */
  get ringHandle(): RingMirror['handle'] {
    return this.ringMirror.handle;
  }

  /** The control block, whose room signal a consumer in another thread raises (watch-port.ts). */
  get roomSignal(): SharedArrayBuffer {
    return this.control.buffer;
  }

  /**
   * Step 1: mirror an appended history event into the ring
   * (src/beta/ring-mirror.ts) after its dispatch, or before it while a
   * consumer in another thread reads the ring. `prevFrame` yields the frame
   * that carried the previous object. Returns the event's frame, or the
   * frame the deferred mirror will make, for the object state to keep.
   */
  mirrorEvent(
    event: WatchCacheEvent,
    prevFrame: ((encode: (o: KubeObject) => FrameSource) => FrameSource | undefined) | undefined,
  ): FrameSource | undefined {
    const d = this.deferred;
    const prev = prevFrame?.(d.listedFrame);
    return this.remotes.size > 0 ? d.now(event, prev) : d.later(event, prev);
  }

  /**
   * A relist: the ring restarts after listRV. The worker drops every member
   * and hands their channels back itself (relist-reset.ts). Watchers that
   * stay unsynced at the list RV (`keep`) are adopted again; the cache ends
   * the others.
   */
  reset(listRV: number, keep: readonly Watcher[], end: readonly Watcher[]): void {
    this.deferred.flush(); // the ring holds every event of the old history before it restarts (same indices)
    // Every watcher the cache counts as unsynced (the cursor flag) must be the worker's before it drops them:
    // the hand-backs it sent are applied (a watcher still behind goes back to it), the stalls handed over.
    this.handBacks.complete();
    this.stalls.complete();
    this.relist.begin(listRV, keep, end);
    this.ringMirror.restartAfter(listRV);
    this.publishControl();
  }

  /** `watcher` ended: out of the unsynced set, forgotten by the worker, its region pooled once nobody writes it. */
  watcherEnded(watcher: Watcher): void {
    this.unsynced.remove(watcher);
    this.link.forget(watcher);
    if (watcher.stopped && watcher.queue instanceof SharedWatcherChannel) this.remotes.delete(watcher.queue);
    // Only once it has stopped for good (a drain ends here too, after its last event).
    if (watcher.stopped && watcher.queue instanceof SharedWatcherChannel) this.releaseRegion(watcher.queue);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.deferred.drop();
    this.remotes.clear();
    this.stalls.close();
    this.handBacks.close();
    this.link.close();
    this.unsynced.clear();
  }

  /**
   * The live path found the channels of `full[0..count)` full at `rv` (X):
   * mark them unsynced at X - 1 now, hand them to the worker in later turns
   * (stall-hand-over.ts, step 1).
   */
  stall(full: readonly (Watcher | undefined)[], count: number, rv: number): void {
    this.stalls.stalled(full, count, rv);
  }

  /** Hand-backs the worker sent that wait for their slice (tests). */
  get handBacksPending(): number {
    return this.handBacks.pending;
  }

  /** Stalled watchers marked and not yet handed to the worker (tests). */
  get stallsPending(): number {
    return this.stalls.pending;
  }

  /**
   * Hand `watcher` to the sync worker at its position now: (one resync path)
   * a watch that starts at an old RV, a hand-back still behind, a re-adopt
   * after a restart or a relist.
   */
  adopt(watcher: Watcher): void {
    const timed = channels.catchUpMain.hasSubscribers; // timed only while someone listens
    const t0 = timed ? performance.now() : 0;
    this.adoptNow(watcher);
    if (timed) channels.catchUpMain.publish({ cache: this.source, step: 'adopt', durationMs: performance.now() - t0 });
  }

  /** Stall hand-over, step 2, for one marked watcher that still accepts. */
  private handOverStalled(watcher: Watcher): void {
    // Timed per slice by the hand-over (`sliced`), not per watcher.
    if (this.deferred.pending > 0) this.deferred.flush(); // the worker finds X in the ring (invariant 1 below)
    if (this.ringMirror.desynced) {
      this.unsynced.remove(watcher);
      this.hooks.expire(watcher, this.history.oldestServableRV() ?? watcher.position + 1);
    } else if (this.unsynced.join(watcher)) {
      // Invariant 1 (position): nothing moved it since the mark (no push while flagged, and out of the
      // live index since the mark), so the worker starts at X - 1 and re-offers X from the ring
      // (appended before it was dispatched).
      // Single writer: the main thread has not pushed since the mark; the worker may start only after this
      // hand-off, and it hears of the watcher only through the adopt queued below it.
      (watcher.queue as SharedWatcherChannel).handToWorker();
      this.link.adopt(watcher);
    }
  }

  /** A new beta watcher: the worker learns its channel, cell and selection now (batched), so a stall is a few numbers. */
  introduce(watcher: Watcher): void {
    this.link.introduce(watcher);
  }

  /** HandBackContext: a watcher still behind after its hand-back goes back to the worker. */
  readopt(watcher: Watcher): void {
    this.adopt(watcher);
  }

  private adoptNow(watcher: Watcher): void {
    if (this.closed || !watcher.accepting) return;
    if (this.deferred.pending > 0) this.deferred.flush(); // the worker reads from its position on, in the ring
    if (this.ringMirror.desynced) {
      this.hooks.expire(watcher, this.history.oldestServableRV() ?? watcher.position + 1);
      return;
    }
    const channel = watcher.queue as SharedWatcherChannel;
    // The cursor is the shared cell: the worker reads the position from it.
    if (this.unsynced.enter(watcher)) this.hooks.unsynced(watcher); // separate sets: out of the live index
    // Single writer: the main thread stops pushing before the worker may start.
    channel.handToWorker();
    this.link.adopt(watcher);
  }

  /**
   * After every dispatch: publish the last dispatched RV and the oldest
   * servable RV to the worker, once the ring holds every event up to it (now,
   * or after the deferred mirror's flush).
   */
  publishControl(): void {
    if (this.deferred.pending > 0) this.deferred.schedule();
    else this.publishControlNow();
  }

  private publishControlNow(): void {
    let oldest = this.history.oldestServableRV();
    // The worker reads the ring: never claim an RV the ring has already dropped.
    const ringOldest = this.ringMirror.floorRV + 1;
    if (oldest !== undefined && ringOldest > oldest) oldest = ringOldest;
    // The RV walked so far: the worker hands back against it, and the hand-back itself delivers up to the
    // settled last dispatched RV (hand-back.ts), so a pending batch is never skipped.
    this.control.publish(this.walked(), oldest);
  }
}
