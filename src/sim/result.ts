/**
 * The result of one simulated run (one scenario, one variant): plain JSON,
 * so it crosses worker threads and lands in --json files as is. Everything
 * outside `real` is a function of the scenario, its seed and the variant
 * (deterministic); `real` holds wall-clock figures of this machine.
 */
import type { Mode } from '../cache/cache-options.js';
import type { PassOptions } from '../sync/pass-options.js';
import type { Percentiles } from './histogram.js';

/** One algorithm / parameter variant run on the same input. */
export interface Variant {
  /** Short label for tables and plots ("alpha", "beta scanBudget=500"). */
  label: string;
  mode: Mode;
  pass?: Partial<PassOptions>;
  /** Overrides engine.channelCapacity. */
  channelCapacity?: number;
  /** Overrides engine.history.upperBound. */
  historyUpperBound?: number;
  /** Multiplies every write rate of the scenario. */
  writeScale?: number;
}

export interface LatencySummary extends Percentiles {
  /** Watchers in this class. */
  watchers: number;
  /** CDF points [ms, fraction] for plots. */
  cdf: [number, number][];
  /** Distribution over watchers of each watcher's own worst latency (ms). */
  perWatcherMax: { p50: number; p99: number; max: number };
}

export type TerminationReason =
  | 'unresponsive' // off mode force-close
  | 'resource_expired' // in-stream 410 after reaching the live loop
  | 'resource_expired_initial' // in-stream 410 before it
  | 'start_expired' // a (re)start from an RV older than the history: 410, re-list
  | 'timeout' // request timeout
  | 'relist' // the cache re-listed its store
  | 'other';

export interface TerminationRecord {
  atMs: number;
  watcher: number;
  population: string;
  reason: TerminationReason;
}

export interface EpisodeRecord {
  watcher: number;
  population: string;
  /** 'halt': a dispatcher halt, recorded for every client (the end is when the cache ingests again). */
  kind: 'stall' | 'disconnect' | 'halt';
  startMs: number;
  endMs: number;
  /** The reader's pace (events/s; null = unlimited). */
  readRate: number | null;
  /** The write rate when the episode ended (events/s). */
  writeRate: number;
  /** The watch went unsynced during the episode (alpha/beta). */
  unsynced: boolean;
  /** Stall end -> the engine resynced the watcher (alpha/beta, when it went unsynced). */
  resyncMs: number | null;
  /** Stall end -> the client drained its backlog on a synced (or off-mode) watch: caught up, any mode. */
  recoveryMs: number | null;
  /** Terminations the client suffered between the episode start and its recovery. */
  terminations: number;
  outcome: 'recovered' | 'terminated' | 'unfinished';
}

export interface FairnessSummary {
  passes: number;
  /** [passes, watchers]: passes with room until a newly unsynced watcher was first served. */
  firstService: [number, number][];
  /** The same, only for watchers that stalled while long-standing laggards were unsynced. */
  firstServiceNextToLaggards: [number, number][];
  /** [passes, count]: passes with room between two services of a watcher that stayed unsynced. */
  serviceGap: [number, number][];
  maxFirstService: number;
  maxFirstServiceNextToLaggards: number;
  maxServiceGap: number;
  /** Unsynced watchers that had room in some pass but were never served before they ended. */
  neverServed: number;
}

interface CatchupSummary {
  passes: number;
  opens: number;
  scanned: number;
  pushes: number;
  /** Virtual ms charged to the main thread for passes (the cost model), and its share of the run. */
  modelledMs: number;
  modelledShare: number;
  /** Modelled pass time spent off the main thread (beta's sync worker). */
  offThreadModelledMs: number;
}

export interface EngineCounters {
  stalls: number;
  catchupRounds: number;
  deferredEvents: number;
  skippedEvents: number;
  unresponsive: number;
  resourceExpired: number;
  resourceExpiredInitial: number;
  eventsDispatched: number;
  peakUnsynced: number;
  peakHeldByHalts: number;
}

export interface Timeline {
  /** Sample times (virtual s). */
  tS: number[];
  unsynced: number[];
  writes: number[];
  deliveries: number[];
  terminations: number[];
}

export interface SimResult {
  scenario: string;
  variant: Variant;
  virtualS: number;
  writes: { total: number; perSecond: number };
  deliveries: { total: number; perSecond: number };
  /** apiserver_watch_cache_event_encodings_total{format="json"} per event written (consumers encode each event they send). */
  encodings: { json: number; perEvent: number; deliveriesPerEncoding: number };
  latency: {
    healthy: LatencySummary;
    slow: LatencySummary;
    byPopulation: Record<string, { healthy: Percentiles; slow: Percentiles }>;
  };
  terminations: { total: number; byReason: Record<string, number>; events: TerminationRecord[]; truncated: boolean };
  reconnects: number;
  relists: number;
  episodes: { records: EpisodeRecord[]; byOutcome: Record<string, number>; resync: Percentiles; recovery: Percentiles };
  fairness: FairnessSummary | null;
  catchup: CatchupSummary;
  engine: EngineCounters;
  timeline: Timeline;
  /** Wall-clock figures of this machine (not deterministic). */
  real: {
    runMs: number;
    /** Real ms of catch-up work on the main thread (alpha: scheduler.workMs; beta: adopt, hand-back, worker messages). */
    catchupWorkMs: number;
    /** catchupWorkMs / runMs. */
    catchupShare: number;
    /** Real ms of passes off the main thread (beta's worker, in-process here). */
    offThreadWorkMs: number;
    /** Real ms the main thread spent mirroring events into the shared ring (beta). */
    ringMirrorMs: number;
  };
  /** Per-watcher delivered sequences (only when asked for, e.g. sim-vs-real). */
  sequences?: Record<string, string[]>;
}
