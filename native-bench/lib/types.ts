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
  resynced: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
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
  latencyStall: LatencySummary;
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
  scanned: number;
  scanRatePerS: number;
  scannedPerPassMs: number;
  passPushes: number;
  resync: ResyncSummary;
  memory: MemoryFigures;
  elu: number;
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
  throughput: ThroughputRow[];
  floor: FloorRow[];
  peers: PeerResults;
  /** The proxy suite (absent from reports written before it existed). */
  proxy?: ProxyRow[];
  ratios: RatioRow[];
}

/** One run of the proxy benchmark (proxy-bench.ts, proxy/proxy-run.ts). */
export interface ProxyRow {
  mode: Mode;
  modeLabel: string;
  proxies: number;
  clientsPerProxy: number;
  slowPerProxy: number;
  rate: number;
  durationS: number;
  blipAtS: number;
  blipS: number;
  pods: number;
  padBytes: number;
  slowReadRate: number;
  channelCapacity: number;
  writes: number;
  wallS: number;
  rootCpuPct: number;
  rootWatchesMax: number;
  rootWatchesEnd: number;
  rootForceCloses: number;
  root410s: number;
  rootDeliveriesPerS: number;
  leafDeliveriesPerS: number;
  latencyUncut: LatencySummary;
  latencyCut: LatencySummary;
  healthyReconnects: number;
  healthyRelists: number;
  healthyDeliveredFraction: number;
  proxyForceCloses: number;
  proxy410s: number;
  proxyStalls: number;
  proxyRelists: number;
  proxyReconnectsOk: number;
  proxyReconnectsFailed: number;
  slowReconnects: number;
  slowRelists: number;
}
