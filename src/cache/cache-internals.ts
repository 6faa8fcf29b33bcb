/**
 * The engine's own view of a cache's catch-up machinery, for its tests and
 * tools (the simulator, the benchmarks): not part of the package entry. The
 * cache registers its strategy here at construction; nothing on the public
 * WatchCache surface returns an internal type.
 */
import { BetaSync } from '../beta/beta-sync.js';
import type { CatchUpStrategy } from '../modes/catch-up-strategy.js';
import { StallPolicy } from '../sync/stall-policy.js';

const strategies = new WeakMap<object, CatchUpStrategy>();

/** Called once by the WatchCache constructor. */
export function registerStrategy(cache: object, strategy: CatchUpStrategy): void {
  strategies.set(cache, strategy);
}

/** Alpha's unsynced watchers and pass state (undefined in off and beta). */
export function stallPolicyOf(cache: object): StallPolicy | undefined {
  const s = strategies.get(cache);
  return s instanceof StallPolicy ? s : undefined;
}

/** Beta's main-thread side of the sync worker (undefined in off and alpha). */
export function betaSyncOf(cache: object): BetaSync | undefined {
  const s = strategies.get(cache);
  return s instanceof BetaSync ? s : undefined;
}
