/**
 * How off and alpha start a watch from an RV inside the history: the
 * history after `rv` is replayed as its initial events while it is already
 * on the live path (registered at the cache RV in the same synchronous
 * step, so nothing falls between). Beta adopts such a watch instead.
 */
import { HistorySource } from '../watch/initial-source.js';
import type { Watcher } from '../watch/watcher.js';
import type { StrategyContext } from './catch-up-strategy.js';

export function startFromHistoryReplay(ctx: StrategyContext, w: Watcher, rv: number): void {
  w.receivedRV = rv; // it resumes from rv: what a 410 during its replay must name
  ctx.register(w, ctx.cacheRV(), new HistorySource(ctx.history.intervalAfter(rv), w.selection));
}
