/**
 * The report of a `watchcache simulate` run: every scenario with its
 * variants' results (what --json writes, what the table and the HTML report
 * are drawn from), and the headline figures of the KEP's four measurements
 * per result.
 */
import { describeDist } from './distribution.js';
import type { SimResult } from './result.js';
import type { Scenario } from './scenario.js';
import type { Sweep } from './variant.js';

export interface ScenarioRun {
  name: string;
  description: string;
  durationS: number;
  drainS: number;
  seed: number;
  writeRates: string;
  watchers: { name: string; count: number; selector: string; readRate: string; episodes: number }[];
  results: SimResult[];
}

export interface SimReport {
  tool: 'watchcache simulate';
  format: 1;
  command: string;
  sweep: Sweep | null;
  runs: ScenarioRun[];
}

export function scenarioRun(s: Scenario, results: SimResult[]): ScenarioRun {
  return {
    name: s.name,
    description: s.description,
    durationS: s.durationS,
    drainS: s.drainS,
    seed: s.seed,
    writeRates: s.writes.rate.map((r) => `${r.perSecond}/s from ${r.atS}s`).join(', '),
    watchers: s.watchers.map((p) => ({
      name: p.name,
      count: p.count,
      selector: p.selector.kind,
      readRate: describeDist(p.readRate),
      episodes: p.stalls.length,
    })),
    results,
  };
}

/** The figures a table row and the HTML summary show for one result. */
export interface Headline {
  variant: string;
  /** (1) healthy-watcher delivery latency, ms. */
  healthyP99: number;
  healthyMax: number;
  slowP99: number;
  /** (2) JSON encodings per written event, and deliveries sharing each encoding. */
  encPerEvent: number;
  deliveriesPerEncoding: number;
  /** (3) stall end -> resync (alpha/beta) and -> backlog drained (any mode), seconds. */
  resyncP50: number | null;
  resyncP99: number | null;
  recoveryP50: number | null;
  recoveryP99: number | null;
  episodes: number;
  /** (4) passes with room until first served: worst watcher, worst next-to-laggards watcher; worst gap between services. */
  firstServedMax: number | null;
  firstServedNextToLaggardsMax: number | null;
  serviceGapMax: number | null;
  /** Main-thread catch-up: modelled share of virtual time, real share of the run's wall time. */
  mainShareModelled: number;
  mainShareReal: number;
  forceCloses: number;
  expired410: number;
  relists: number;
  eventsInPerS: number;
  pushesOutPerS: number;
  runS: number;
}

export function headline(r: SimResult): Headline {
  const ep = r.episodes;
  const f = r.fairness;
  const by = r.terminations.byReason;
  return {
    variant: r.variant.label,
    healthyP99: r.latency.healthy.p99,
    healthyMax: r.latency.healthy.max,
    slowP99: r.latency.slow.p99,
    encPerEvent: r.encodings.perEvent,
    deliveriesPerEncoding: r.encodings.deliveriesPerEncoding,
    resyncP50: ep.resync.count === 0 ? null : ep.resync.p50 / 1000,
    resyncP99: ep.resync.count === 0 ? null : ep.resync.p99 / 1000,
    recoveryP50: ep.recovery.count === 0 ? null : ep.recovery.p50 / 1000,
    recoveryP99: ep.recovery.count === 0 ? null : ep.recovery.p99 / 1000,
    episodes: ep.records.length,
    firstServedMax: f === null || f.firstService.length === 0 ? null : f.maxFirstService,
    firstServedNextToLaggardsMax:
      f === null || f.firstServiceNextToLaggards.length === 0 ? null : f.maxFirstServiceNextToLaggards,
    serviceGapMax: f === null || f.serviceGap.length === 0 ? null : f.maxServiceGap,
    mainShareModelled: r.catchup.modelledShare,
    mainShareReal: r.real.catchupShare,
    forceCloses: by.unresponsive ?? 0,
    expired410: (by.resource_expired ?? 0) + (by.resource_expired_initial ?? 0) + (by.start_expired ?? 0),
    relists: r.relists,
    eventsInPerS: r.writes.perSecond,
    pushesOutPerS: r.deliveries.perSecond,
    runS: r.real.runMs / 1000,
  };
}
