/**
 * Latency recording for the benches: an HdrHistogram (hdr-histogram-js) of
 * nanosecond values, 3 significant digits, summarised in microseconds.
 * Also a tiny exact-percentile helper for short lists (resync times).
 */
import { build, type Histogram } from 'hdr-histogram-js';
import type { LatencySummary } from './types.js';

export class LatencyRecorder {
  private readonly h: Histogram;

  constructor() {
    this.h = build({ numberOfSignificantValueDigits: 3, lowestDiscernibleValue: 1, autoResize: true });
  }

  /** Record a latency given in milliseconds (negative values clamp to 0). */
  recordMs(ms: number): void {
    const ns = Math.round(ms * 1e6);
    this.h.recordValue(ns > 0 ? ns : 0);
  }

  get count(): number {
    return this.h.totalCount;
  }

  summary(): LatencySummary {
    const h = this.h;
    if (h.totalCount === 0) return emptyLatency();
    const us = (p: number): number => h.getValueAtPercentile(p) / 1000;
    return {
      count: h.totalCount,
      meanUs: h.mean / 1000,
      p50Us: us(50),
      p90Us: us(90),
      p99Us: us(99),
      p999Us: us(99.9),
      maxUs: h.maxValue / 1000,
    };
  }
}

function emptyLatency(): LatencySummary {
  return { count: 0, meanUs: 0, p50Us: 0, p90Us: 0, p99Us: 0, p999Us: 0, maxUs: 0 };
}

/** Exact percentile (nearest rank) of an unsorted list; 0 for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The monotonic clock shared by every thread and process of the machine, in ms. */
export function monoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Replace non-finite numbers by 0 (reports hold finite numbers only). */
export function finite(x: number): number {
  return Number.isFinite(x) ? x : 0;
}
