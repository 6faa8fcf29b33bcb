/**
 * Hand-back: the sync worker returns a watcher to the main thread, which
 * owns its channel again from then on (the worker handed the writer side
 * back before its message). Two outcomes:
 *  - caught up (`handBack`): within the hand-off distance of the last
 *    dispatched RV, the main thread delivers the last few events itself and
 *    marks the watcher synced;
 *  - expired (`expiredByWorker`): its position aged out of the history; the
 *    consumer drains the backlog, then gets its 410.
 */
import type { EventHistory } from '../history/event-history.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { StallHooks } from '../sync/stall-policy.js';
import type { UnsyncedSet } from '../sync/unsynced-set.js';
import { Offer, offer } from '../watch/offer.js';
import type { Watcher } from '../watch/watcher.js';
import type { SharedWatcherChannel } from './shared-watcher-channel.js';

/** What a hand-back needs of beta's main-thread side. */
export interface HandBackContext {
  readonly history: EventHistory;
  readonly metrics: CacheMetrics;
  readonly hooks: StallHooks;
  readonly unsynced: UnsyncedSet<Watcher>;
  lastDispatchedRV(): number;
  /** Still behind after all: hand it to the worker again (the same unsynced episode). */
  readopt(w: Watcher): void;
}

/**
 * A caught-up watcher comes back at `position`:
 * 0. A stale hand-back is ignored: the channel is the worker's again (re-adopted since, e.g. by a restarted
 *    worker), so the worker, not this thread, is its writer.
 * 1. Leave the unsynced set, take the worker's position and pass-push count,
 *    wake the consumer (the worker's last pushes).
 * 2. A position the history no longer holds: 410.
 * 3. Offer every history event after the position up to the last dispatched
 *    RV; a full channel sends it back to the worker at X - 1.
 * 4. Resync at the last dispatched RV and rejoin the live path.
 */
export function handBack(ctx: HandBackContext, id: number, position: number, passPushes: number): void {
  const w = ctx.unsynced.get(id);
  if (w === undefined) return;
  // 0. Single writer: a hand-back is the worker's word that it gave the channel back.
  if (!(w.queue as SharedWatcherChannel).ownedByMain) return;
  // 1.
  ctx.unsynced.remove(w);
  w.cursor.raiseTo(position);
  w.cursor.setPassPushes(passPushes);
  w.notify();
  if (!w.accepting) return;
  // 2.
  const h = ctx.history;
  if (h.isTooOld(w.position)) {
    ctx.hooks.expire(w, h.oldestServableRV() ?? w.position + 1);
    return;
  }
  // 3. Invariant 2 (order, single delivery): from the event right after the position, in history order.
  const last = ctx.lastDispatchedRV();
  for (let i = h.indexAfter(w.position); i < h.endIndex; i++) {
    const ev = h.at(i);
    if (ev.rv > last) break;
    const r = offer(w, ev);
    if (r === Offer.Full) {
      // Invariant 1 (position): a failed push of X leaves the position at X - 1; the worker re-offers X.
      w.cursor.missed(ev.rv);
      ctx.readopt(w); // still behind: back to the worker (the same unsynced episode)
      return;
    }
    if (r === Offer.Pushed) {
      w.cursor.pushedByPass();
      ctx.metrics.deferredEvents.inc();
    }
  }
  // 4. Resync at the last dispatched RV: the live path continues right after it, nothing to skip.
  w.cursor.raiseTo(last);
  ctx.unsynced.resync(w);
  ctx.hooks.resynced(w);
}

/** The worker found `id`'s position older than the history (`oldest`): drain, then its 410. */
export function expiredByWorker(ctx: HandBackContext, id: number, position: number, oldest: number): void {
  const w = ctx.unsynced.get(id);
  if (w === undefined) return;
  ctx.unsynced.remove(w);
  w.cursor.raiseTo(position);
  w.notify();
  ctx.hooks.expire(w, oldest);
}
