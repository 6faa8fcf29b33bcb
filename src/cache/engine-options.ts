/**
 * Engine-internal construction options: not part of WatchCacheOptions (the
 * public contract, API.md) and not exported from the package entry. A tool
 * (the correctness harness) attaches them to the options object it passes to
 * `new WatchCache(...)`; the constructor reads them once.
 */
import type { FaultPoints } from '../watch/fault-points.js';
import type { WatchCacheOptions } from './cache-options.js';

export interface EngineOptions {
  /** Test-only fault injection (src/watch/fault-points.ts); absent: no fault point fires. */
  faults?: FaultPoints;
  /**
   * The live path's live-first threshold (src/dispatch/dispatcher.ts; default LIVE_FIRST_MIN_WATCHERS):
   * the harness lowers it so that its small traces dispatch in batches too.
   */
  liveFirstMinWatchers?: number;
  /**
   * Candidates a live-first batch's walk visits per turn (src/dispatch/dispatcher.ts; default WALK_CHUNK):
   * the harness lowers it so that its walks stop and go on in later turns too.
   */
  liveFirstWalkChunk?: number;
}

const attached = new WeakMap<WatchCacheOptions, EngineOptions>();

/** `options`, with `engine` attached for the WatchCache constructor. */
export function withEngineOptions<T extends WatchCacheOptions>(options: T, engine: EngineOptions): T {
  attached.set(options, engine);
  return options;
}

/** The engine options attached to `options` (undefined: none). */
export function engineOptionsOf(options: WatchCacheOptions): EngineOptions | undefined {
  return attached.get(options);
}
