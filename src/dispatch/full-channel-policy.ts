/**
 * What the live path does when a watcher's channel is full: the one place
 * where the modes differ on the live path.
 *  - `off`: ForceClosePolicy (src/dispatch/force-close-policy.ts)
 *  - `alpha` / `beta`: StallPolicy (src/sync/stall-policy.ts)
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { Watcher } from '../watch/watcher.js';

export interface FullChannelPolicy {
  /**
   * The live path may offer an event to the consumers waiting for one before it walks every candidate
   * (src/dispatch/dispatcher.ts, "Live first"): alpha and beta, which never wait on a full channel.
   * Not off: its dispatch blocks on a full channel, and no watcher may get ahead of the block.
   */
  readonly liveFirst?: boolean;
  /**
   * The live offers of `event` found these channels full: `full[0]` to `full[count - 1]`, in offer
   * order. Called once per event, after every candidate was offered (src/dispatch/dispatcher.ts says
   * why not from inside the offer loop). The policy must not keep `full`: the dispatcher reuses it.
   */
  onFull(full: readonly (Watcher | undefined)[], count: number, event: WatchCacheEvent): void;
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
