/**
 * The `catchup` suite (issue 13, deliverable 4): W watchers open at once at
 * an RV 50,000 events behind (2 KiB pods, all still in the history), while a
 * writer runs at 1,000 events/s and one healthy watcher reads the live
 * stream. Per (mode, W), in a fresh child process, it reports:
 *  - the time until every catch-up watcher resynced (or how many did within
 *    the bound), and the 410s;
 *  - the events delivered to the catch-up watchers per second, and for beta
 *    the sync worker's pushes per second next to the one-thread bound
 *    (push-bound.ts, measured in the same process);
 *  - the healthy watcher's p99 during the catch-up against its p99 in a
 *    baseline window right before, with the same writer and no catch-up;
 *  - `warm`: the same catch-up once more in the same process right after
 *    (W new watchers, 50,000 events behind again). The first figures are the
 *    cold ones (a fresh cache: beta's sync worker thread starts with no JIT
 *    feedback, and most of its first catch-up ran interpreted or in code
 *    optimized for what it had seen so far, issue 13, deliverable 4); the
 *    warm ones show each mode's steady state. Both are reported: the verdicts
 *    and the tables keep the cold figure first.
 *
 *   node dist/native-bench/catchup/catchup-bench.js [--modes alpha,beta] [--catchup-watchers 1,100,1000]
 */
import { setTimeout as sleep, setImmediate as immediate } from 'node:timers/promises';
import type { Mode } from '../../src/index.js';
import { HealthyClient, KepContext } from '../kep/clients.js';
import { FixedRateWriter, SendTimes } from '../kep/writer.js';
import { expiredCount, startRunCache } from '../kep/run-cache.js';
import { finite, percentile } from '../lib/hist.js';
import { isMain, runIsolated, serveChild } from '../lib/isolate.js';
import { selfCpuMs } from '../lib/memory.js';
import { modeLabel } from '../lib/modes.js';
import { podBytes } from '../lib/pod.js';
import type { CatchupRow } from '../lib/types.js';
import type { BenchPlan } from '../bench-args.js';
import { CatchupClient } from './catchup-client.js';
import { measurePushBound } from './push-bound.js';
import { medianRun } from './median-run.js';

export interface CatchupConfig {
  mode: Mode;
  /** Catch-up watchers opened at once. */
  watchers: number;
  /** How far behind they open, in events (all of them in the history). */
  historyEvents: number;
  /** Writer rate during the baseline and the catch-up, events/s. */
  rate: number;
  /** Healthy-only window before the catch-up (the "without catch-up" latency), seconds. */
  baselineS: number;
  /** Bound on the catch-up window, seconds. */
  maxS: number;
  channelCapacity: number;
  pods: number;
}

/** What one catch-up window measured (runCatchupOnce runs two: cold, then warm). */
interface CatchupWindow {
  clients: CatchupClient[];
  loops: Promise<void>;
  timedOut: boolean;
  windowMs: number;
  cpuMs: number;
  elu: number;
  workerPushes: number;
  expired410: number;
  resyncs: number[];
  rvAtOpen: number;
  fromRV: number;
}

/** W catch-up watchers open at once, 50,000 events behind; until every one resynced (or its 410), or the bound. */
async function catchUpWindow(
  c: CatchupConfig,
  cache: Awaited<ReturnType<typeof startRunCache>>['cache'],
  opening: () => void,
): Promise<CatchupWindow> {
  const bounds = cache.historyBounds();
  const rvAtOpen = cache.resourceVersion;
  const fromRV = Math.max((bounds.oldest ?? 1) - 1, rvAtOpen - c.historyEvents);
  const deferred0 = await cache.metricValue('apiserver_watch_cache_watcher_deferred_events_total');
  const expired0 = await expiredCount(cache);
  const cpu0 = selfCpuMs();
  const elu0 = performance.eventLoopUtilization();
  opening();
  const openedAt = performance.now();
  const clients: CatchupClient[] = [];
  for (let i = 0; i < c.watchers; i++)
    clients.push(new CatchupClient(cache, fromRV, rvAtOpen, openedAt, c.channelCapacity));
  const all = Promise.all(clients.map((cl) => cl.run())).then(() => undefined);
  let timedOut = false;
  await Promise.race([all, sleep(c.maxS * 1000).then(() => (timedOut = true))]);
  const windowMs = performance.now() - openedAt;
  const cpuMs = selfCpuMs() - cpu0;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const workerPushes = (await cache.metricValue('apiserver_watch_cache_watcher_deferred_events_total')) - deferred0;
  const expired410 = (await expiredCount(cache)) - expired0;
  const resyncs = clients.filter((cl) => cl.resyncMs >= 0).map((cl) => cl.resyncMs);
  return { clients, loops: all, timedOut, windowMs, cpuMs, elu, workerPushes, expired410, resyncs, rvAtOpen, fromRV };
}

/** One run, in this process. */
export async function runCatchupOnce(c: CatchupConfig): Promise<CatchupRow> {
  const run = await startRunCache(c.mode, c.channelCapacity, c.pods);
  const { store, cache, pods } = run;
  const sendTimes = new SendTimes();
  const ctx = new KepContext(cache, c.channelCapacity, 'stalled', 0);
  const healthy = new HealthyClient(ctx, sendTimes);
  const healthyLoop = healthy.run();
  const writer = new FixedRateWriter({ store, pods, rate: c.rate, sendTimes });

  // The history the catch-up watchers start behind: written as fast as the engine takes it.
  const fill0 = performance.now();
  for (let n = 0; n < c.historyEvents; n += 50) {
    writer.burst(Math.min(50, c.historyEvents - n));
    await immediate();
  }
  const prefillS = (performance.now() - fill0) / 1000;
  const pushBoundPerS = measurePushBound(c.watchers);

  // Baseline: the writer and the healthy watcher only.
  ctx.phase = 'stall';
  writer.start();
  await sleep(c.baselineS * 1000);

  const lagBefore = writer.lag.summary();
  // The cold catch-up: the first one of this cache (healthy events from its opening on are "during the catch-up").
  const cold = await catchUpWindow(c, cache, () => ctx.resume());
  const { timedOut, windowMs, cpuMs, elu, workerPushes, expired410, resyncs, clients, rvAtOpen, fromRV } = cold;
  const delivered = clients.reduce((a, cl) => a + cl.received, 0);
  const baseline = healthy.stall.summary();
  const during = healthy.resume.summary();
  for (const cl of clients) cl.stop();
  await Promise.race([cold.loops, sleep(2000)]);

  // The warm one: the same again, in the same process (the writer still running, 50,000 events behind again).
  await sleep(300);
  const warm = await catchUpWindow(c, cache, () => {});
  writer.stop();
  ctx.stop();
  healthy.w.stop();
  for (const cl of warm.clients) cl.stop();
  await run.stop();
  await Promise.race([Promise.all([healthyLoop, warm.loops]), sleep(2000)]);

  const windowS = windowMs / 1000;
  const everyResynced = resyncs.length === c.watchers;
  return {
    mode: c.mode,
    modeLabel: modeLabel(c.mode),
    watchers: c.watchers,
    historyEvents: rvAtOpen - fromRV,
    podBytes: podBytes(pods[0]!),
    rate: c.rate,
    prefillS,
    maxS: c.maxS,
    timedOut,
    windowS,
    resynced: resyncs.length,
    expired410,
    clientsExpired: clients.filter((cl) => cl.expired).length,
    allResyncedMs: everyResynced ? percentile(resyncs, 100) : 0,
    resyncP50Ms: percentile(resyncs, 50),
    resyncMaxMs: percentile(resyncs, 100),
    delivered,
    deliveriesPerS: delivered / windowS,
    workerPushes,
    workerPushesPerS: workerPushes / windowS,
    pushBoundPerS,
    workerShareOfBound: finite(workerPushes / windowS / pushBoundPerS),
    healthyBaseline: baseline,
    healthyDuring: during,
    healthyP99Ratio: finite(during.p99Us / baseline.p99Us),
    writerLagBaseline: lagBefore,
    elu,
    cpuMs,
    warm: {
      timedOut: warm.timedOut,
      windowS: warm.windowMs / 1000,
      resynced: warm.resyncs.length,
      expired410: warm.expired410,
      allResyncedMs: warm.resyncs.length === c.watchers ? percentile(warm.resyncs, 100) : 0,
      delivered: warm.clients.reduce((a, cl) => a + cl.received, 0),
      workerPushes: warm.workerPushes,
      cpuMs: warm.cpuMs,
    },
  };
}

/** The bench plan's catch-up part, plus where progress lines go. */
type CatchupSweepOptions = BenchPlan['catchup'] & { log?: (line: string) => void };

/**
 * Every (W, mode), each run in its own child process. Off mode is not run: it has no catch-up path. With
 * `repeat` > 1, each W's modes run in turn `repeat` times (interleaved, so a drift of the machine meets every
 * mode alike) and each (W, mode) reports its median run (median-run.ts); a failed run is left out of it.
 */
export async function runCatchupSweep(o: CatchupSweepOptions): Promise<CatchupRow[]> {
  const rows: CatchupRow[] = [];
  const url = new URL('./catchup-bench.js', import.meta.url);
  const modes = o.modes.filter((m) => m !== 'off');
  const repeat = o.repeat;
  for (const watchers of o.watchers) {
    const runs = new Map<Mode, CatchupRow[]>(modes.map((m) => [m, []]));
    for (let run = 1; run <= repeat; run++) {
      for (const mode of modes) {
        const config: CatchupConfig = {
          mode,
          watchers,
          historyEvents: o.historyEvents,
          rate: o.rate,
          baselineS: o.baselineS,
          maxS: o.maxS,
          channelCapacity: o.channelCapacity,
          pods: 1000,
        };
        const which = repeat > 1 ? ` run ${run}/${repeat}` : '';
        o.log?.(`catchup: W=${watchers} mode=${mode}${which} ...`);
        try {
          const row = await runIsolated<CatchupConfig, CatchupRow>(
            url,
            config,
            (o.maxS + o.baselineS) * 1000 + 180_000,
          );
          runs.get(mode)!.push(row);
          if (repeat > 1) o.log?.(`catchup: W=${watchers} mode=${mode}${which}: ${resyncLine(row)}`);
        } catch (err) {
          o.log?.(`catchup: W=${watchers} mode=${mode}${which} failed: ${(err as Error).message}`);
        }
      }
    }
    for (const mode of modes) {
      const done = runs.get(mode)!;
      if (done.length > 0) rows.push(medianRun(done));
    }
  }
  return rows;
}

/** A run's resync figures, cold then warm, for the progress log. */
function resyncLine(r: CatchupRow): string {
  const one = (resynced: number, ms: number): string =>
    resynced === r.watchers ? `all in ${(ms / 1000).toFixed(3)} s` : `${resynced}/${r.watchers}`;
  return `cold ${one(r.resynced, r.allResyncedMs)}, warm ${one(r.warm.resynced, r.warm.allResyncedMs)}`;
}

if (!serveChild<CatchupConfig, CatchupRow>(runCatchupOnce) && isMain(import.meta.url)) {
  const { parseBenchArgs } = await import('../bench-args.js');
  const { printCatchupTable } = await import('../report/tables.js');
  const a = parseBenchArgs(process.argv.slice(2));
  const rows = await runCatchupSweep({ ...a.catchup, log: (l) => console.error(l) });
  printCatchupTable(rows);
}
