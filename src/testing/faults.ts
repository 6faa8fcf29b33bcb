/**
 * Test-only fault injection. The correctness harness switches one fault on
 * to prove it would catch the bug (issue: "Proof that it can fail"). A
 * FaultSwitch implements the engine's fault points (src/watch/fault-points.ts)
 * and reaches a cache only as its engine-internal construction option
 * (src/cache/engine-options.ts): the engine imports nothing from here.
 *
 * Faults (each fires once, after `skip` opportunities):
 *  - drop: the live path loses one event (position moves, nothing pushed)
 *  - duplicate: the live path pushes one event twice
 *  - reorder: the live path swaps two consecutive events of one watcher
 *  - bookmark-backwards: one bookmark carries an RV below the position
 *  - skip-transition: one ADDED/DELETED selector transition is not delivered
 *  - early-resync: a pass resyncs a member before its scan reached the resync point
 */
import { Delivery } from '../selection/selection.js';
import { Offer } from '../sync/sync-pass.js';
import type { FaultPoints } from '../watch/fault-points.js';
import type { Watcher } from '../watch/watcher.js';
import type { WatchEvent } from '../wire/watch-event.js';

export type FaultName = 'drop' | 'duplicate' | 'reorder' | 'bookmark-backwards' | 'skip-transition' | 'early-resync';
export const FAULT_NAMES: readonly FaultName[] = [
  'drop',
  'duplicate',
  'reorder',
  'bookmark-backwards',
  'skip-transition',
  'early-resync',
];

export class FaultSwitch implements FaultPoints {
  private active: FaultName | undefined;
  private skip = 0;
  private fired = false;
  /** The event a reorder fault holds back, pushed after the next one to the same watcher. */
  private held: { w: Watcher; ev: WatchEvent } | undefined;

  /** Arm `name` (undefined disarms); it fires once after `skip` opportunities. */
  arm(name: FaultName | undefined, skip = 0): void {
    this.active = name;
    this.skip = skip;
    this.fired = false;
    this.held = undefined;
  }

  /** True exactly once for the armed fault, after its skips. */
  private fire(name: FaultName): boolean {
    if (this.active !== name || this.fired) return false;
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    this.fired = true;
    return true;
  }

  offer(w: Watcher, d: Delivery, delivered: WatchEvent, rv: number): Offer | undefined {
    if (this.held !== undefined && this.held.w === w) {
      const h = this.held;
      this.held = undefined;
      if (w.push(delivered)) w.cursor.accepted(rv);
      w.push(h.ev);
      return Offer.Pushed;
    }
    if (this.active === undefined) return undefined;
    if ((d === Delivery.Added || d === Delivery.Deleted) && this.fire('skip-transition')) return Offer.NotSelected;
    if (w.free >= 2 && this.fire('drop')) {
      w.cursor.accepted(rv);
      return Offer.Pushed;
    }
    if (w.free >= 2 && this.fire('duplicate')) {
      w.push(delivered);
      w.push(delivered);
      w.cursor.accepted(rv);
      return Offer.Pushed;
    }
    if (w.free >= 3 && this.fire('reorder')) {
      this.held = { w, ev: delivered };
      w.cursor.accepted(rv);
      return Offer.Pushed;
    }
    return undefined;
  }

  bookmarkBelowPosition(w: Watcher): boolean {
    return this.active !== undefined && w.position > 1 && this.fire('bookmark-backwards');
  }

  resyncEarly(): boolean {
    return this.active !== undefined && this.fire('early-resync');
  }
}
