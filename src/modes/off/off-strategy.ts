/**
 * `off` mode's strategy: today's Kubernetes behaviour. A full channel blocks
 * dispatch for a shared budget and then force-closes (ForceClosePolicy);
 * there are no passes and no unsynced set; a relist or an overtaken replay
 * simply closes the watch.
 */
import { DispatchBudget } from '../../dispatch/dispatch-budget.js';
import { ForceClosePolicy } from '../../dispatch/force-close-policy.js';
import type { Watcher } from '../../watch/watcher.js';
import type { CatchUpStrategy, StrategyContext, WatcherChannelSpec } from '../catch-up-strategy.js';
import { startFromHistoryReplay } from '../history-replay-start.js';

export class OffStrategy extends ForceClosePolicy implements CatchUpStrategy {
  readonly ringHandle = undefined;
  private readonly ctx: StrategyContext;

  constructor(ctx: StrategyContext) {
    super(ctx.clock, new DispatchBudget(ctx.clock, ctx.options.dispatchBudget), ctx.metrics);
    this.ctx = ctx;
  }

  channelFor(): WatcherChannelSpec | undefined {
    return undefined;
  }
  registered(): void {}
  mirror(): undefined {
    return undefined;
  }
  startBehind(w: Watcher, rv: number): void {
    startFromHistoryReplay(this.ctx, w, rv);
  }
  positionOf(w: Watcher): number {
    return w.position;
  }
  relistStarting(): ReadonlySet<Watcher> {
    return NONE;
  }
  endAtRelist(w: Watcher): void {
    w.stop('relist');
  }
  initialOvertaken(w: Watcher): void {
    w.stop('expired'); // today's silent close
  }
}

const NONE: ReadonlySet<Watcher> = new Set();
