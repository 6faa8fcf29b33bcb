/**
 * Fault points: the three places where a test tool may inject one engine bug
 * to prove that the correctness harness catches it. The engine defines the
 * points; the tool (src/testing/faults.ts) decides whether a fault fires and
 * what it does. A cache gets them only through the engine-internal
 * construction option (src/cache/engine-options.ts), and each point is one
 * `!== undefined` check when they are absent (always, outside the harness).
 *
 * Where each point is applied:
 *  - offer: src/watch/offer.ts, after selection and before the push, on every
 *    main-thread delivery path (the watcher carries its cache's points);
 *  - bookmarkBelowPosition: src/dispatch/bookmark-scheduler.ts, for a due bookmark;
 *  - resyncEarly: src/sync/sync-pass.ts, for a served member whose cohort scan
 *    did not reach the resync point (main-thread passes: alpha).
 */
import type { Delivery } from '../selection/selection.js';
import type { Offer } from '../sync/sync-pass.js';
import type { WatchEvent } from '../wire/watch-event.js';
import type { Watcher } from './watcher.js';

export interface FaultPoints {
  /**
   * `delivered` (the event at `rv`, selected as `d`) is about to be pushed to `w`.
   * Returns an Offer when the fault took the offer over, undefined to deliver normally.
   */
  offer(w: Watcher, d: Delivery, delivered: WatchEvent, rv: number): Offer | undefined;
  /** A bookmark is due for `w`: true to send one below its position instead. */
  bookmarkBelowPosition(w: Watcher): boolean;
  /** A pass served a member whose scan stopped before the resync point: true to resync it anyway. */
  resyncEarly(): boolean;
}
