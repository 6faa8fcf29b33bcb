/**
 * The registry of modes: each mode's strategy factory. WatchCache calls
 * `createStrategy` once, at construction; nothing else looks at the mode.
 */
import type { Mode } from '../cache/cache-options.js';
import { AlphaStrategy } from './alpha/alpha-strategy.js';
import { BetaStrategy } from './beta/beta-strategy.js';
import type { CatchUpStrategy, StrategyContext } from './catch-up-strategy.js';
import { OffStrategy } from './off/off-strategy.js';

const STRATEGIES: Record<Mode, (ctx: StrategyContext) => CatchUpStrategy> = {
  off: (ctx) => new OffStrategy(ctx),
  alpha: (ctx) => new AlphaStrategy(ctx),
  beta: (ctx) => new BetaStrategy(ctx),
};

export function createStrategy(mode: Mode, ctx: StrategyContext): CatchUpStrategy {
  return STRATEGIES[mode](ctx);
}
