/**
 * RelistReset: beta's relist protocol. The main thread never takes a channel
 * from the sync worker (it may be mid-pass on it), so a relist is a round
 * trip:
 * 1. `begin`: post what is pending, then `reset`; record what each unsynced
 *    watcher has reached (the consumer may have taken more than the cell
 *    says); the unsynced set is empty from now on.
 * 2. The worker drops every member and hands each channel back itself, then
 *    answers `reset-done`.
 * 3. `done`: the watchers that cannot continue past the list RV get their
 *    410 at the position reached; the ones that stay unsynced at the list RV
 *    are adopted again.
 * (The ring restarts after the list RV in between: BetaSync.reset.)
 */
import type { StallHooks } from '../sync/stall-policy.js';
import type { UnsyncedSet } from '../sync/unsynced-set.js';
import type { Watcher } from '../watch/watcher.js';
import type { SyncWorkerLink } from './sync-worker-link.js';

export class RelistReset {
  /** Watchers to end with a 410 once the worker confirms a reset, with the oldest servable RV. */
  private readonly expireAfterReset = new Map<Watcher, number>();
  /** Watchers to adopt again once the worker confirms a reset (it owns their channels until then). */
  private readonly readopt = new Set<Watcher>();

  constructor(
    private readonly link: SyncWorkerLink,
    private readonly unsynced: UnsyncedSet<Watcher>,
    private readonly hooks: StallHooks,
    private readonly adopt: (w: Watcher) => void,
  ) {}

  /** Step 1: `keep` stay unsynced at `listRV`, `end` get their 410 once the worker confirms. */
  begin(listRV: number, keep: readonly Watcher[], end: readonly Watcher[]): void {
    this.link.flush();
    this.link.post({ op: 'reset' });
    for (const w of this.unsynced) w.cursor.raiseTo(w.receivedRV); // what the worker reached
    this.unsynced.clear();
    for (const w of keep) this.readopt.add(w);
    for (const w of end) this.expireAfterReset.set(w, listRV + 1);
  }

  /** Step 3: the worker handed every channel back. */
  done(): void {
    for (const [w, oldest] of this.expireAfterReset) {
      w.cursor.raiseTo(w.receivedRV);
      w.notify();
      this.hooks.expire(w, oldest);
    }
    this.expireAfterReset.clear();
    for (const w of this.readopt) if (w.accepting && w.unsynced) this.adopt(w);
    this.readopt.clear();
  }
}
