/**
 * Terminal tables of every section of the report (also reused verbatim in
 * the HTML report as preformatted text): KEP runs, throughput split, the
 * floor, peers, and engine-vs-floor ratios.
 */
import { fmt, printTable, renderTable, type Cell } from '../lib/table.js';
import { deliveriesToResyncAll, VERDICT_HEADERS, verdictCells, verdicts } from './verdict.js';
import type {
  BenchReport,
  CatchupRow,
  EtcdPeerRow,
  FloorRow,
  HttpPeerRow,
  KepRow,
  LiveDispatchRow,
  NaiveRow,
  ProxyRow,
  RatioRow,
  ThroughputRow,
} from '../lib/types.js';

const KEP_HEADERS = [
  'variant',
  'N slow',
  'mode',
  'ev/s in',
  'deliv/s out',
  'stall p50 µs',
  'stall p99 µs',
  'stall p999 µs',
  'stalled p99 µs (channels full)',
  'resume p50 µs',
  'resume p99 µs',
  'max µs',
  'writer lag p99 µs',
  'force-closes',
  'healthy closed',
  '410s',
  'reconnects',
  'json enc/ev',
  'msgpack enc/ev',
];

function kepCells(r: KepRow): Cell[] {
  return [
    r.variant,
    r.slow,
    r.modeLabel,
    r.eventsPerSecIn,
    r.pushesPerSecOut,
    r.latencyStall.p50Us,
    r.latencyStall.p99Us,
    r.latencyStall.p999Us,
    r.latencyStalled.p99Us,
    r.latencyResume.p50Us,
    r.latencyResume.p99Us,
    r.latency.maxUs,
    r.writerLag.p99Us,
    r.forceCloses,
    r.healthyEnded,
    r.expired410,
    r.reconnects,
    r.encodingsPerEvent,
    r.msgpackPerEvent,
  ];
}

const KEP_CATCHUP_HEADERS = [
  'variant',
  'N slow',
  'mode',
  'stalls',
  'passes',
  'catch-up % main',
  'worker %',
  'worker busy % (stall, 2nd half)',
  'scan ev/s',
  'pass pushes',
  'resynced',
  'caught up by reconnect',
  'resync p50 ms',
  'resync p99 ms',
  'resync max ms',
  'resume: read / needed',
  'behind @end: min / p50 RVs',
  'longest wait behind: p50 / max ms',
  'ELU %',
  'RSS base MiB',
  'RSS peak MiB',
  'heap B/watcher',
  'RSS B/watcher',
  'heap B/slow @end',
];

function kepCatchupCells(r: KepRow): Cell[] {
  return [
    r.variant,
    r.slow,
    r.modeLabel,
    r.stalls,
    r.passes,
    r.catchupShare * 100,
    r.workerShare * 100,
    r.workerBusyStall * 100,
    r.scanRatePerS,
    r.passPushes,
    `${r.resync.resynced}/${r.resync.slow}`,
    r.resync.caughtUpAfterReconnect,
    r.resync.p50Ms,
    r.resync.p99Ms,
    r.resync.maxMs,
    `${fmt(r.resync.readInResume)} / ${fmt(r.resync.neededInResume)}`,
    `${r.resync.behindAtEndMin} / ${r.resync.behindAtEndP50}`,
    `${fmt(r.resync.longestWaitP50Ms)} / ${fmt(r.resync.longestWaitMaxMs)}`,
    r.elu * 100,
    r.memory.rssBaseMiB,
    r.memory.rssPeakMiB,
    r.memory.heapPerWatcherB,
    r.memory.rssPerWatcherB,
    r.memory.heapPerSlowWatcherEndB,
  ];
}

export function printKepTable(rows: KepRow[]): void {
  printTable(
    'KEP benchmark: healthy watcher next to N slow ones (write -> receipt latency)',
    KEP_HEADERS,
    rows.map(kepCells),
  );
  printTable('KEP benchmark: catch-up, resync and memory', KEP_CATCHUP_HEADERS, rows.map(kepCatchupCells));
}

const CATCHUP_HEADERS = [
  'W',
  'mode',
  'runs (the median shown)',
  'events behind',
  'resynced',
  'all resynced s',
  'resync p50 s',
  '410s',
  'timed out',
  'warm: all resynced s',
  'warm: 410s',
  'window s',
  'deliv/s',
  'deliv/s to resync all in the bound',
  'pass pushes/s',
  'one-thread bound pushes/s',
  'pushes / bound',
  'healthy p99 µs without',
  'healthy p99 µs during',
  'during / without',
  'ELU %',
];

function catchupCells(r: CatchupRow): Cell[] {
  return [
    r.watchers,
    r.modeLabel,
    r.runs === undefined ? 1 : r.runs.cold.length,
    r.historyEvents,
    `${r.resynced}/${r.watchers}`,
    r.resynced === r.watchers ? r.allResyncedMs / 1000 : '-',
    r.resyncP50Ms / 1000,
    r.expired410,
    r.timedOut ? `yes (${r.maxS} s)` : 'no',
    r.warm.resynced === r.watchers ? r.warm.allResyncedMs / 1000 : `${r.warm.resynced}/${r.watchers}`,
    r.warm.expired410,
    r.windowS,
    r.deliveriesPerS,
    deliveriesToResyncAll(r),
    r.workerPushesPerS,
    r.pushBoundPerS,
    r.workerShareOfBound,
    r.healthyBaseline.p99Us,
    r.healthyDuring.p99Us,
    r.healthyP99Ratio,
    r.elu * 100,
  ];
}

export function printCatchupTable(rows: CatchupRow[]): void {
  printTable(CATCHUP_TITLE, CATCHUP_HEADERS, rows.map(catchupCells));
}

const CATCHUP_TITLE =
  'Catch-up: W watchers open 50,000 events behind (2 KiB pods), writer at the KEP rate, one healthy watcher';

export const THROUGHPUT_HEADERS = [
  'scenario',
  'watchers',
  'mode',
  'events/s',
  'pushes/s',
  'encode µs/ev',
  'append µs/ev',
  'ring µs/ev',
  'fan-out µs/ev',
  'other µs/ev',
  'total µs/ev',
  'fan-out ns/push',
  'stalls',
  'force-closes',
];

export function throughputCells(r: ThroughputRow): Cell[] {
  return [
    r.scenario,
    r.watchers,
    r.modeLabel,
    r.eventsPerSec,
    r.pushesPerSec,
    r.encodeUsPerEvent,
    r.appendUsPerEvent,
    r.ringUsPerEvent,
    r.fanoutUsPerEvent,
    r.otherUsPerEvent,
    r.totalUsPerEvent,
    r.fanoutNsPerPush,
    r.stalls,
    r.forceCloses,
  ];
}

export const FLOOR_HEADERS = ['group', 'primitive', 'unit', 'mean', 'p50', 'p99', 'ops/s'];

export function floorCells(r: FloorRow): Cell[] {
  return [r.group, r.name, r.unit, r.mean, r.p50, r.p99, r.opsPerSec];
}

export const LIVE_DISPATCH_HEADERS = ['mode', 'watchers', 'events', 'ns / watcher (median)', 'min', 'µs / event'];

export function liveDispatchCells(r: LiveDispatchRow): Cell[] {
  return [r.mode, r.watchers, r.events, r.nsPerWatcher, r.minNsPerWatcher, r.usPerEvent];
}

const NAIVE_HEADERS = [
  'system',
  'N stalled',
  'rate',
  'events',
  'p50 µs',
  'p99 µs',
  'heap growth MiB/s',
  'heap end MiB',
  'B/stalled watcher',
  'capped',
];

function naiveCells(r: NaiveRow): Cell[] {
  return [
    r.system,
    r.slow,
    r.rate,
    r.eventsWritten,
    r.latency.p50Us,
    r.latency.p99Us,
    r.heapGrowthMiBPerS,
    r.heapEndMiB,
    r.bytesPerSlowWatcherEnd,
    r.capped ? 'yes' : 'no',
  ];
}

const ETCD_HEADERS = [
  'system',
  'W',
  'rate',
  'writes',
  'delivered',
  'fraction',
  'drain ms',
  'deliv/s',
  'p50 ms',
  'p99 ms',
  'max ms',
  'node CPU %',
  'etcd CPU %',
  'etcd RSS MiB',
];

function etcdCells(r: EtcdPeerRow): Cell[] {
  return [
    r.system,
    r.watchers,
    r.rate,
    r.writes,
    r.delivered,
    r.deliveredFraction,
    r.drainMs,
    r.deliveredPerSec,
    r.latency.p50Us / 1000,
    r.latency.p99Us / 1000,
    r.latency.maxUs / 1000,
    r.nodeCpuPct,
    r.etcdCpuPct,
    r.etcdRssMiB,
  ];
}

const HTTP_HEADERS = [
  'system',
  'reading clients',
  'stalled clients',
  'rate',
  'writes',
  'delivered',
  'fraction',
  'p50 ms',
  'p99 ms',
  'max ms',
  'server CPU %',
  'stalls',
  'force-closes',
  '410s',
  'streams ended',
];

function httpCells(r: HttpPeerRow): Cell[] {
  return [
    r.system,
    r.clients,
    r.stalledClients,
    r.rate,
    r.writes,
    r.delivered,
    r.deliveredFraction,
    r.latency.p50Us / 1000,
    r.latency.p99Us / 1000,
    r.latency.maxUs / 1000,
    r.serverCpuPct,
    r.stalls,
    r.forceCloses,
    r.expired410,
    r.endedStreams,
  ];
}

const PROXY_HEADERS = [
  'mode',
  'proxies',
  'clients',
  'writes',
  'root watches max',
  'root CPU %',
  'root deliv/s',
  'leaf deliv/s',
  'uncut p50 ms',
  'uncut p99 ms',
  'cut p50 ms',
  'cut p99 ms',
  'cut max ms',
  'healthy fraction',
  'root force-closes',
  'root 410s',
  'proxy reconnects',
  'proxy re-lists',
  'leaf force-closes',
  'leaf 410s',
  'leaf stalls',
  'healthy re-watches',
  'healthy re-lists',
  'slow re-watches',
  'slow re-lists',
];

function proxyCells(r: ProxyRow): Cell[] {
  return [
    r.modeLabel,
    r.proxies,
    `${r.clientsPerProxy} (${r.slowPerProxy} slow)`,
    r.writes,
    r.rootWatchesMax,
    r.rootCpuPct,
    r.rootDeliveriesPerS,
    r.leafDeliveriesPerS,
    r.latencyUncut.p50Us / 1000,
    r.latencyUncut.p99Us / 1000,
    r.latencyCut.p50Us / 1000,
    r.latencyCut.p99Us / 1000,
    r.latencyCut.maxUs / 1000,
    r.healthyDeliveredFraction,
    r.rootForceCloses,
    r.root410s,
    r.proxyReconnectsOk,
    r.proxyRelists,
    r.proxyForceCloses,
    r.proxy410s,
    r.proxyStalls,
    r.healthyReconnects,
    r.healthyRelists,
    r.slowReconnects,
    r.slowRelists,
  ];
}

const RATIO_HEADERS = ['engine figure', 'engine', 'unit', 'floor (bounded by)', 'floor', 'engine / floor', 'note'];

function ratioCells(r: RatioRow): Cell[] {
  return [r.figure, r.engine, r.engineUnit, r.floorName, r.floor, `${fmt(r.ratio)}x`, r.note];
}

/** Every section as [title, markdown table] pairs. */
export function sections(report: BenchReport): [string, string][] {
  const out: [string, string][] = [];
  const add = (title: string, headers: string[], rows: Cell[][]): void => {
    if (rows.length > 0) out.push([title, renderTable(headers, rows)]);
  };
  add(
    'Verdict: which mode wins each KEP measurement in this run (lower latency/time, more resynced)',
    VERDICT_HEADERS,
    verdicts(report).map(verdictCells),
  );
  add(
    'KEP benchmark: healthy watcher next to N slow watchers (write -> receipt latency, closes, encodings)',
    KEP_HEADERS,
    report.kep.map(kepCells),
  );
  add('KEP benchmark: catch-up, resync and memory', KEP_CATCHUP_HEADERS, report.kep.map(kepCatchupCells));
  add(CATCHUP_TITLE, CATCHUP_HEADERS, report.catchup.map(catchupCells));
  add(
    'Throughput: max sustained ingest of 2 KiB pods, main-thread time per event',
    THROUGHPUT_HEADERS,
    report.throughput.map(throughputCells),
  );
  add('Floor: primitives on this machine (tinybench)', FLOOR_HEADERS, report.floor.map(floorCells));
  add(
    'Live dispatch while the channels fill: one event to W match-all watchers (engine fan-out timing)',
    LIVE_DISPATCH_HEADERS,
    (report.liveDispatch ?? []).map(liveDispatchCells),
  );
  add('Engine figures next to their floor', RATIO_HEADERS, report.ratios.map(ratioCells));
  add(
    'Peer (a): naive fan-out (per-watcher unbounded arrays) vs the engine, stalled watchers',
    NAIVE_HEADERS,
    report.peers.naive.map(naiveCells),
  );
  add(
    'Peer (b): watchers directly on etcd vs the engine fronting the same etcd',
    ETCD_HEADERS,
    report.peers.etcd.map(etcdCells),
  );
  add('Peer (c): HTTP clients watching `watchcache serve`', HTTP_HEADERS, report.peers.http.map(httpCells));
  add(
    'Caching proxy fleet: P proxies in front of one root, a blip cuts half of their upstream links',
    PROXY_HEADERS,
    (report.proxy ?? []).map(proxyCells),
  );
  return out;
}

export function printReport(report: BenchReport): void {
  for (const [title, table] of sections(report)) console.log(`\n### ${title}\n\n${table}`);
  if (report.peers.etcdSkipped !== '') console.log(`\npeer (b) etcd: ${report.peers.etcdSkipped}`);
  if (report.peers.httpSkipped !== '') console.log(`\npeer (c) http: ${report.peers.httpSkipped}`);
  for (const n of report.meta.notes) console.log(`note: ${n}`);
}
