/**
 * What the live path does when a watcher's channel is full: the one place
 * where the modes differ on the live path.
 *  - `off`: ForceClosePolicy (src/dispatch/force-close-policy.ts)
 *  - `alpha` / `beta`: StallPolicy (src/sync/stall-policy.ts)
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { Watcher } from '../watch/watcher.js';

export interface FullChannelPolicy {
  /** The live offer of `event` to `watcher` found its channel full. */
  onFull(watcher: Watcher, event: WatchCacheEvent): void;
  /**
   * Called after an event was offered to every candidate. Returns true when
   * the dispatcher must pause; the policy then calls `resume` exactly once.
   */
  afterEvent(resume: () => void): boolean;
  /** The consumer of `watcher` made room in its channel. */
  onRoom(watcher: Watcher): void;
  /** `watcher` ended (it may be one the policy is tracking). */
  onEnded(watcher: Watcher): void;
  /** After every dispatched event or progress notification. */
  afterDispatch(): void;
  /** Release timers. */
  close(): void;
}
