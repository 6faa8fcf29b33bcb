/**
 * The watcher placement off and alpha share: each watcher's channel is an
 * in-process queue, nothing is mirrored, a watch from an RV inside the
 * history replays it as its initial events, and a watcher's position is its
 * own cursor.
 */
import type { Watcher } from '../watch/watcher.js';
import type { StrategyContext, WatcherChannelSpec, WatcherPlacement } from './catch-up-strategy.js';
import { startFromHistoryReplay } from './history-replay-start.js';

const NONE: ReadonlySet<Watcher> = new Set();

export class InProcessWatchers implements WatcherPlacement {
  readonly ringHandle = undefined;
  readonly roomSignal = undefined;
  private readonly ctx: StrategyContext;

  constructor(ctx: StrategyContext) {
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
    return NONE; // off and alpha end every watcher that cannot continue at once
  }
}
