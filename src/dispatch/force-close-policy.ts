/**
 * ForceClosePolicy: `off` mode, today's Kubernetes behaviour (cacher.go
 * dispatchEvent, §1.2-1.4 of kubernetes-etcd-semantics.md).
 *
 * 1. The event is first offered to every selected watcher without waiting;
 *    the full ones are collected here.
 * 2. If any were full, the dispatcher pauses (later events queue behind this
 *    one: the shared wait taxes every watcher) and one timer is armed with the
 *    whole available budget.
 * 3. A blocked watcher whose consumer makes room gets the event; when all
 *    have it, the timer is cancelled and the unused budget returned.
 * 4. When the timer fires, every watcher still full gets one last
 *    non-blocking attempt and is otherwise force-closed: its stream simply
 *    ends (no ERROR event), counted as reason="unresponsive".
 * 5. Only the watchers still full are closed. Closing one reports back
 *    through onEnded; the set is taken out before the closes so that report
 *    cannot resume dispatch in the middle of them: the events queued behind
 *    the wait are dispatched after every close, and a channel they fill (a
 *    healthy watcher's, whose consumer runs only after this synchronous run)
 *    waits on the budget the wait accrued, instead of being closed with the
 *    slow ones. Kubernetes closes only the slow watchers: its watcher
 *    goroutines drain their channels while the dispatcher works through
 *    `incoming` (issue 13, deliverable 7).
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import { Offer, offer } from '../watch/offer.js';
import type { Watcher } from '../watch/watcher.js';
import type { DispatchBudget } from './dispatch-budget.js';
import type { FullChannelPolicy } from './full-channel-policy.js';

export class ForceClosePolicy implements FullChannelPolicy {
  private readonly clock: Clock;
  private readonly budget: DispatchBudget;
  private readonly metrics: CacheMetrics;
  /** Watchers whose channel was full for the current event, with what they are owed. */
  private readonly blocked = new Map<Watcher, WatchCacheEvent>();
  private timer: TimerHandle | undefined;
  private taken = 0;
  private startedAt = 0;
  private resume: (() => void) | undefined;

  constructor(clock: Clock, budget: DispatchBudget, metrics: CacheMetrics) {
    this.clock = clock;
    this.budget = budget;
    this.metrics = metrics;
  }

  /** Number of watchers the dispatcher is waiting on. */
  get waitingOn(): number {
    return this.blocked.size;
  }

  onFull(full: readonly (Watcher | undefined)[], count: number, event: WatchCacheEvent): void {
    for (let i = 0; i < count; i++) this.blocked.set(full[i]!, event);
  }

  afterEvent(resume: () => void): boolean {
    if (this.blocked.size === 0) return false;
    this.taken = this.budget.takeAvailable();
    if (this.taken <= 0) {
      this.closeStillFull();
      return false;
    }
    this.startedAt = this.clock.now();
    this.resume = resume;
    this.timer = this.clock.setTimeout(() => this.expire(), this.taken);
    return true;
  }

  onRoom(watcher: Watcher): void {
    const owed = this.blocked.get(watcher);
    if (owed === undefined || this.resume === undefined) return;
    if (offer(watcher, owed) === Offer.Full) return;
    this.blocked.delete(watcher);
    if (this.blocked.size === 0) this.finish(true);
  }

  onEnded(watcher: Watcher): void {
    if (!this.blocked.delete(watcher)) return;
    if (this.blocked.size === 0 && this.resume !== undefined) this.finish(true);
  }

  afterDispatch(): void {}

  close(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.blocked.clear();
    this.resume = undefined;
  }

  private expire(): void {
    this.timer = undefined;
    this.closeStillFull();
    this.finish(false);
  }

  private closeStillFull(): void {
    // Step 5: taken out first, so a stop's onEnded neither resumes dispatch here nor adds to this set.
    const still = [...this.blocked];
    this.blocked.clear();
    for (const [w, owed] of still) {
      if (w.accepting && offer(w, owed) !== Offer.Full) continue;
      if (w.accepting) {
        this.metrics.terminated.unresponsive.inc();
        w.stop('unresponsive');
      }
    }
  }

  private finish(early: boolean): void {
    if (early) {
      if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
      this.timer = undefined;
      this.budget.returnUnused(this.taken - (this.clock.now() - this.startedAt));
    }
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
  }
}
