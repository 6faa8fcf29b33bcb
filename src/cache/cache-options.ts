/**
 * WatchCache options (API.md "Library"), their defaults and validation, and
 * the per-watcher channel size heuristic of Kubernetes.
 */
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import { BadRequestError } from '../core/errors.js';
import type { IndexerFunc, ResourceInfo, Store } from '../core/types.js';
import type { DispatchBudgetOptions } from '../dispatch/dispatch-budget.js';
import type { HistoryOptions } from '../history/event-history.js';
import type { PassOptions } from '../sync/pass-options.js';

export type Mode = 'off' | 'alpha' | 'beta';
export const MODES: readonly Mode[] = ['off', 'alpha', 'beta'];

export interface WatchCacheOptions {
  store: Store;
  /** 'off' | 'alpha' | 'beta' (default 'beta'). */
  mode?: Mode;
  resource?: ResourceInfo;
  /** Field indexers; the first one is the trigger index used by dispatch. */
  indexers?: Record<string, IndexerFunc>;
  /** Default per-watcher channel size (default: Kubernetes' heuristic). */
  channelCapacity?: number;
  history?: HistoryOptions;
  bookmarkFrequencyMs?: number;
  blockTimeoutMs?: number;
  pass?: Partial<PassOptions>;
  dispatchBudget?: DispatchBudgetOptions;
  /** A consistent read that times out answers 429 instead of falling back to the store. */
  skipTimeoutFallback?: boolean;
  registry?: Registry;
  clock?: Clock;
  /**
   * Beta: where the sync worker runs. 'thread' (default with the real clock)
   * or 'in-process' (default with any other clock: the simulator and the
   * harness run the same worker code on their virtual clock).
   */
  syncWorker?: 'thread' | 'in-process';
}

export function checkMode(mode: unknown): Mode {
  if (mode === undefined) return 'beta';
  if (typeof mode !== 'string' || !(MODES as readonly string[]).includes(mode)) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- whatever the caller passed, shown as String() shows it
    const shown = String(mode);
    throw new BadRequestError(`unknown mode "${shown}": must be one of off, alpha, beta`);
  }
  return mode as Mode;
}

export function checkPositive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new BadRequestError(`${name} must be a number > 0, got ${String(value)}`);
  return value;
}

/**
 * Kubernetes `suggestedWatchChannelSize`: about one second of history
 * (capacity / eventFreshDuration in seconds), clamped to [10, 100] without a
 * trigger index, [10, 1000] with one the watcher does not use, exactly 10
 * when the watcher uses the trigger index.
 */
export function suggestedChannelSize(
  historyCapacity: number,
  eventFreshDurationMs: number,
  hasTrigger: boolean,
  usesTrigger: boolean,
): number {
  if (hasTrigger && usesTrigger) return 10;
  const base = Math.ceil(historyCapacity / (eventFreshDurationMs / 1000));
  return Math.min(hasTrigger ? 1000 : 100, Math.max(10, base));
}
