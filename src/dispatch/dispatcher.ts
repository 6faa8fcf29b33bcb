/**
 * Dispatcher: the live path. Every event reaches it after it was appended to
 * the history (invariant 1 depends on that order), and it offers the event to
 * the watchers that can select it, in one allocation-free loop:
 *
 * 1. Route through the WatcherIndex (scope and trigger buckets).
 * 2. Skip watchers that are unsynced or not accepting.
 * 3. Skip events at or below the watcher's position (invariant 2).
 * 4. Classify through the watcher's registration-time selection (invariant 4).
 * 5. Non-blocking push of the shared form; success moves the position to the
 *    event's RV; failure goes to the mode's FullChannelPolicy.
 * 6. Let the policy decide whether dispatch pauses (off mode only).
 *
 * While paused, later events and progress notifications queue in arrival
 * order and are dispatched on resume.
 */
import { Delivery } from '../selection/selection.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { Watcher } from '../watch/watcher.js';
import type { FullChannelPolicy } from './full-channel-policy.js';
import type { WatcherIndex } from './watcher-index.js';
import { FAULTS, fault } from '../testing/faults.js';
import type { WatchEvent } from '../wire/watch-event.js';

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
  private readonly offerFn = (w: Watcher): void => this.offer(w);
  private readonly resumeFn = (): void => this.resume();

  constructor(index: WatcherIndex, policy: FullChannelPolicy, metrics: CacheMetrics) {
    this.index = index;
    this.policy = policy;
    this.metrics = metrics;
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
    // Invariant 2 (order and single delivery): never push an event at or below the position again.
    if (event.rv <= w.position) {
      if (event.rv > w.startPosition) this.metrics.skippedEvents.inc();
      return;
    }
    // Invariant 4 (selection): the registration-time copy decides, exactly as a pass does.
    const d = w.selection.classify(event);
    if (d === Delivery.None) return;
    const delivered = event.deliver(d);
    if (FAULTS.active !== undefined && this.injectFault(w, d, delivered, event.rv)) return;
    // Invariant 1 (position): a successful push moves the position to the event's RV.
    if (w.push(delivered)) w.position = event.rv;
    else this.policy.onFull(w, delivered, event);
  }

  private held: { w: Watcher; ev: WatchEvent } | undefined;

  /** Test-only faults (src/testing/faults.ts); true when the fault consumed the offer. */
  private injectFault(w: Watcher, d: Delivery, delivered: WatchEvent, rv: number): boolean {
    if (this.held !== undefined && this.held.w === w) {
      const held = this.held;
      this.held = undefined;
      if (w.push(delivered)) w.position = rv;
      w.push(held.ev);
      return true;
    }
    if ((d === Delivery.Added || d === Delivery.Deleted) && fault('skip-transition')) return true;
    if (w.free >= 2 && fault('drop')) {
      w.position = rv;
      return true;
    }
    if (w.free >= 2 && fault('duplicate')) {
      w.push(delivered);
      w.push(delivered);
      w.position = rv;
      return true;
    }
    if (w.free >= 3 && fault('reorder')) {
      this.held = { w, ev: delivered };
      w.position = rv;
      return true;
    }
    return false;
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
