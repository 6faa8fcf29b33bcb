/**
 * Turns what a run recorded (Recorder, PassObserver, engine counters) into
 * the plain-JSON SimResult: latency percentiles and CDFs per class, episode
 * outcomes and resync/recovery distributions, fairness, catch-up cost.
 */
import { LatencyHistogram, type Percentiles } from './histogram.js';
import type { PassObserver } from './pass-observer.js';
import { MAX_TERMINATION_RECORDS, round, type Recorder } from './recorder.js';
import type { EngineCounters, LatencySummary, SimResult, Timeline, Variant } from './result.js';
import type { Scenario } from './scenario.js';

export interface RunRecord {
  scenario: Scenario;
  variant: Variant;
  recorder: Recorder;
  observer: PassObserver | undefined;
  counters: EngineCounters;
  jsonEncodings: number;
  writes: number;
  virtualS: number;
  timeline: Timeline;
  real: { runMs: number; catchupWorkMs: number; offThreadWorkMs: number; ringMirrorMs: number };
}

export function summarize(r: RunRecord): SimResult {
  const rec = r.recorder;
  const episodes = rec.episodes;
  const resync = new LatencyHistogram();
  const recovery = new LatencyHistogram();
  const byOutcome: Record<string, number> = {};
  for (const e of episodes) {
    byOutcome[e.outcome] = (byOutcome[e.outcome] ?? 0) + 1;
    if (e.resyncMs !== null) resync.record(e.resyncMs);
    if (e.recoveryMs !== null) recovery.record(e.recoveryMs);
  }
  const byPopulation: SimResult['latency']['byPopulation'] = {};
  for (const [name, h] of rec.byPopulation)
    byPopulation[name] = { healthy: pct(h.healthy.percentiles()), slow: pct(h.slow.percentiles()) };
  const o = r.observer;
  const modelledMs = o?.modelledMs ?? 0;
  const result: SimResult = {
    scenario: r.scenario.name,
    variant: r.variant,
    virtualS: r.virtualS,
    writes: { total: r.writes, perSecond: round(r.writes / r.scenario.durationS, 1) },
    deliveries: { total: rec.deliveries, perSecond: round(rec.deliveries / r.virtualS, 1) },
    encodings: {
      json: r.jsonEncodings,
      perEvent: r.writes === 0 ? 0 : round(r.jsonEncodings / r.writes, 4),
      deliveriesPerEncoding: r.jsonEncodings === 0 ? 0 : round(rec.deliveries / r.jsonEncodings, 2),
    },
    latency: {
      healthy: latencySummary(rec.healthy, rec.worst.healthy),
      slow: latencySummary(rec.slow, rec.worst.slow),
      byPopulation,
    },
    terminations: {
      total: rec.terminationCount,
      byReason: sortKeys(rec.byReason),
      events: rec.terminations,
      truncated: rec.terminationCount > MAX_TERMINATION_RECORDS,
    },
    reconnects: rec.reconnects,
    relists: rec.relists,
    episodes: {
      records: episodes,
      byOutcome: sortKeys(byOutcome),
      resync: pct(resync.percentiles()),
      recovery: pct(recovery.percentiles()),
    },
    fairness: o === undefined ? null : o.fairness(),
    catchup: {
      passes: o?.passes ?? 0,
      opens: o?.opens ?? 0,
      scanned: o?.scanned ?? 0,
      pushes: o?.pushes ?? 0,
      modelledMs: round(modelledMs),
      modelledShare: round(modelledMs / (r.virtualS * 1000), 5),
      offThreadModelledMs: round(o?.offThreadModelledMs ?? 0),
    },
    engine: r.counters,
    timeline: r.timeline,
    real: {
      runMs: round(r.real.runMs, 1),
      catchupWorkMs: round(r.real.catchupWorkMs, 2),
      catchupShare: r.real.runMs === 0 ? 0 : round(r.real.catchupWorkMs / r.real.runMs, 5),
      offThreadWorkMs: round(r.real.offThreadWorkMs, 2),
      ringMirrorMs: round(r.real.ringMirrorMs, 2),
    },
  };
  if (rec.sequences.size > 0) result.sequences = Object.fromEntries(rec.sequences);
  return result;
}

function latencySummary(h: LatencyHistogram, worst: number[]): LatencySummary {
  const sorted = worst.slice().sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return {
    ...pct(h.percentiles()),
    watchers: worst.length,
    cdf: h.cdf().map(([v, f]) => [round(v, 4), round(f, 5)]),
    perWatcherMax: { p50: round(at(0.5)), p99: round(at(0.99)), max: round(at(1)) },
  };
}

function pct(p: Percentiles): Percentiles {
  return {
    count: p.count,
    mean: round(p.mean),
    p50: round(p.p50),
    p99: round(p.p99),
    p999: round(p.p999),
    max: round(p.max),
  };
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort((a, b) => a[0].localeCompare(b[0])));
}
