/**
 * The endings alpha and beta share (off mode force-closes instead): the 410
 * after a relist the watcher cannot survive, and the 410 for an initial
 * replay overtaken by the history. One implementation, used by both.
 */
import type { Watcher } from '../watch/watcher.js';
import type { StrategyContext } from './catch-up-strategy.js';

/** Relist: a 410 at the RV the client reached (a history replay: what it received), oldest = listRV + 1. */
export function expireAtRelist(ctx: StrategyContext, w: Watcher, listRV: number, position: number): void {
  ctx.expiry.afterBacklog(w, w.replayingHistory ? w.receivedRV : position, listRV);
}

/**
 * An honest 410, counted as resource_expired_initial; the backlog is
 * dropped, since it follows the events the replay could not read.
 */
export function expireOvertaken(ctx: StrategyContext, w: Watcher): void {
  const oldest = ctx.history.oldestServableRV() ?? ctx.cacheRV() + 1;
  ctx.expiry.dropBacklog(w, oldest - 1, true);
}
