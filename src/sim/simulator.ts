/**
 * simulate(scenario, variant): one run of the REAL engine (MemoryStore +
 * WatchCache, in the variant's mode and options) under virtual time.
 *
 * The driver steps a tick grid: at each tick it fires due engine timers
 * (passes, bookmarks, off mode's dispatch budget, request timeouts), runs the
 * agenda (paced reads, connects, stall starts and ends, reconnects), issues
 * the writes due, and lets every continuation settle, so store deliveries,
 * dispatch and the clients' reads all happen at the tick's virtual time.
 * Dispatcher halts hold the cache's ingest (HaltingStore); sync passes
 * charge their modelled cost to the thread (PassObserver).
 *
 * The same driver runs on the real clock (options.driver = 'real') for the
 * sim-vs-real check.
 */
import { WatchCache } from '../cache/watch-cache.js';
import type { IndexerFunc, KubeObject } from '../core/types.js';
import { MemoryStore } from '../store/memory-store.js';
import { resolvePassOptions } from '../sync/pass-options.js';
import { Agenda } from './agenda.js';
import type { Consumer, ConsumerEnv } from './consumer.js';
import { realDriver, virtualDriver, type SimDriver } from './driver.js';
import { observeAlpha, observeBeta, type SiteAccounting } from './engine-sites.js';
import { HaltingStore } from './halting-store.js';
import { PassObserver } from './pass-observer.js';
import { buildPopulations } from './population.js';
import { Prng } from './prng.js';
import { Recorder } from './recorder.js';
import type { SimResult, Variant } from './result.js';
import type { Scenario } from './scenario.js';
import { summarize } from './summarize.js';
import { VirtualClock } from './virtual-clock.js';
import { TRIGGER_FIELD, Workload } from './workload.js';

export interface SimulateOptions {
  /** 'virtual' (default) or 'real' (real clock, real sleeps: for the sim-vs-real check). */
  driver?: 'virtual' | 'real';
  /** Record every client's delivered sequence in the result. */
  recordSequences?: boolean;
  /** Called now and then with the share of virtual time done (0..1). */
  onProgress?: (fraction: number) => void;
  /** Debugging: called at the end of the run, before the cache stops, with the engine and the clients. */
  probe?: (state: { cache: WatchCache; consumers: readonly Consumer[] }) => void;
}

const INDEXERS: Record<string, IndexerFunc> = {
  [TRIGGER_FIELD]: (o: KubeObject) => (o.spec as { nodeName?: string } | undefined)?.nodeName,
};

export async function simulate(
  scenario: Scenario,
  variant: Variant,
  options: SimulateOptions = {},
): Promise<SimResult> {
  const realStart = performance.now();
  const driver: SimDriver =
    options.driver === 'real' ? realDriver() : virtualDriver(new VirtualClock(undefined, scenario.seed));
  const clock = driver.clock;
  const rng = new Prng(scenario.seed);
  const store = new MemoryStore({ clock });
  const workload = new Workload(scenario.writes, store, rng.fork(1), variant.writeScale ?? 1);
  const origin = clock.now();
  await workload.seed(origin);
  const halting = new HaltingStore(store, clock);
  const engine = scenario.engine;
  const pass = { ...(engine.pass ?? {}), ...(variant.pass ?? {}) };
  const history = { ...(engine.history ?? {}) };
  if (variant.historyUpperBound !== undefined) history.upperBound = variant.historyUpperBound;
  const channelCapacity = variant.channelCapacity ?? engine.channelCapacity;
  const cache = new WatchCache({
    store: halting,
    mode: variant.mode,
    clock,
    ...(scenario.writes.triggerValues !== undefined ? { indexers: INDEXERS } : {}),
    ...(channelCapacity !== undefined ? { channelCapacity } : {}),
    history,
    pass,
    ...(engine.dispatchBudget !== undefined ? { dispatchBudget: engine.dispatchBudget } : {}),
    ...(engine.bookmarkFrequencyMs !== undefined ? { bookmarkFrequencyMs: engine.bookmarkFrequencyMs } : {}),
  });
  await cache.start();

  const tickMs = scenario.tickMs;
  const agenda = new Agenda(origin, tickMs);
  const recorder = new Recorder(origin);
  const clients = new Map<number, Consumer>();
  let stopping = false;
  let nowS = 0;
  const env: ConsumerEnv = {
    cache,
    clock,
    agenda,
    times: workload.times,
    recorder,
    tickMs,
    clients,
    stopping: () => stopping,
    writeRate: () => (nowS < scenario.durationS ? workload.rateAt(nowS) : 0),
    recordSequences: options.recordSequences === true,
    origin,
  };
  const observer = new PassObserver({
    clock,
    spend: (ms) => driver.spend(ms),
    cost: scenario.cost,
    intervalOpenCost: resolvePassOptions(pass, variant.mode).intervalOpenCost,
    maxWatchers: resolvePassOptions(pass, variant.mode).maxWatchers,
    clients,
    laggardAgeMs: 1000,
  });
  const site: SiteAccounting | undefined = observeAlpha(cache, observer) ?? observeBeta(cache, observer);
  const consumers = buildPopulations(scenario, env, workload, rng.fork(2));
  for (const h of scenario.halts) {
    agenda.at(origin + 1000 * h.atS, () => {
      halting.halt(h.forMs);
      for (const c of consumers) c.haltStart();
    });
    agenda.at(origin + 1000 * h.atS + h.forMs, () => {
      for (const c of consumers) c.haltEnd();
    });
  }

  // ---- the driver loop ----
  const durationMs = scenario.durationS * 1000;
  const totalMs = durationMs + scenario.drainS * 1000;
  const ticks = Math.ceil(totalMs / tickMs);
  const sampleEvery = Math.max(1000, Math.ceil(totalMs / 300 / 1000) * 1000);
  const timeline: SimResult['timeline'] = { tS: [], unsynced: [], writes: [], deliveries: [], terminations: [] };
  let lastSample = { writes: 0, deliveries: 0, terminations: 0 };
  let nextSample = sampleEvery;
  let nextProgress = 0;
  for (let k = 0; k <= ticks; k++) {
    const tMs = k * tickMs;
    const intended = origin + tMs;
    await driver.advanceTo(intended);
    nowS = tMs / 1000;
    site?.poll();
    agenda.run(k);
    if (tMs < durationMs) {
      // Writes arrive spread over the tick (virtual time), so a pass that keeps the thread busy
      // delays the ones that arrive meanwhile; the real driver issues a tick's writes at once.
      const n = workload.due(nowS, tickMs);
      for (let i = 0; i < n; i++) {
        const t = intended + (i * tickMs) / n;
        if (i > 0 && driver.kind === 'virtual') await driver.advanceTo(t);
        workload.write(driver.kind === 'virtual' ? t : intended);
      }
    }
    await driver.settle();
    if (tMs >= nextSample) {
      nextSample += sampleEvery;
      timeline.tS.push(nowS);
      timeline.unsynced.push(site?.unsynced() ?? 0);
      timeline.writes.push(workload.writes - lastSample.writes);
      timeline.deliveries.push(recorder.deliveries - lastSample.deliveries);
      timeline.terminations.push(recorder.terminationCount - lastSample.terminations);
      lastSample = {
        writes: workload.writes,
        deliveries: recorder.deliveries,
        terminations: recorder.terminationCount,
      };
    }
    if (options.onProgress !== undefined && k >= nextProgress) {
      nextProgress += Math.max(1, Math.floor(ticks / 50));
      options.onProgress(k / ticks);
    }
  }

  // ---- wrap up ----
  options.probe?.({ cache, consumers });
  stopping = true;
  for (const c of consumers) c.finish();
  const metric = (name: string, labels: Record<string, string> = {}): Promise<number> =>
    cache.metricValue(name, labels);
  const counters = {
    stalls: await metric('apiserver_watch_cache_watcher_stalls_total'),
    catchupRounds: await metric('apiserver_watch_cache_watcher_catchup_rounds_total'),
    deferredEvents: await metric('apiserver_watch_cache_watcher_deferred_events_total'),
    skippedEvents: await metric('apiserver_watch_cache_watcher_skipped_events_total'),
    unresponsive: await metric('apiserver_terminated_watchers_total', { reason: 'unresponsive' }),
    resourceExpired: await metric('apiserver_terminated_watchers_total', { reason: 'resource_expired' }),
    resourceExpiredInitial: await metric('apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' }),
    eventsDispatched: await metric('apiserver_watch_cache_events_dispatched_total'),
    peakUnsynced: observer.peakUnsynced,
    peakHeldByHalts: halting.peakHeld,
  };
  const jsonEncodings = await metric('apiserver_watch_cache_event_encodings_total', { format: 'json' });
  const real = {
    catchupWorkMs: site?.mainThreadWorkMs() ?? 0,
    offThreadWorkMs: site?.offThreadWorkMs() ?? 0,
    ringMirrorMs: site?.ringMirrorMs() ?? 0,
  };
  site?.close();
  await cache.stop();
  await driver.settle();
  const runMs = performance.now() - realStart;
  return summarize({
    scenario,
    variant,
    recorder,
    observer: site === undefined ? undefined : observer,
    counters,
    jsonEncodings,
    writes: workload.writes,
    virtualS: totalMs / 1000,
    timeline,
    real: { runMs, ...real },
  });
}
