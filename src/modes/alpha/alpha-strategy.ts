/**
 * `alpha` mode's strategy: a full channel marks the watcher unsynced (no
 * wait, no close); sync passes run on the main thread (StallPolicy); the
 * resync point is the end of the history; the unsynced watchers stay in the
 * live index (the live path skips them by their cursor).
 */
import { StallPolicy } from '../../sync/stall-policy.js';
import type { Watcher } from '../../watch/watcher.js';
import type { CatchUpStrategy, StrategyContext } from '../catch-up-strategy.js';
import { expireAtRelist, expireOvertaken } from '../catch-up-endings.js';
import { InProcessWatchers } from '../in-process-watchers.js';

export class AlphaStrategy extends StallPolicy implements CatchUpStrategy {
  readonly watchers: InProcessWatchers;
  private readonly ctx: StrategyContext;

  constructor(ctx: StrategyContext) {
    super(
      ctx.clock,
      ctx.pass,
      ctx.history,
      ctx.metrics,
      {
        expire: (w, oldest) => ctx.expiry.afterBacklog(w, w.position, oldest - 1),
        unsynced: () => {},
        resynced: () => {},
        resyncPoint: () => ctx.cacheRV(), // alpha resyncs at the end of the history
      },
      ctx.source,
      ctx.faults,
    );
    this.ctx = ctx;
    this.watchers = new InProcessWatchers(ctx);
  }

  endAtRelist(w: Watcher, listRV: number): void {
    expireAtRelist(this.ctx, w, listRV, w.position);
  }
  initialOvertaken(w: Watcher): void {
    expireOvertaken(this.ctx, w);
  }
}
