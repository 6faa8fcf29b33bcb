/**
 * CatchUpStrategy: everything that differs between the modes, behind one
 * seam. WatchCache picks one at construction (src/modes/strategies.ts) and
 * never branches on the mode afterwards. A strategy owns:
 *  - what a full channel does on the live path (FullChannelPolicy);
 *  - where passes run, the resync point and the separate sets (inside it);
 *  - the channel a new watcher gets, and its introduction to a worker;
 *  - the mirror of every appended event (beta's shared ring);
 *  - how a watch from an RV inside the history starts;
 *  - a watcher's true position, and the relist rule for the ones that cannot continue;
 *  - what an initial replay overtaken by the history gets.
 * To add a mode: write a folder here with one class implementing this, and
 * register its factory in strategies.ts.
 */
import type { Clock } from '../core/clock.js';
import type { IndexerFunc, KubeObject } from '../core/types.js';
import type { BookmarkScheduler } from '../dispatch/bookmark-scheduler.js';
import type { FullChannelPolicy } from '../dispatch/full-channel-policy.js';
import type { WatcherIndex } from '../dispatch/watcher-index.js';
import type { EventHistory } from '../history/event-history.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { HistoryRingHandle } from '../ring/ring-layout.js';
import type { PassOptions } from '../sync/pass-options.js';
import type { InitialSource } from '../watch/initial-source.js';
import type { WatcherChannel } from '../watch/watcher-channel.js';
import type { Watcher } from '../watch/watcher.js';
import type { FaultPoints } from '../watch/fault-points.js';
import type { FrameSource } from '../wire/frame-source.js';
import type { WatchCacheOptions } from '../cache/cache-options.js';
import type { Expiry } from '../cache/expiry.js';

/** What the cache lends a strategy. */
export interface StrategyContext {
  readonly clock: Clock;
  readonly history: EventHistory;
  readonly metrics: CacheMetrics;
  /** The live path's index: a strategy with separate sets takes unsynced watchers out of it. */
  readonly index: WatcherIndex;
  readonly bookmarks: BookmarkScheduler;
  readonly expiry: Expiry;
  readonly options: WatchCacheOptions;
  readonly pass: PassOptions;
  readonly indexers: Record<string, IndexerFunc>;
  readonly triggerField: string | undefined;
  readonly resourceName: string;
  /** The cache itself, as the observer channels name it. */
  readonly source: object;
  /** Test-only fault points (engine-internal option; the harness): a strategy hands them to its main-thread passes. */
  readonly faults: FaultPoints | undefined;
  /** The live path's last dispatched RV, once it has walked any live-first batch (Dispatcher.settle). */
  lastDispatchedRV(): number;
  /** The same without walking a pending batch: the RV every synced watcher has been offered up to now. */
  walkedRV(): number;
  /** The last RV the cache applied. */
  cacheRV(): number;
  /** Activate `w` at `position` with its initial events and put it on the live path. */
  register(w: Watcher, position: number, initial: InitialSource | undefined): void;
}

/** A new watcher's channel and the cell its cursor lives in (beta: shared with the worker). */
export interface WatcherChannelSpec {
  channel: WatcherChannel;
  cell?: Float64Array;
}

/**
 * Where a mode's watchers live and how they start: in-process queues (off,
 * alpha: src/modes/in-process-watchers.ts) or shared memory the sync worker
 * also writes (beta).
 */
export interface WatcherPlacement {
  /** The channel for a new watcher; undefined: the default in-process queue. */
  channelFor(capacity: number, remoteState: SharedArrayBuffer | undefined): WatcherChannelSpec | undefined;
  /** A watcher was created (beta: introduced to the sync worker, batched). */
  registered(w: Watcher): void;
  /**
   * An event was appended to the history (before it is applied and dispatched).
   * `prevFrame` yields the frame that carried the previous object (made by
   * `encode` for an object no event carried). Returns the event's frame, or
   * the frame to be made (beta mirrors after the dispatch), for the object
   * state to keep; undefined outside beta.
   */
  mirror(
    event: WatchCacheEvent,
    prevFrame: ((encode: (o: KubeObject) => FrameSource) => FrameSource | undefined) | undefined,
  ): FrameSource | undefined;
  /** A watch from `rv`, inside the history and behind the cache: how it starts. */
  startBehind(w: Watcher, rv: number): void;
  /** How far `w` has really got (beta: including what the worker advanced). */
  positionOf(w: Watcher): number;
  /**
   * A relist begins. `survivors` continue, `ended` cannot; returns the ended
   * watchers the mode ends itself later (beta: the worker's own).
   */
  relistStarting(listRV: number, survivors: readonly Watcher[], ended: readonly Watcher[]): ReadonlySet<Watcher>;
  /** The shared history ring, for watches consumed in another thread (beta only). */
  readonly ringHandle: HistoryRingHandle | undefined;
  /** The sync worker's room signal (a ControlBlock), for consumers in other threads (beta only). */
  readonly roomSignal: SharedArrayBuffer | undefined;
}

export interface CatchUpStrategy extends FullChannelPolicy {
  readonly watchers: WatcherPlacement;
  /** End a watcher that cannot continue after the relist to `listRV`. */
  endAtRelist(w: Watcher, listRV: number): void;
  /** `w`'s initial replay was overtaken by the history. */
  initialOvertaken(w: Watcher): void;
}
