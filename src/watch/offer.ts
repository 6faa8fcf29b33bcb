/**
 * offer(watcher, event): the one way a history event reaches a watcher's
 * channel on the main thread: the live path (Dispatcher), off mode's retries
 * of a blocked watcher, alpha's pass host and beta's hand-back all call it.
 * The sync worker offers ring references instead, with the same Selection
 * and the variant table of src/protocol/channel-variants.ts.
 *
 * The test-only fault point (src/watch/fault-points.ts: the watcher carries
 * its cache's, absent outside the harness) sits here once, so the harness's
 * fault proofs cover every delivery path.
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import { Offer } from '../sync/sync-pass.js';
import type { Watcher } from './watcher.js';

export { Offer };

export function offer(w: Watcher, event: WatchCacheEvent): Offer {
  // Invariant 2 (order and single delivery): never push an event at or below the position again.
  if (event.rv <= w.cursor.position) return Offer.AlreadyHas;
  // Invariant 4 (selection): the registration-time copy decides, on every path alike (classified once per
  // event for every watcher sharing the Selection: src/selection/selection-table.ts).
  // The form is remembered with the decision (Selection.formFor: one load, no call per watcher).
  const delivered = w.selection.formFor(event);
  if (delivered === undefined) return Offer.NotSelected;
  if (w.faults !== undefined) {
    const faulted = w.faults.offer(w, w.selection.deliveryFor(event), delivered, event.rv);
    if (faulted !== undefined) return faulted;
  }
  if (!w.push(delivered)) return Offer.Full;
  // Invariant 1 (position): a successful push moves the position to the event's RV.
  w.cursor.accepted(event.rv);
  return Offer.Pushed;
}
