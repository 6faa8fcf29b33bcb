/**
 * Throughput (issue 8, part 2): max sustained ingest of ~2 KiB Kubernetes-like
 * pods while every consumer keeps up, in two shapes:
 *
 * - trigger-1k: 1,000 watchers selected through the trigger index (indexer
 *   spec.nodeName; watcher i has fieldSelector spec.nodeName=node-i), pods
 *   spread over 1,000 nodes: each event reaches one watcher;
 * - all-100k: 100,000 watchers selecting everything: each event reaches all.
 *
 * The writer issues a batch of updates per event-loop turn (closed loop: the
 * next batch after the consumers drained the last one), for a bounded time.
 * Main-thread time per event is split into encode (the one jsonLine per
 * event), append (history + object state), ring (beta: msgpack + shared ring),
 * fan-out (live dispatch incl. waking consumers) and other (store, reflector,
 * consumer loops, GC): total is the event loop's busy time per event.
 *
 *   node dist/native-bench/throughput.js [--quick|--full] [--modes off,alpha,beta] [--json FILE]
 */
import { setImmediate as immediate } from 'node:timers/promises';
import { MemoryStore, WatchCache, type KubeObject, type Mode, type Watch, type WatchOptions } from '../src/index.js';
import { PhaseProbe } from './lib/engine-probe.js';
import { finite } from './lib/hist.js';
import { isMain, runIsolated, serveChild } from './lib/isolate.js';
import { fullGc } from './lib/memory.js';
import { modeLabel } from './lib/modes.js';
import { makePod, podBytes, podUpdate } from './lib/pod.js';
import { printTable } from './lib/table.js';
import type { ThroughputRow, ThroughputScenario } from './lib/types.js';
import { THROUGHPUT_HEADERS, throughputCells } from './report/tables.js';

export interface ThroughputConfig {
  mode: Mode;
  scenario: ThroughputScenario;
  watchers: number;
  durationS: number;
}

class Consumer {
  received = 0;
  constructor(
    readonly w: Watch,
    private readonly cache: WatchCache,
  ) {}
  async run(): Promise<void> {
    const metrics = this.cache.encodings;
    for await (const ev of this.w) {
      ev.jsonLine(metrics);
      this.received++;
    }
  }
}

export async function runThroughputOnce(c: ThroughputConfig): Promise<ThroughputRow> {
  const keepAlive = setInterval(() => {}, 1000);
  const trigger = c.scenario === 'trigger-1k';
  const nodes = trigger ? c.watchers : 100;
  const store = new MemoryStore();
  const cache = new WatchCache({
    store,
    mode: c.mode,
    ...(trigger
      ? { indexers: { 'spec.nodeName': (o: KubeObject) => (o.spec as { nodeName?: string } | undefined)?.nodeName } }
      : { channelCapacity: 100 }),
  });
  await cache.start();
  const podCount = trigger ? 5 * nodes : 1000;
  const pods: KubeObject[] = [];
  for (let i = 0; i < podCount; i++) pods.push(await store.create(makePod(i, { nodes })));
  const consumers: Consumer[] = [];
  const rv = String(cache.resourceVersion);
  for (let i = 0; i < c.watchers; i++) {
    const opts: WatchOptions = trigger
      ? { resourceVersion: rv, fieldSelector: `spec.nodeName=node-${i}` }
      : { resourceVersion: rv };
    consumers.push(new Consumer(cache.watch(opts), cache));
  }
  const loops = consumers.map((x) => x.run());
  const probe = new PhaseProbe(cache);
  // Batch per turn: well under the channel size per watcher (10 with the trigger index, else 100).
  const batch = trigger ? 200 : 20;
  let seq = 0;
  const writeBatch = (): void => {
    const t = performance.now();
    for (let i = 0; i < batch; i++, seq++) void store.update(podUpdate(pods[seq % podCount]!, seq, t));
  };
  const warmupEnd = performance.now() + Math.min(1000, c.durationS * 300);
  while (performance.now() < warmupEnd) {
    writeBatch();
    await immediate();
  }
  fullGc();
  await immediate();
  const received0 = consumers.reduce((a, x) => a + x.received, 0);
  const stalls0 = await cache.metricValue('apiserver_watch_cache_watcher_stalls_total');
  const closes0 = await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' });
  probe.reset();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const end = t0 + c.durationS * 1000;
  while (performance.now() < end) {
    writeBatch();
    await immediate();
  }
  await immediate();
  const wallMs = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const p = probe.totals();
  probe.close();
  const pushes = consumers.reduce((a, x) => a + x.received, 0) - received0;
  const stalls = (await cache.metricValue('apiserver_watch_cache_watcher_stalls_total')) - stalls0;
  const forceCloses =
    (await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' })) - closes0;
  for (const x of consumers) x.w.stop();
  await cache.stop();
  await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 2000))]);
  clearInterval(keepAlive);

  const events = p.events;
  const us = (ms: number): number => finite((ms * 1000) / events);
  const totalUs = us(elu.active);
  const encode = us(p.encodeMs);
  const append = us(p.appendMs);
  const ring = us(p.ringMs);
  const fanout = us(p.fanoutMs);
  return {
    mode: c.mode,
    modeLabel: modeLabel(c.mode),
    scenario: c.scenario,
    watchers: c.watchers,
    podBytes: podBytes(pods[0]!),
    events,
    wallS: wallMs / 1000,
    eventsPerSec: events / (wallMs / 1000),
    pushesPerSec: pushes / (wallMs / 1000),
    encodeUsPerEvent: encode,
    appendUsPerEvent: append,
    ringUsPerEvent: ring,
    fanoutUsPerEvent: fanout,
    otherUsPerEvent: Math.max(0, totalUs - encode - append - ring - fanout),
    totalUsPerEvent: totalUs,
    fanoutNsPerPush: finite((p.fanoutMs * 1e6) / pushes),
    stalls,
    forceCloses,
    splitAvailable: probe.available,
  };
}

export interface ThroughputSweepOptions {
  modes: Mode[];
  durationS: number;
  bigWatchers: number;
  log?: (line: string) => void;
}

/** Both scenarios for every mode, each in its own child process. */
export async function runThroughputSweep(o: ThroughputSweepOptions): Promise<ThroughputRow[]> {
  const url = new URL('./throughput.js', import.meta.url);
  const rows: ThroughputRow[] = [];
  const shapes: [ThroughputScenario, number][] = [
    ['trigger-1k', 1000],
    ['all-100k', o.bigWatchers],
  ];
  for (const [scenario, watchers] of shapes) {
    for (const mode of o.modes) {
      o.log?.(`throughput: ${scenario} (${watchers} watchers) mode=${mode} ...`);
      try {
        rows.push(
          await runIsolated<ThroughputConfig, ThroughputRow>(
            url,
            { mode, scenario, watchers, durationS: o.durationS },
            o.durationS * 1000 + 180_000,
          ),
        );
      } catch (err) {
        o.log?.(`throughput: ${scenario} mode=${mode} failed: ${(err as Error).message}`);
      }
    }
  }
  return rows;
}

if (!serveChild<ThroughputConfig, ThroughputRow>(runThroughputOnce) && isMain(import.meta.url)) {
  const { parseBenchArgs } = await import('./bench-args.js');
  const a = parseBenchArgs(process.argv.slice(2));
  const rows = await runThroughputSweep({ ...a.throughput, log: (l) => console.error(l) });
  printTable(
    'Throughput: max sustained ingest, main-thread time per event',
    THROUGHPUT_HEADERS,
    rows.map(throughputCells),
  );
  if (a.json !== undefined && process.argv.includes('--json'))
    (await import('node:fs')).writeFileSync(a.json, JSON.stringify(rows, null, 2));
}
