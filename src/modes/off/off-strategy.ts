/**
 * `off` mode's strategy: today's Kubernetes behaviour. A full channel blocks
 * dispatch for a shared budget and then force-closes (ForceClosePolicy);
 * there are no passes and no unsynced set; a relist or an overtaken replay
 * simply closes the watch.
 */
import { DispatchBudget } from '../../dispatch/dispatch-budget.js';
import { ForceClosePolicy } from '../../dispatch/force-close-policy.js';
import type { Watcher } from '../../watch/watcher.js';
import type { CatchUpStrategy, StrategyContext } from '../catch-up-strategy.js';
import { InProcessWatchers } from '../in-process-watchers.js';

export class OffStrategy extends ForceClosePolicy implements CatchUpStrategy {
  readonly watchers: InProcessWatchers;

  constructor(ctx: StrategyContext) {
    super(ctx.clock, new DispatchBudget(ctx.clock, ctx.options.dispatchBudget), ctx.metrics);
    this.watchers = new InProcessWatchers(ctx);
  }

  endAtRelist(w: Watcher): void {
    w.stop('relist');
  }
  initialOvertaken(w: Watcher): void {
    w.stop('expired'); // today's silent close
  }
}
