/**
 * Recorder: where the simulated clients report what happened to them
 * (deliveries and their latency, terminations, reconnects, re-lists, stall
 * episodes), aggregated per latency class and per population.
 */
import { LatencyHistogram } from './histogram.js';
import type { EpisodeRecord, TerminationReason, TerminationRecord } from './result.js';

/** Terminations kept in the result (the counts always cover all of them). */
export const MAX_TERMINATION_RECORDS = 20_000;

export interface ClassHistograms {
  healthy: LatencyHistogram;
  slow: LatencyHistogram;
}

export class Recorder {
  readonly healthy = new LatencyHistogram();
  readonly slow = new LatencyHistogram();
  readonly byPopulation = new Map<string, ClassHistograms>();
  readonly terminations: TerminationRecord[] = [];
  readonly byReason: Record<string, number> = {};
  readonly episodes: EpisodeRecord[] = [];
  readonly sequences = new Map<string, string[]>();
  /** Per-watcher worst latency, per class. */
  readonly worst: { healthy: number[]; slow: number[] } = { healthy: [], slow: [] };
  terminationCount = 0;
  deliveries = 0;
  reconnects = 0;
  relists = 0;
  private readonly origin: number;

  constructor(origin: number) {
    this.origin = origin;
  }

  histogramsFor(population: string): ClassHistograms {
    let h = this.byPopulation.get(population);
    if (h === undefined)
      this.byPopulation.set(population, (h = { healthy: new LatencyHistogram(), slow: new LatencyHistogram() }));
    return h;
  }

  terminated(at: number, watcher: number, population: string, reason: TerminationReason): void {
    this.terminationCount++;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
    if (this.terminations.length < MAX_TERMINATION_RECORDS)
      this.terminations.push({ atMs: round(at - this.origin), watcher, population, reason });
  }

  sequence(key: string): string[] {
    let s = this.sequences.get(key);
    if (s === undefined) this.sequences.set(key, (s = []));
    return s;
  }
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
