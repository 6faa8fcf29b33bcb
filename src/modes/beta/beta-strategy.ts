/**
 * `beta` mode's strategy: its catch-up policy. Passes run in a sync worker
 * thread reading the shared history ring (the machinery is BetaSync,
 * src/beta/). A full channel hands the watcher to the worker and takes it
 * out of the live index (separate sets); the live path never waits; the
 * resync point is the last dispatched RV; a watch from an old RV is adopted
 * the same way (one resync path); a watcher's cursor is its shared cell, so
 * its position is what the worker wrote.
 */
import { BadRequestError } from '../../core/errors.js';
import type { KubeObject } from '../../core/types.js';
import type { WatchCacheEvent } from '../../history/watch-cache-event.js';
import { BetaSync } from '../../beta/beta-sync.js';
import type { Watcher } from '../../watch/watcher.js';
import type { CatchUpStrategy, StrategyContext, WatcherChannelSpec, WatcherPlacement } from '../catch-up-strategy.js';
import { expireAtRelist, expireOvertaken } from '../catch-up-endings.js';
import { realClock } from '../../core/clock.js';
import type { FrameSource } from '../../wire/frame-source.js';

export class BetaStrategy extends BetaSync implements CatchUpStrategy, WatcherPlacement {
  /** Beta places its watchers itself: shared channels and cells, the ring mirror, adoption. */
  readonly watchers: WatcherPlacement = this;
  /** A full channel never makes the live path wait: it may offer to waiting consumers first. */
  readonly liveFirst = true;
  private readonly ctx: StrategyContext;

  constructor(ctx: StrategyContext) {
    const placement = ctx.options.syncWorker ?? (ctx.clock === realClock ? 'thread' : 'in-process');
    if (placement !== 'thread' && placement !== 'in-process')
      throw new BadRequestError(`syncWorker must be thread or in-process, got ${String(placement)}`);
    super({
      clock: ctx.clock,
      placement,
      pass: ctx.pass,
      history: ctx.history,
      metrics: ctx.metrics,
      hooks: {
        expire: (w, oldest) => ctx.expiry.afterBacklog(w, w.position, oldest - 1),
        // Separate sets: live dispatch never walks an unsynced watcher.
        unsynced: (w) => ctx.index.remove(w),
        unsyncedAll: (ws, from, to) => ctx.index.removeAll(ws, from, to),
        resynced: (w) => w.accepting && ctx.index.add(w),
        resyncPoint: () => ctx.lastDispatchedRV(), // beta resyncs at the last dispatched RV
      },
      indexers: ctx.indexers,
      triggerField: ctx.triggerField,
      lastDispatchedRV: () => ctx.lastDispatchedRV(),
      walkedRV: () => ctx.walkedRV(),
      resourceName: ctx.resourceName,
      source: ctx.source,
    });
    this.ctx = ctx;
  }

  // ---- FullChannelPolicy (live path) ----

  onFull(full: readonly (Watcher | undefined)[], count: number, event: WatchCacheEvent): void {
    // Marked unsynced now (position X - 1: invariant 1, in StallHandOver.stalled), handed to the worker in
    // later turns: a mass stall is no pause.
    this.stall(full, count, event.rv);
  }
  afterEvent(): boolean {
    return false; // never waits
  }
  onRoom(): void {}
  onEnded(watcher: Watcher): void {
    this.watcherEnded(watcher);
  }
  afterDispatch(): void {
    this.publishControl();
  }

  // ---- WatcherPlacement ----

  /**
   * How far a watcher the worker serves has really got: its cursor is the
   * shared cell the worker writes, and the consumer may already have taken
   * an event the worker pushed just before it recorded it.
   */
  positionOf(w: Watcher): number {
    return Math.max(w.position, w.receivedRV);
  }
  channelFor(capacity: number, remoteState: SharedArrayBuffer | undefined): WatcherChannelSpec {
    const channel = this.sharedChannel(capacity, remoteState);
    return { channel, cell: channel.positionCell };
  }
  registered(w: Watcher): void {
    this.introduce(w);
  }
  mirror(
    event: WatchCacheEvent,
    prevFrame: ((encode: (o: KubeObject) => FrameSource) => FrameSource | undefined) | undefined,
  ): FrameSource | undefined {
    // Encoded once, after the dispatch (src/beta/deferred-mirror.ts); the previous object travels as the
    // frame that carried it before (no second encoding).
    return this.mirrorEvent(event, prevFrame);
  }
  startBehind(w: Watcher, rv: number): void {
    // One resync path: a watch from an old RV is an unsynced watcher at that position.
    w.activate(rv, undefined);
    this.adopt(w);
    this.ctx.bookmarks.schedule(w);
  }
  relistStarting(listRV: number, survivors: readonly Watcher[], ended: readonly Watcher[]): ReadonlySet<Watcher> {
    // The sync worker may be mid-pass on its watchers; it hands them back first, then the ones that
    // cannot continue get their 410 (at the position the worker had reached).
    const workerOwned = ended.filter((w) => w.unsynced);
    this.reset(
      listRV,
      survivors.filter((w) => w.unsynced),
      workerOwned,
    );
    return new Set(workerOwned);
  }
  endAtRelist(w: Watcher, listRV: number): void {
    expireAtRelist(this.ctx, w, listRV, this.positionOf(w));
  }
  initialOvertaken(w: Watcher): void {
    expireOvertaken(this.ctx, w);
  }
}
