/**
 * Dispatcher: the live path. Every event reaches it after it was appended to
 * the history (invariant 1 depends on that order), and it offers the event to
 * the watchers that can select it, in one allocation-free loop:
 *
 * 1. Route through the WatcherIndex (scope and trigger buckets).
 * 2. Skip watchers that are unsynced or not accepting.
 * 3. offer() (src/watch/offer.ts): position check (invariant 2), selection
 *    (invariant 4), non-blocking push of the shared form moving the position
 *    (invariant 1); a full channel is recorded.
 * 4. After the last candidate: the full channels go to the mode's
 *    FullChannelPolicy in one call, in offer order.
 * 5. Let the policy decide whether dispatch pauses (off mode only).
 *
 * While paused, later events and progress notifications queue in arrival
 * order and are dispatched on resume.
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { Watcher } from '../watch/watcher.js';
import type { FullChannelPolicy } from './full-channel-policy.js';
import type { WatcherIndex } from './watcher-index.js';
import { Offer, offer } from '../watch/offer.js';

/**
 * offer(), as a module-private const: V8 folds a module's own initialized const into the dispatch loop,
 * while an imported function is loaded from its binding and checked (the hole, then its identity) at
 * every offer. The same function, not a second one.
 */
const offerOne = offer;

export class Dispatcher {
  /** The last RV the live path processed (events and store progress). */
  lastDispatchedRV = 0;
  private readonly index: WatcherIndex;
  private readonly policy: FullChannelPolicy;
  private readonly metrics: CacheMetrics;
  private paused = false;
  /** Events (or progress RVs, as numbers) waiting while dispatch is paused. */
  private queue: (WatchCacheEvent | number)[] = [];
  private queueHead = 0;
  private current: WatchCacheEvent | undefined;
  /**
   * The candidates of the current event whose channel was full, in offer order: slots [0, fullCount).
   * Recorded without a branch of its own (see `offer`) and handed to the policy after the offers.
   */
  private full: (Watcher | undefined)[] = fullList(0);
  private fullCount = 0;
  private readonly offerFn = (w: Watcher): void => this.offer(w);
  private readonly resumeFn = (): void => this.resume();

  constructor(index: WatcherIndex, policy: FullChannelPolicy, metrics: CacheMetrics) {
    this.index = index;
    this.policy = policy;
    this.metrics = metrics;
    // Room to record every candidate as full, grown when the index grows (at registration). Growing it
    // here in dispatchOne instead, in a branch that had not run since the loop was optimized, threw the
    // whole loop back to the interpreter for the first event after 10,000 watchers registered (~12 ms),
    // and the new array's elements kind did the same again a few events later (issue 13).
    index.onGrow((size) => {
      if (this.full.length >= size) return;
      const grown = fullList(size);
      // A watcher registered during an event's offers keeps the full ones recorded so far.
      for (let i = 0; i < this.fullCount; i++) grown[i] = this.full[i];
      this.full = grown;
    });
  }

  /** True while off mode waits on full channels. */
  get isPaused(): boolean {
    return this.paused;
  }
  /** Events waiting behind a paused dispatch. */
  get backlog(): number {
    return this.queue.length - this.queueHead;
  }

  dispatch(event: WatchCacheEvent): void {
    if (this.paused) this.queue.push(event);
    else this.dispatchOne(event);
  }

  /** The store reported progress to `rv` with no event (drives bookmark RVs). */
  progress(rv: number): void {
    if (this.paused) this.queue.push(rv);
    else this.progressOne(rv);
  }

  /** Reset after a relist: nothing queued survives it. */
  reset(rv: number): void {
    this.queue = [];
    this.queueHead = 0;
    this.lastDispatchedRV = rv;
  }

  private dispatchOne(event: WatchCacheEvent): void {
    this.current = event;
    this.index.forEachCandidate(event, this.offerFn);
    this.current = undefined;
    this.full[this.fullCount] = undefined; // the slot past the full ones holds the last candidate offered: let it go
    if (this.fullCount !== 0) this.fullChannels(event);
    this.lastDispatchedRV = event.rv;
    this.metrics.eventsDispatched.inc();
    if (this.policy.afterEvent(this.resumeFn)) this.paused = true;
    this.policy.afterDispatch();
  }

  private progressOne(rv: number): void {
    if (rv > this.lastDispatchedRV) this.lastDispatchedRV = rv;
    this.policy.afterDispatch();
  }

  private offer(w: Watcher): void {
    // Unsynced watchers are served by passes only; the live path offers them nothing.
    if (w.unsynced || !w.accepting) return;
    const event = this.current!;
    const r = offerOne(w, event);
    // A full channel is recorded with operations every offer runs (the store, the add) and a choice between
    // two values, not a branch of its own: TurboFan compiles a branch that never ran (no type feedback) as
    // a deoptimization, so the first mass stall used to throw this whole loop back to the interpreter for
    // the rest of the event (10,000 offers at interpreter speed: tens of ms, issue 13). The policy gets
    // the full ones after the loop (`fullChannels`). Invariant 1 (position) is the policy's there: the
    // failed push left the position below X.
    const n = this.fullCount;
    const next = n + 1;
    this.full[n] = w;
    this.fullCount = r === Offer.Full ? next : n;
    if (r === Offer.AlreadyHas && event.rv > w.startPosition) this.metrics.skippedEvents.inc();
  }

  /** After the offers of `event`: the full ones go to the policy, in offer order, in one call. */
  private fullChannels(event: WatchCacheEvent): void {
    const full = this.full;
    const n = this.fullCount;
    this.fullCount = 0;
    this.policy.onFull(full, n, event);
    full.fill(undefined, 0, n); // let them go
  }

  private resume(): void {
    this.paused = false;
    while (!this.paused && this.queueHead < this.queue.length) {
      const next = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = 0;
      if (typeof next === 'number') this.progressOne(next);
      else this.dispatchOne(next);
    }
    if (this.queueHead === this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    }
  }
}

/**
 * An empty full list of `size` slots. Every list the dispatcher uses is made here, so all have one elements
 * kind (holey, object values): a fresh `new Array(n)` holds small integers as far as V8 knows, and the
 * first watcher stored into one would change its map under the optimized loop (a deoptimization).
 */
function fullList(size: number): (Watcher | undefined)[] {
  return new Array<Watcher | undefined>(size).fill(undefined);
}
