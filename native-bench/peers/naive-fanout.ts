/**
 * Peer (a): a naive fan-out, the design the watch cache exists to avoid:
 * every watcher has an unbounded array, each event is appended to every
 * watcher's array (a shared reference, not a copy), and nothing is ever
 * refused, closed or caught up from a history. With stalled watchers its
 * memory grows with N x events. The same workload (MemoryStore, writer at a
 * fixed rate, one healthy watcher, N watchers that never read) runs against
 * the engine for comparison; heap is sampled every 250 ms. A run stops early
 * (`capped`) once the heap passes a bound, so it can never exhaust memory.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore, WatchCache, type KubeObject, type Mode, type StoreEvent } from '../../src/index.js';
import { FixedRateWriter, SendTimes } from '../kep/writer.js';
import { LatencyRecorder } from '../lib/hist.js';
import { isMain, runIsolated, serveChild } from '../lib/isolate.js';
import { fullGc, MemorySampler, snapshot, toMiB } from '../lib/memory.js';
import { modeLabel } from '../lib/modes.js';
import { makePod } from '../lib/pod.js';
import type { NaiveRow } from '../lib/types.js';

export interface NaiveConfig {
  system: 'naive' | Mode;
  slow: number;
  rate: number;
  durationS: number;
  heapCapMiB: number;
}

/** The naive server: one unbounded array per watcher; watcher 0 is the healthy one. */
class NaiveFanout {
  readonly queues: StoreEvent[][];
  private waiter: ((e: StoreEvent) => void) | undefined;

  constructor(watchers: number) {
    this.queues = Array.from({ length: watchers }, () => []);
  }

  publish(e: StoreEvent): void {
    const qs = this.queues;
    for (let i = 0; i < qs.length; i++) qs[i]!.push(e);
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w(qs[0]!.shift()!);
    }
  }

  /** The healthy watcher's next event. */
  next(): Promise<StoreEvent> {
    const q = this.queues[0]!;
    if (q.length > 0) return Promise.resolve(q.shift()!);
    return new Promise((r) => (this.waiter = r));
  }
}

export async function runNaiveOnce(c: NaiveConfig): Promise<NaiveRow> {
  const keepAlive = setInterval(() => {}, 1000);
  const store = new MemoryStore();
  const pods: KubeObject[] = [];
  for (let i = 0; i < 1000; i++) pods.push(await store.create(makePod(i)));
  const sendTimes = new SendTimes();
  const lat = new LatencyRecorder();
  let stopped = false;
  let stop: () => void;
  let naive: NaiveFanout | undefined;
  let cache: WatchCache | undefined;
  fullGc();
  const base = snapshot();
  if (c.system === 'naive') {
    const n = (naive = new NaiveFanout(c.slow + 1));
    const sw = store.watch(
      store.resourceVersion,
      (e) => n.publish(e),
      () => {},
    );
    stop = () => sw.stop();
    void (async () => {
      while (!stopped) {
        const e = await n.next();
        if (!stopped) lat.recordMs(performance.now() - sendTimes.at(e.resourceVersion));
      }
    })();
  } else {
    const wc = (cache = new WatchCache({ store, mode: c.system, channelCapacity: 100 }));
    await wc.start();
    const rv = String(wc.resourceVersion);
    const healthy = wc.watch({ resourceVersion: rv, channelCapacity: 100 });
    const stalled = Array.from({ length: c.slow }, () => wc.watch({ resourceVersion: rv, channelCapacity: 100 }));
    stop = () => {
      healthy.stop();
      for (const w of stalled) w.stop();
    };
    void (async () => {
      for await (const ev of healthy) {
        ev.jsonLine(wc.encodings);
        if (!stopped) lat.recordMs(performance.now() - sendTimes.at(ev.rv));
      }
    })();
  }
  const writer = new FixedRateWriter({ store, pods, rate: c.rate, sendTimes });
  const sampler = new MemorySampler(250);
  const t0 = performance.now();
  writer.start();
  let capped = false;
  while (performance.now() - t0 < c.durationS * 1000) {
    await sleep(100);
    if (toMiB(process.memoryUsage().heapUsed) > c.heapCapMiB) {
      capped = true;
      break;
    }
  }
  writer.stop();
  const wallS = (performance.now() - t0) / 1000;
  sampler.stop();
  fullGc();
  const end = snapshot();
  stopped = true;
  stop();
  await cache?.stop();
  void naive;
  clearInterval(keepAlive);
  const s = sampler.series;
  const first = s[0]!;
  const last = s[s.length - 1]!;
  return {
    system: c.system === 'naive' ? 'naive fan-out (unbounded arrays)' : `engine: ${modeLabel(c.system)}`,
    slow: c.slow,
    rate: c.rate,
    durationS: wallS,
    eventsWritten: writer.written,
    latency: lat.summary(),
    heapGrowthMiBPerS: (last.heapMiB - first.heapMiB) / Math.max(0.001, last.tS - first.tS),
    heapEndMiB: toMiB(end.heapUsed),
    bytesPerSlowWatcherEnd: c.slow > 0 ? (end.heapUsed - base.heapUsed) / c.slow : 0,
    capped,
    series: s.map((x) => ({ tS: x.tS, heapMiB: x.heapMiB, rssMiB: x.rssMiB })),
  };
}

export interface NaiveSweepOptions {
  counts: number[];
  rate: number;
  durationS: number;
  engineModes: Mode[];
  log?: (line: string) => void;
}

/** For each N: the naive fan-out, then the engine in each mode, each in its own process. */
export async function runNaiveSweep(o: NaiveSweepOptions): Promise<NaiveRow[]> {
  const url = new URL('./naive-fanout.js', import.meta.url);
  const rows: NaiveRow[] = [];
  for (const slow of o.counts) {
    for (const system of ['naive', ...o.engineModes] as NaiveConfig['system'][]) {
      o.log?.(`peer naive: ${system} N=${slow} ...`);
      try {
        rows.push(
          await runIsolated<NaiveConfig, NaiveRow>(
            url,
            { system, slow, rate: o.rate, durationS: o.durationS, heapCapMiB: 1536 },
            o.durationS * 1000 + 90_000,
          ),
        );
      } catch (err) {
        o.log?.(`peer naive: ${system} N=${slow} failed: ${(err as Error).message}`);
      }
    }
  }
  return rows;
}

if (!serveChild<NaiveConfig, NaiveRow>(runNaiveOnce) && isMain(import.meta.url)) {
  const rows = await runNaiveSweep({
    counts: [10_000],
    rate: 1000,
    durationS: 3,
    engineModes: ['alpha', 'beta'],
    log: (l) => console.error(l),
  });
  for (const r of rows)
    console.log(
      r.system,
      r.slow,
      'heap growth MiB/s',
      r.heapGrowthMiBPerS.toFixed(1),
      'end MiB',
      r.heapEndMiB.toFixed(0),
      'p99 µs',
      r.latency.p99Us.toFixed(0),
    );
}
