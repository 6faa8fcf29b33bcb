/**
 * DispatchBudget: `off` mode's shared blocking budget (Kubernetes
 * cacher/time_budget.go). It accrues 50 ms per second of clock time, capped
 * at 100 ms; the dispatcher takes all of it when it must wait on full
 * channels and returns what it did not use.
 */
import type { Clock } from '../core/clock.js';

export interface DispatchBudgetOptions {
  /** Budget accrued per second of clock time (default 50 ms). */
  refreshPerSecondMs?: number;
  /** Cap (default 100 ms). */
  maxBudgetMs?: number;
}

export class DispatchBudget {
  private readonly clock: Clock;
  private readonly refreshPerSecondMs: number;
  private readonly maxBudgetMs: number;
  private budget = 0; // starts empty, like Kubernetes
  private last: number;

  constructor(clock: Clock, options: DispatchBudgetOptions = {}) {
    this.clock = clock;
    this.refreshPerSecondMs = options.refreshPerSecondMs ?? 50;
    this.maxBudgetMs = options.maxBudgetMs ?? 100;
    this.last = clock.now();
  }

  /** Take the whole available budget (ms), after accruing for the time since the last take. */
  takeAvailable(): number {
    const now = this.clock.now();
    this.budget = Math.min(this.maxBudgetMs, this.budget + ((now - this.last) / 1000) * this.refreshPerSecondMs);
    this.last = now;
    const taken = this.budget;
    this.budget = 0;
    return taken;
  }

  /** Give back an unused part (negative values are ignored). */
  returnUnused(ms: number): void {
    if (ms <= 0) return;
    this.budget = Math.min(this.maxBudgetMs, this.budget + ms);
  }
}
