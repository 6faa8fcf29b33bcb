/**
 * Watcher: one watch. It is the async iterator its consumer reads and the
 * target the dispatcher (live path) and the sync pass push into.
 *
 * The KEP "Per-watcher state" is its `cursor` (src/sync/sync-cursor.ts),
 * moved by the dispatcher side through the cursor's methods; the consumer
 * side writes `reachedLive` (first receive from the channel), `receivedRV`
 * and the cursor's drained flag (channel emptied). The cursor is the watcher
 * itself (it extends SyncCursor): the live path reads one object per
 * watcher, the cursor's fields first (issue 13).
 *
 * Lifecycle: pending (waiting for a consistent start) -> active ->
 * draining (graceful: backlog, then at most one terminal event) -> stopped.
 * A hard stop (client stop, timeout, cache stop, relist, force-close) empties
 * the channel and ends the iterator at once; a stopped watcher is never
 * reopened into drain mode (the KEP's hard-stop fix is enforced in `drain`).
 */
import type { Selection } from '../selection/selection.js';
import type { WatchEvent } from '../wire/watch-event.js';
import { EventQueue } from './event-queue.js';
import { OVERWRITTEN, type WatcherChannel } from './watcher-channel.js';
import type { InitialSource } from './initial-source.js';
import { SyncCursor } from '../sync/sync-cursor.js';
import type { Watch } from './watch.js';
import type { FaultPoints } from './fault-points.js';

export type EndReason =
  | 'client' // stop(), AbortSignal, leaving a for-await loop
  | 'timeout' // timeoutSeconds
  | 'cache-stopped'
  | 'relist' // the cache re-listed its store
  | 'unresponsive' // off mode force-close
  | 'expired' // alpha/beta: position aged out of the history (410 after backlog)
  | 'error'; // a start that failed (410 / 504 ERROR event)

export type WatcherPhase = 'pending' | 'active' | 'draining' | 'stopped';

/**
 * The phase as a small integer: the live path tests "active" for every watcher and event, and a Smi
 * compare is one instruction where a string compare first checks that the field holds an internalized string.
 */
const enum Phase {
  Pending = 0,
  Active = 1,
  Draining = 2,
  Stopped = 3,
}
const PHASE_NAMES: readonly WatcherPhase[] = ['pending', 'active', 'draining', 'stopped'];

/** What the owner (the cache) is told about a watcher. */
export interface WatcherOwner {
  /** The watcher ended (hard stop, or the end of a drain). Called once. */
  watcherEnded(watcher: Watcher, reason: EndReason): void;
  /** The consumer took an event out of a full channel: it has room again. */
  watcherHasRoom(watcher: Watcher): void;
  /** The initial replay was overtaken by the history. */
  initialOvertaken(watcher: Watcher): void;
  /** The channel referenced an event the history no longer holds (beta): the watcher must get its 410. */
  channelOverwritten(watcher: Watcher): void;
  /** Its consumer waits in next() with nothing to take (the live-first dispatch lists it); optional. */
  watcherParked?(watcher: Watcher): void;
}

/** A bucket of the dispatch index, as a watcher records where it is indexed. */
export interface IndexBucket {
  readonly watchers: Watcher[];
  /** Take `watcher` (in this bucket) out of it (WatcherBucket.take). */
  take(watcher: Watcher): void;
}

const DONE: IteratorResult<WatchEvent> = Object.freeze({ done: true, value: undefined });

export interface WatcherInit {
  id: number;
  selection: Selection;
  capacity: number;
  allowBookmarks: boolean;
  owner: WatcherOwner;
  /** The channel (default: an EventQueue of `capacity`). */
  channel?: WatcherChannel;
  /** The cursor's cell (beta: shared with the sync worker); default a private one. */
  cell?: Float64Array;
  /** Test-only fault points of its cache (the harness); absent everywhere else. */
  faults?: FaultPoints;
}

export class Watcher extends SyncCursor implements AsyncIterableIterator<WatchEvent> {
  // Field order is layout: after the cursor's own fields (the base class's: flags and position), what the
  // live path reads of every watcher for every event (Dispatcher.offer, offer(), push) comes first (issue 13).
  private phase: Phase = Phase.Pending;
  readonly selection: Selection;
  readonly queue: WatcherChannel;
  /** Test-only fault points (src/watch/fault-points.ts) offer() and bookmarks apply; undefined outside the harness. */
  readonly faults: FaultPoints | undefined;
  private waiter: ((result: IteratorResult<WatchEvent>) => void) | undefined;
  readonly id: number;
  readonly allowBookmarks: boolean;
  private readonly owner: WatcherOwner;
  /** Index slot used by the dispatch index (-1 when not indexed). */
  indexSlot = -1;
  /** The dispatch index's bucket holding it (undefined when not indexed; src/dispatch/watcher-index.ts). */
  indexBucket: IndexBucket | undefined = undefined;
  /** Next bookmark due time (clock ms), Infinity when none is scheduled. */
  nextBookmarkAt = Infinity;
  /** Request deadline (clock ms) for timeoutSeconds, Infinity when none. */
  deadline = Infinity;
  /** Set when a pass could not finish offering it events (owed); cleared when served. */
  owed = 0;

  // ---- consumer-side state ----
  /** In the dispatcher's ParkedWatchers list (src/dispatch/parked-watchers.ts). */
  parkedListed = false;
  /** The live-first batch in which the dispatcher offered it events ahead of the walk (0: none). */
  liveBatch = 0;

  /** Set on the first receive from the channel (the live loop). */
  reachedLive = false;
  /** RV of the last event the consumer took from the channel (0 before any). */
  receivedRV = 0;

  private discardChannel = false;
  private initial: InitialSource | undefined;
  /** The last event of a drain; a function builds it when reached (a 410 names what the client then has). */
  private terminal: WatchEvent | ((receivedRV: number) => WatchEvent) | undefined;
  private endReason: EndReason | undefined;

  constructor(init: WatcherInit) {
    super(init.cell, true); // the main thread's cursor: it keeps the position while synced
    this.id = init.id;
    this.selection = init.selection;
    this.queue = init.channel ?? new EventQueue(init.capacity);
    this.allowBookmarks = init.allowBookmarks;
    this.owner = init.owner;
    this.faults = init.faults;
  }

  /** KEP per-watcher state (position, start position, unsynced flags), moved only through its methods: itself. */
  get cursor(): SyncCursor {
    return this;
  }

  get state(): WatcherPhase {
    return PHASE_NAMES[this.phase]!;
  }
  /** Why it ended (undefined while running). */
  get reason(): EndReason | undefined {
    return this.endReason;
  }
  get stopped(): boolean {
    return this.phase === Phase.Stopped;
  }
  /** Accepting live or pass events (active, not draining or stopped). */
  get accepting(): boolean {
    return this.phase === Phase.Active;
  }
  /** Its consumer waits in next() for an event (nothing to take). */
  get waiting(): boolean {
    return this.waiter !== undefined;
  }
  get capacity(): number {
    return this.queue.capacity;
  }
  /** Free slots in the channel. */
  get free(): number {
    return this.queue.free;
  }
  /** Still replaying its initial events. */
  get replaying(): boolean {
    return this.initial !== undefined;
  }
  /** Still replaying initial events from the history (which a relist invalidates). */
  get replayingHistory(): boolean {
    return this.initial !== undefined && this.initial.readsHistory;
  }

  /** Become active: optional initial events first, then the channel. */
  activate(position: number, initial: InitialSource | undefined): void {
    if (this.phase !== Phase.Pending) return;
    this.cursor.startAt(position);
    this.initial = initial;
    this.phase = Phase.Active;
    this.wake();
  }

  /** Non-blocking add to the channel; false when full. Wakes a waiting consumer. */
  push(event: WatchEvent): boolean {
    if (!this.queue.push(event)) return false;
    if (this.waiter !== undefined) this.wake();
    return true;
  }

  /**
   * Graceful end: the backlog is delivered, then `terminal` (if any), then the
   * iterator ends. Ignored unless active or pending: a hard stop can never be
   * reopened into drain mode by a later graceful stop (KEP hard-stop fix).
   */
  drain(reason: EndReason, terminal?: WatchEvent | ((receivedRV: number) => WatchEvent)): void {
    if (this.phase !== Phase.Active && this.phase !== Phase.Pending) return;
    this.phase = Phase.Draining;
    this.endReason = reason;
    this.terminal = terminal;
    this.wake();
  }

  /**
   * End with `terminal` as the only remaining event: the backlog is dropped
   * first (used when the backlog would follow a gap, e.g. an initial replay
   * overtaken by the history). Ignored once stopped.
   */
  abort(reason: EndReason, terminal: WatchEvent): void {
    if (this.phase === Phase.Stopped) return;
    this.queue.clear();
    this.queue.cancel?.(); // another writer thread stops feeding it
    this.discardChannel = true; // nothing pushed after this point is delivered
    this.initial = undefined;
    this.phase = Phase.Draining;
    this.endReason = reason;
    this.terminal = terminal;
    this.wake();
  }

  /** Hard stop: the backlog is dropped and the iterator ends now. Idempotent. */
  stop(reason: EndReason = 'client'): void {
    if (this.phase === Phase.Stopped) return;
    const wasDraining = this.phase === Phase.Draining;
    this.phase = Phase.Stopped;
    if (!wasDraining || this.endReason === undefined) this.endReason = reason;
    this.queue.clear();
    this.queue.cancel?.();
    this.initial = undefined;
    this.terminal = undefined;
    const w = this.waiter;
    this.waiter = undefined;
    if (w !== undefined) w(DONE);
    this.owner.watcherEnded(this, this.endReason);
  }

  next(): Promise<IteratorResult<WatchEvent>> {
    const r = this.poll();
    if (r !== undefined) return Promise.resolve(r);
    if (this.waiter !== undefined)
      return Promise.reject(new Error('watch: next() called again before the previous call resolved'));
    const waiting = new Promise<IteratorResult<WatchEvent>>((resolve) => {
      this.waiter = resolve;
    });
    if (!this.parkedListed) this.owner.watcherParked?.(this);
    // Another thread feeding the channel (beta's sync worker) tells only consumers that wait.
    if (this.queue.consumerWaits?.() === true) this.wake(); // the data came meanwhile
    return waiting;
  }

  /** Leaving a for-await loop (or calling return) stops the watch cleanly. */
  return(): Promise<IteratorResult<WatchEvent>> {
    this.stop('client');
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Take the next event without waiting; undefined when nothing is ready yet. */
  private poll(): IteratorResult<WatchEvent> | undefined {
    if (this.phase === Phase.Stopped || this.phase === Phase.Pending)
      return this.phase === Phase.Stopped ? DONE : undefined;
    if (this.initial !== undefined) {
      let ev: WatchEvent | undefined;
      try {
        ev = this.initial.next();
      } catch {
        this.initial = undefined;
        this.owner.initialOvertaken(this);
        return this.poll();
      }
      if (ev !== undefined) {
        if (this.initial.readsHistory) this.receivedRV = ev.rv; // history replays come in RV order
        return { done: false, value: ev };
      }
      this.initial = undefined;
      // After its initial events the client stands at the start position.
      if (this.startPosition > this.receivedRV) this.receivedRV = this.startPosition;
    }
    const ev = this.discardChannel ? undefined : this.queue.shift();
    if (ev === OVERWRITTEN) {
      this.owner.channelOverwritten(this);
      return this.poll();
    }
    if (ev !== undefined) {
      this.reachedLive = true;
      this.receivedRV = ev.rv;
      // What the shift saw (no size reads of its own: a shared channel would pay Atomics for each).
      if (this.queue.leftAfterShift === 0) this.cursor.drained(); // candidate order key 2 (also seen by beta's worker)
      if (this.queue.shiftedFromFull)
        queueMicrotask(() => this.phase === Phase.Active && this.owner.watcherHasRoom(this));
      return { done: false, value: ev };
    }
    if (this.phase === Phase.Draining) {
      const t = this.terminal;
      this.terminal = undefined;
      if (t !== undefined) return { done: false, value: typeof t === 'function' ? t(this.receivedRV) : t };
      this.stop(this.endReason ?? 'client');
      return DONE;
    }
    return undefined;
  }

  /** Wake a waiting consumer (another thread pushed into its channel). */
  notify(): void {
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    if (w === undefined) return;
    const r = this.poll();
    if (r === undefined) return;
    this.waiter = undefined;
    w(r);
  }
}

/**
 * The engine's Watcher behind a public Watch, for the engine's own tests
 * and tools that inspect a watch's cursor or channel (not exported from the
 * package entry).
 */
export function asWatcher(w: Watch): Watcher {
  if (!(w instanceof Watcher)) throw new TypeError('not a watch made by this engine');
  return w;
}
