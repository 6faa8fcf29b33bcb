/**
 * Result shapes of the benchmark suite: what each bench returns, what the
 * JSON report holds (bench-results/latest.json) and what the HTML report
 * plots. Every number is finite; a figure that does not apply is 0 with a
 * count of 0 next to it (never NaN, never null).
 */
import type { Mode } from '../../src/index.js';

/** Percentiles of a latency distribution, in microseconds. */
export interface LatencySummary {
  count: number;
  meanUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  p999Us: number;
  maxUs: number;
}

/** How a slow watcher is slow during the stall phase. */
export type SlowVariant = 'stalled' | 'rate';

/** Time for slow watchers to resync after they resume reading (ms from the resume). */
interface ResyncSummary {
  slow: number;
  /** Resynced on the stream they had at the stall (a reconnect is not a resync). */
  resynced: number;
  /** Read the live stream again only on a re-opened watch (off's force-close loop, a re-list after a 410). */
  caughtUpAfterReconnect: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /**
   * Events the slow watchers read during the resume phase, against what every one of them had to read
   * to reach the writer's RV at the end of the run (sum over slow watchers of end RV − RV it stood at
   * when the resume began): below 1, nobody could have resynced every watcher in the phase.
   */
  readInResume: number;
  neededInResume: number;
  /** How far behind the end RV the slow watchers' streams stood at the end (RVs): the closest and the median. */
  behindAtEndMin: number;
  behindAtEndP50: number;
  /**
   * KEP measurement 4 (no starvation): per slow watcher, the longest it went without an event while
   * behind in the resume phase (SlowClient.longestWaitInResumeMs); the median and the worst watcher's.
   */
  longestWaitP50Ms: number;
  longestWaitMaxMs: number;
}

interface MemoryFigures {
  rssBaseMiB: number;
  rssPeakMiB: number;
  /** Heap growth per registered watcher right after registration (after a full GC). */
  heapPerWatcherB: number;
  /** RSS growth per registered watcher right after registration. */
  rssPerWatcherB: number;
  /** Heap retained per slow watcher at the end of the run, channels full (after a full GC). */
  heapPerSlowWatcherEndB: number;
}

/** One KEP benchmark run: one mode, one N, one variant. */
export interface KepRow {
  mode: Mode;
  modeLabel: string;
  variant: SlowVariant;
  slow: number;
  healthy: number;
  rate: number;
  slowReadRate: number;
  channelCapacity: number;
  stallS: number;
  resumeS: number;
  wallS: number;
  eventsWritten: number;
  eventsPerSecIn: number;
  pushes: number;
  pushesPerSecOut: number;
  latency: LatencySummary;
  /** Healthy delivery latency over the whole stall phase: the fill of the N slow channels included. */
  latencyStall: LatencySummary;
  /**
   * The stall phase's second half only: every slow channel full, N watchers stalled (the steady state).
   * The first half holds the fill: each of the first CAPACITY events is pushed live into all N channels,
   * which at N = 10,000 is ~0.4 ms per event in any mode, and with 100 of ~2,000 events that sets the
   * whole phase's p99.
   */
  latencyStalled: LatencySummary;
  latencyResume: LatencySummary;
  writerLag: LatencySummary;
  forceCloses: number;
  /** Times a healthy watcher's stream ended under it (off: force-closed too) and it reconnected. */
  healthyEnded: number;
  expired410: number;
  reconnects: number;
  stalls: number;
  jsonEncodings: number;
  /** JSON encodings per written event (the wire form; 1 = encode once). */
  encodingsPerEvent: number;
  /** msgpack encodings per written event (beta's ring form). */
  msgpackPerEvent: number;
  passes: number;
  /** Catch-up time on the main thread (alpha: passes; beta: adopt, hand-back, wake-ups). */
  passWorkMs: number;
  /** passWorkMs / run time. */
  catchupShare: number;
  /** Beta: pass time in the sync worker thread / run time (0 otherwise). */
  workerShare: number;
  /**
   * Beta: the sync worker thread's event-loop utilization during the stall
   * phase (every slow channel full, nobody reading them; issue 13 goal 6:
   * <= 2 % with nothing to move). 0 otherwise.
   */
  workerBusyStall: number;
  scanned: number;
  scanRatePerS: number;
  scannedPerPassMs: number;
  passPushes: number;
  resync: ResyncSummary;
  memory: MemoryFigures;
  elu: number;
  cpuMs: number;
}

/**
 * One `catchup` run (issue 13, deliverable 4): W watchers open at once
 * `historyEvents` behind, a writer at `rate`, one healthy watcher.
 */
export interface CatchupRow {
  mode: Mode;
  modeLabel: string;
  watchers: number;
  /** Events between the catch-up watchers' start RV and the RV current when they opened. */
  historyEvents: number;
  podBytes: number;
  rate: number;
  /** Time to write the history before the run (not part of any figure). */
  prefillS: number;
  /** Bound on the catch-up window, s. */
  maxS: number;
  /** The bound was reached before every watcher resynced or got its 410. */
  timedOut: boolean;
  /** Open -> every watcher resynced (or got a 410), or the bound. */
  windowS: number;
  resynced: number;
  /** 410s counted by the engine (resource_expired + resource_expired_initial) in the window. */
  expired410: number;
  /** Catch-up clients that read a 410. */
  clientsExpired: number;
  /** Open -> the last watcher resynced, when every one did (0 otherwise: see `resynced`). */
  allResyncedMs: number;
  resyncP50Ms: number;
  resyncMaxMs: number;
  /** Events the catch-up watchers received in the window. */
  delivered: number;
  deliveriesPerS: number;
  /** Events pushed by sync passes (deferred_events_total) in the window: beta's worker pushes, alpha's main-thread passes. */
  workerPushes: number;
  workerPushesPerS: number;
  /** One thread pushing one reference into W channels, pushes/s (catchup/push-bound.ts, same process). */
  pushBoundPerS: number;
  /** workerPushesPerS / pushBoundPerS. */
  workerShareOfBound: number;
  /** Healthy watcher, write -> receipt, in the window right before the catch-up (same writer). */
  healthyBaseline: LatencySummary;
  /** Healthy watcher, write -> receipt, during the catch-up window. */
  healthyDuring: LatencySummary;
  /** healthyDuring.p99 / healthyBaseline.p99 (goal: <= 2). */
  healthyP99Ratio: number;
  writerLagBaseline: LatencySummary;
  elu: number;
  cpuMs: number;
  /** The same catch-up once more, in the same process right after (the figures above are the first, cold one). */
  warm: CatchupRepeat;
  /**
   * With --catchup-repeat N > 1: every run's resync figures, in run order. The row is then the run whose cold
   * figure is the median, and `warm` the run whose warm figure is (catchup/median-run.ts). Absent: one run.
   */
  runs?: { cold: ResyncSample[]; warm: ResyncSample[] };
}

/** The figures a catch-up window resynced with (a run's cold window, or its `warm` repeat). */
export interface ResyncSample {
  resynced: number;
  allResyncedMs: number;
  expired410: number;
  timedOut: boolean;
}

/** A repeated catch-up's figures (CatchupRow.warm): as the row's own fields of the same names. */
interface CatchupRepeat {
  timedOut: boolean;
  windowS: number;
  resynced: number;
  expired410: number;
  allResyncedMs: number;
  delivered: number;
  workerPushes: number;
  cpuMs: number;
}

export type ThroughputScenario = 'trigger-1k' | 'all-100k';

/** Max sustained ingest with consumers keeping up, and where main-thread time goes. */
export interface ThroughputRow {
  mode: Mode;
  modeLabel: string;
  scenario: ThroughputScenario;
  watchers: number;
  podBytes: number;
  events: number;
  wallS: number;
  eventsPerSec: number;
  pushesPerSec: number;
  encodeUsPerEvent: number;
  appendUsPerEvent: number;
  /** Beta: mirroring the event into the shared ring (msgpack + append + publish). */
  ringUsPerEvent: number;
  fanoutUsPerEvent: number;
  otherUsPerEvent: number;
  totalUsPerEvent: number;
  fanoutNsPerPush: number;
  stalls: number;
  forceCloses: number;
  splitAvailable: boolean;
}

/** One tinybench (or socket) floor measurement. */
export interface FloorRow {
  name: string;
  group: string;
  unit: 'ns/op' | 'us/op';
  mean: number;
  p50: number;
  p99: number;
  opsPerSec: number;
  samples: number;
}

/** The live dispatch while the channels fill (live-dispatch.ts): one event to W match-all watchers. */
export interface LiveDispatchRow {
  mode: 'off' | 'alpha' | 'beta';
  watchers: number;
  /** Events per round (each one pushed into every channel). */
  events: number;
  rounds: number;
  /** Median round: the engine's fan-out time per watcher and event. */
  nsPerWatcher: number;
  /** The same per event (all W watchers). */
  usPerEvent: number;
  minNsPerWatcher: number;
}

/** An engine figure next to the floor that bounds it. */
export interface RatioRow {
  figure: string;
  engine: number;
  engineUnit: string;
  floorName: string;
  floor: number;
  ratio: number;
  note: string;
}

export interface MemorySample {
  tS: number;
  heapMiB: number;
  rssMiB: number;
}

/** Peer (a): per-watcher unbounded arrays versus the engine, same workload. */
export interface NaiveRow {
  system: string;
  slow: number;
  rate: number;
  durationS: number;
  eventsWritten: number;
  latency: LatencySummary;
  heapGrowthMiBPerS: number;
  heapEndMiB: number;
  bytesPerSlowWatcherEnd: number;
  capped: boolean;
  series: MemorySample[];
}

/** Peer (b): W watchers directly on etcd versus the engine fronting the same etcd. */
export interface EtcdPeerRow {
  system: string;
  watchers: number;
  rate: number;
  durationS: number;
  writes: number;
  expectedDeliveries: number;
  delivered: number;
  deliveredFraction: number;
  drainMs: number;
  deliveredPerSec: number;
  latency: LatencySummary;
  nodeCpuPct: number;
  etcdCpuPct: number;
  etcdRssMiB: number;
}

/** Peer (c): N HTTP clients watching `watchcache serve`. */
export interface HttpPeerRow {
  system: string;
  /** Clients that read everything. */
  clients: number;
  /** Clients that stop reading at once (TCP back-pressure into the server). */
  stalledClients: number;
  rate: number;
  durationS: number;
  writes: number;
  delivered: number;
  deliveredFraction: number;
  latency: LatencySummary;
  serverCpuPct: number;
  /** From the server's GET /metrics at the end of the run. */
  forceCloses: number;
  expired410: number;
  stalls: number;
  /** Watch streams (reading or stalled) that ended during the run. */
  endedStreams: number;
}

export interface PeerResults {
  naive: NaiveRow[];
  etcd: EtcdPeerRow[];
  etcdSkipped: string;
  http: HttpPeerRow[];
  httpSkipped: string;
}

interface BenchMeta {
  node: string;
  date: string;
  cpus: number;
  cpuModel: string;
  memGiB: number;
  /** 1-minute load average at the start and the end of the run (other work on the machine). */
  loadStart: number;
  loadEnd: number;
  argv: string[];
  quick: boolean;
  modes: Mode[];
  notes: string[];
  wallS: number;
}

/** The whole report (bench-results/latest.json). */
export interface BenchReport {
  meta: BenchMeta;
  kep: KepRow[];
  catchup: CatchupRow[];
  throughput: ThroughputRow[];
  floor: FloorRow[];
  /** The live dispatch while the channels fill (run with the floor; absent from reports written before it existed). */
  liveDispatch?: LiveDispatchRow[];
  peers: PeerResults;
  /** The proxy suite (absent from reports written before it existed). */
  proxy?: ProxyRow[];
  ratios: RatioRow[];
}

/** The setup of one proxy benchmark run (proxy/proxy-run.ts). */
export interface ProxyRunConfig {
  mode: 'off' | 'alpha' | 'beta';
  proxies: number;
  clientsPerProxy: number;
  slowPerProxy: number;
  rate: number;
  durationS: number;
  blipAtS: number;
  blipS: number;
  pods: number;
  /** Extra bytes per pod (an annotation), so that a slow client's socket backs up within seconds. */
  padBytes: number;
  slowReadRate: number;
  channelCapacity: number;
}

/** What one proxy benchmark run measured. */
export interface ProxyRunResult {
  writes: number;
  wallS: number;
  rootCpuPct: number;
  rootWatchesMax: number;
  rootWatchesEnd: number;
  rootForceCloses: number;
  root410s: number;
  /** Watch events the root sent to the proxies (counted in the relays), per second. */
  rootDeliveriesPerS: number;
  /** Lines (events) all leaf clients received, per second. */
  leafDeliveriesPerS: number;
  latencyUncut: LatencySummary;
  latencyCut: LatencySummary;
  /** Healthy clients' re-watches after a clean end (a force-close) and re-lists after a 410. */
  healthyReconnects: number;
  healthyRelists: number;
  healthyDeliveredFraction: number;
  proxyForceCloses: number;
  proxy410s: number;
  proxyStalls: number;
  /** Upstream lists beyond each proxy's first (re-lists of the proxies). */
  proxyRelists: number;
  proxyReconnectsOk: number;
  proxyReconnectsFailed: number;
  slowReconnects: number;
  slowRelists: number;
}

/** One run of the proxy benchmark (proxy-bench.ts, proxy/proxy-run.ts). */
export interface ProxyRow extends Omit<ProxyRunConfig, 'mode'>, ProxyRunResult {
  mode: Mode;
  modeLabel: string;
}
