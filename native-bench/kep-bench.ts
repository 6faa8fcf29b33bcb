/**
 * The KEP-6268 benchmark (issue 8, part 1): one or more healthy watchers next
 * to N slow watchers, a writer at a fixed rate on the real clock, for a
 * bounded time, per mode. The run has two phases: a stall phase (slow
 * watchers read nothing, or read at a fixed rate) and a resume phase (they
 * read as fast as they can and must resync). Reported per run: healthy
 * delivery latency (write -> receipt, HdrHistogram), force-closes, 410s,
 * encodings per event, pass scan rate and main-thread share, resync times,
 * events/s in, deliveries/s out, RSS and bytes per watcher.
 *
 *   node dist/native-bench/kep-bench.js [--quick] [--modes off,alpha,beta] [--stalled N] [--json FILE]
 *
 * Each (mode, N, variant) runs in a fresh child process (lib/isolate.ts).
 */
import { setTimeout as sleep, setImmediate as immediate } from 'node:timers/promises';
import type { Mode } from '../src/index.js';
import { betaSyncOf } from '../src/cache/cache-internals.js';
import { HealthyClient, KepContext, SlowClient } from './kep/clients.js';
import { FixedRateWriter, SendTimes } from './kep/writer.js';
import { expiredCount, startRunCache } from './kep/run-cache.js';
import { PassProbe } from './lib/engine-probe.js';
import { finite, percentile } from './lib/hist.js';
import { childCpuProfDir, isMain, runIsolated, serveChild } from './lib/isolate.js';
import { PhaseProfiler } from './lib/phase-profile.js';
import { untilQuiet } from './lib/quiet.js';
import { fullGc, MemorySampler, selfCpuMs, snapshot, toMiB } from './lib/memory.js';
import type { KepRow, SlowVariant } from './lib/types.js';
import { modeLabel } from './lib/modes.js';
import { printKepTable } from './report/tables.js';

export interface KepConfig {
  mode: Mode;
  slow: number;
  healthy: number;
  variant: SlowVariant;
  rate: number;
  /** Per slow watcher, events/s, during the stall phase of the `rate` variant. */
  slowReadRate: number;
  channelCapacity: number;
  stallS: number;
  resumeS: number;
  pods: number;
  /** Updates written before measuring, with only the healthy watchers (JIT warm-up). Default 2000. */
  warmupWrites?: number;
}

/** One run, in this process. */
export async function runKepOnce(c: KepConfig): Promise<KepRow> {
  const run = await startRunCache(c.mode, c.channelCapacity, c.pods);
  const { store, cache, pods } = run;
  const sendTimes = new SendTimes();
  const ctx = new KepContext(cache, c.channelCapacity, c.variant, c.slowReadRate);
  const healthy: HealthyClient[] = [];
  const loops: Promise<void>[] = [];
  for (let i = 0; i < c.healthy; i++) healthy.push(new HealthyClient(ctx, sendTimes));
  for (const h of healthy) loops.push(h.run());
  const writer = new FixedRateWriter({ store, pods, rate: c.rate, sendTimes });
  for (let i = 0; i < (c.warmupWrites ?? 2000) / 50; i++) {
    writer.burst(50); // JIT warm-up with the healthy watchers only (not measured)
    await immediate();
  }
  // The stall starts on a settled server: beta's sync worker thread boots (parses and compiles its modules,
  // some 100-250 ms of CPU) when the cache starts, and on 2 vCPUs that one-time start-up overlapped the fill
  // of a mass stall, which set beta's stall-phase p99 (lib/quiet.ts). The stall's own work (introducing the
  // slow watchers to the worker, its passes) is still all in the measured phase.
  await untilQuiet({ label: `kep: mode=${c.mode} N=${c.slow}` });

  fullGc();
  const base = snapshot();
  const slow: SlowClient[] = [];
  for (let i = 0; i < c.slow; i++) slow.push(new SlowClient(ctx));
  ctx.phase = 'stall';
  for (const s of slow) loops.push(s.run());
  await immediate();
  fullGc();
  const registered = snapshot();

  const probe = new PassProbe(cache);
  probe.reset();
  const enc0 = await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'json' });
  const mp0 = await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'msgpack' });
  const closes0 = await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' });
  const stalls0 = await cache.metricValue('apiserver_watch_cache_watcher_stalls_total');
  const written0 = writer.written;
  const sampler = new MemorySampler(250);
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = selfCpuMs();
  // --cpu-prof DIR: the stall phase and the resume phase, each in a profile of its own.
  const profiler = await PhaseProfiler.open(childCpuProfDir());
  const profileName = `kep-${c.mode}-${c.variant}-${c.slow}`;
  await profiler?.begin();
  const t0 = performance.now();
  writer.start();
  // The stall phase's first half fills the slow channels; the worker is measured once they are full.
  await sleep((c.stallS * 1000) / 2);
  ctx.rvFilled = cache.resourceVersion; // from here on: every slow channel full (latencyStalled)
  const beta = betaSyncOf(cache);
  const workerElu0 = beta?.workerUtilization();
  await sleep((c.stallS * 1000) / 2);
  // Node's utilization of an idle thread can come out a hair below 0 (-4e-8 seen): idle is 0, not "-0.00000400 %".
  const workerBusyStall =
    workerElu0 === undefined ? 0 : Math.max(0, beta?.workerUtilization(workerElu0)?.utilization ?? 0);
  await profiler?.end(`${profileName}-stall`);
  await profiler?.begin();
  ctx.resume();
  // Resync accounting: where each slow stream stood, and what it had read, when the resume began.
  const readAtResume = slow.map((s) => s.received);
  const rvAtResumeOf = slow.map((s) => s.lastReceivedRV);
  await sleep(c.resumeS * 1000);
  await profiler?.end(`${profileName}-resume`);
  profiler?.close();
  writer.stop();
  await sleep(30);
  const wallMs = performance.now() - t0;
  const cpuMs = selfCpuMs() - cpu0;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  sampler.stop();
  const passes = probe.totals();
  probe.close();
  const eventsWritten = writer.written - written0;
  const jsonEncodings =
    (await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'json' })) - enc0;
  const msgpackEncodings =
    (await cache.metricValue('apiserver_watch_cache_event_encodings_total', { format: 'msgpack' })) - mp0;
  const forceCloses =
    (await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'unresponsive' })) - closes0;
  const stalls = (await cache.metricValue('apiserver_watch_cache_watcher_stalls_total')) - stalls0;
  const expired410 = await expiredCount(cache);

  let received = 0;
  let queued = 0;
  for (const h of healthy) {
    received += h.received;
    queued += h.w.queue.queuedEvents;
  }
  for (const s of slow) {
    received += s.received;
    queued += s.w.queue.queuedEvents;
  }
  const endRV = cache.resourceVersion;
  // Per slow watcher at the end: RVs behind the writer, and what it read in the resume phase.
  const behindAtEnd = slow.map((s) => endRV - s.lastReceivedRV);
  const endAt = performance.now();
  const longestWaits = slow.map((s) => s.longestWaitInResumeMs(endAt));
  const readInResume = slow.reduce((a, s, i) => a + s.received - readAtResume[i]!, 0);
  const neededInResume = slow.reduce((a, _s, i) => a + Math.max(0, endRV - rvAtResumeOf[i]!), 0);
  fullGc();
  const end = snapshot();
  ctx.stop();
  for (const h of healthy) h.w.stop();
  for (const s of slow) s.w.stop();
  await run.stop();
  await Promise.race([Promise.all(loops), sleep(2000)]);

  const resyncs = slow.filter((s) => s.resyncMs >= 0).map((s) => s.resyncMs);
  const pushes = received + queued + forceCloses * c.channelCapacity;
  const latency = mergeHealthy(healthy);
  return {
    mode: c.mode,
    modeLabel: modeLabel(c.mode),
    variant: c.variant,
    slow: c.slow,
    healthy: c.healthy,
    rate: c.rate,
    slowReadRate: c.variant === 'rate' ? c.slowReadRate : 0,
    channelCapacity: c.channelCapacity,
    stallS: c.stallS,
    resumeS: c.resumeS,
    wallS: wallMs / 1000,
    eventsWritten,
    eventsPerSecIn: eventsWritten / (wallMs / 1000),
    pushes,
    pushesPerSecOut: pushes / (wallMs / 1000),
    latency: latency.all,
    latencyStall: latency.stall,
    latencyStalled: latency.stalled,
    latencyResume: latency.resume,
    writerLag: writer.lag.summary(),
    forceCloses,
    healthyEnded: ctx.forceClosedHealthy,
    expired410,
    reconnects: slow.reduce((a, s) => a + s.reconnects, 0),
    stalls,
    jsonEncodings,
    encodingsPerEvent: finite(jsonEncodings / eventsWritten),
    msgpackPerEvent: finite(msgpackEncodings / eventsWritten),
    passes: passes.passes,
    passWorkMs: passes.workMs,
    catchupShare: passes.workMs / wallMs,
    workerShare: passes.workerMs / wallMs,
    workerBusyStall,
    scanned: passes.scanned,
    scanRatePerS: passes.scanned / (wallMs / 1000),
    scannedPerPassMs: finite(passes.scanned / (passes.workerMs > 0 ? passes.workerMs : passes.workMs)),
    passPushes: passes.pushes,
    resync: {
      slow: c.slow,
      resynced: resyncs.length,
      caughtUpAfterReconnect: slow.filter((s) => s.caughtUpMs >= 0).length,
      p50Ms: percentile(resyncs, 50),
      p99Ms: percentile(resyncs, 99),
      maxMs: percentile(resyncs, 100),
      readInResume,
      neededInResume,
      behindAtEndMin: behindAtEnd.length === 0 ? 0 : Math.min(...behindAtEnd),
      behindAtEndP50: percentile(behindAtEnd, 50),
      longestWaitP50Ms: percentile(longestWaits, 50),
      longestWaitMaxMs: percentile(longestWaits, 100),
    },
    memory: {
      rssBaseMiB: toMiB(base.rss),
      rssPeakMiB: toMiB(Math.max(sampler.peakRss, registered.rss)),
      heapPerWatcherB: finite((registered.heapUsed - base.heapUsed) / c.slow),
      rssPerWatcherB: finite((registered.rss - base.rss) / c.slow),
      heapPerSlowWatcherEndB: finite((end.heapUsed - base.heapUsed) / c.slow),
    },
    elu,
    cpuMs,
  };
}

function mergeHealthy(hs: HealthyClient[]): {
  all: KepRow['latency'];
  stall: KepRow['latency'];
  stalled: KepRow['latency'];
  resume: KepRow['latency'];
} {
  // Latency is reported for the first healthy watcher (all healthy watchers see the same events).
  const h = hs[0];
  if (h === undefined) throw new Error('kep bench needs at least one healthy watcher');
  return { all: h.all.summary(), stall: h.stall.summary(), stalled: h.stalled.summary(), resume: h.resume.summary() };
}

export interface KepSweepOptions {
  modes: Mode[];
  slowCounts: number[];
  variants: SlowVariant[];
  healthy: number;
  rate: number;
  slowReadRate: number;
  channelCapacity: number;
  durationS: number;
  /** Run the `rate` variant only for these N (it is the costlier one). */
  rateVariantCounts?: number[];
  log?: (line: string) => void;
}

/** Every (variant, N, mode), each in its own child process. */
export async function runKepSweep(o: KepSweepOptions): Promise<KepRow[]> {
  const rows: KepRow[] = [];
  const url = new URL('./kep-bench.js', import.meta.url);
  for (const variant of o.variants) {
    for (const slow of o.slowCounts) {
      if (
        variant === 'rate' &&
        (slow === 0 || (o.rateVariantCounts !== undefined && !o.rateVariantCounts.includes(slow)))
      )
        continue;
      for (const mode of o.modes) {
        const config: KepConfig = {
          mode,
          slow,
          healthy: o.healthy,
          variant,
          rate: o.rate,
          slowReadRate: o.slowReadRate,
          channelCapacity: o.channelCapacity,
          stallS: o.durationS / 2,
          resumeS: o.durationS / 2,
          pods: 1000,
        };
        o.log?.(`kep: ${variant} N=${slow} mode=${mode} ...`);
        try {
          rows.push(await runIsolated<KepConfig, KepRow>(url, config, o.durationS * 1000 + 120_000));
        } catch (err) {
          o.log?.(`kep: ${variant} N=${slow} mode=${mode} failed: ${(err as Error).message}`);
        }
      }
    }
  }
  return rows;
}

if (!serveChild<KepConfig, KepRow>(runKepOnce) && isMain(import.meta.url)) {
  const { parseBenchArgs } = await import('./bench-args.js');
  const a = parseBenchArgs(process.argv.slice(2));
  const rows = await runKepSweep({ ...a.kep, log: (l) => console.error(l) });
  printKepTable(rows);
  if (a.json !== undefined) (await import('node:fs')).writeFileSync(a.json, JSON.stringify(rows, null, 2));
}
