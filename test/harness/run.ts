/**
 * One harness run: a seeded workload of writes against a MemoryStore, a
 * WatchCache in one mode on a VirtualClock, and a set of consumers with
 * random behaviours; every session is recorded and checked against the
 * store's linearized history.
 *
 * A run is described by a Trace (seed, number of writes, consumer specs), so
 * a failure can be shrunk to fewer writes and consumers and replayed.
 */
import {
  MemoryStore,
  WatchCache,
  type IndexerFunc,
  type Mode,
  type WatchCacheOptions,
  type WatchOptions,
} from '../../src/index.js';
import type { Clock } from '../../src/core/clock.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { FaultSwitch, type FaultName } from '../../src/testing/faults.js';
import { withEngineOptions } from '../../src/cache/engine-options.js';
import { checkSession } from './checker.js';
import { WriteHistory, keyOf } from './model.js';
import { Prng } from './prng.js';
import { FaultyStore } from './faulty-store.js';
import type { Received, SessionRecord, Violation } from './session.js';
import { asWatcher, type Watcher } from '../../src/watch/watcher.js';

type Behaviour = 'fast' | 'slow' | 'stall' | 'never' | 'early' | 'reconnect';
const BEHAVIOURS: readonly Behaviour[] = ['fast', 'slow', 'stall', 'never', 'early', 'reconnect'];

interface ConsumerSpec {
  id: number;
  seed: number;
  /** Write step at which it starts. */
  at: number;
  behaviour: Behaviour;
}

export interface Trace {
  seed: number;
  writes: number;
  consumers: ConsumerSpec[];
  /** Small history bounds so that expiry really happens. */
  smallHistory: boolean;
  /**
   * Small pass budgets so that budgets, the member cap and partial scans really happen; in beta also a
   * consumer window of 24 events, so that it shuts and opens again (src/beta/consumer-window.ts).
   */
  smallBudgets: boolean;
  /** Break the cache's store watch (as after an etcd compaction) every this many writes; 0: never. */
  storeFaultEvery?: number;
}

export interface RunResult {
  sessions: number;
  events: number;
  violations: Violation[];
  /** Engine counters of the run (stalls, catch-up rounds, 410s, force-closes, skipped). */
  counters: Record<string, number>;
  records: SessionRecord[];
}

const NAMESPACES = ['ns-a', 'ns-b', 'ns-c'];
const NAMES = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];
const APPS = ['web', 'db', 'cache'];
const NODES = ['n1', 'n2', 'n3'];
const INDEXERS: Record<string, IndexerFunc> = {
  'spec.nodeName': (o) => (o.spec as { nodeName?: string } | undefined)?.nodeName,
};

export function makeTrace(seed: number, writes: number, consumers: number): Trace {
  const r = new Prng(seed ^ 0x9e3779b9);
  const specs: ConsumerSpec[] = [];
  for (let i = 0; i < consumers; i++) {
    specs.push({
      id: i,
      seed: r.int(1, 2 ** 31),
      at: r.int(0, Math.max(0, writes - 1)),
      behaviour: r.pick(BEHAVIOURS),
    });
  }
  return {
    seed,
    writes,
    consumers: specs,
    smallHistory: r.chance(0.5),
    smallBudgets: r.chance(0.5),
    storeFaultEvery: r.chance(0.25) ? r.int(30, 90) : 0,
  };
}

/**
 * Half of the small-budget traces (by seed: no draw of its own, so every trace's other draws stay as they
 * were) give the cache a clock whose setImmediate fires 1 ms later (virtual), not at once: the writer's
 * back-to-back writes then land between the turns of the engine's sliced work (a live-first walk in chunks,
 * the stall hand-over, the hand-back slices, the deferred mirror), which on the plain virtual clock all ran
 * before the next write.
 */
function turnsTakeTime(trace: Trace): boolean {
  return trace.smallBudgets && trace.seed % 2 === 0;
}

function slowTurns(clock: VirtualClock): Clock {
  return {
    now: () => clock.now(),
    setTimeout: (callback, delayMs) => clock.setTimeout(callback, delayMs),
    clearTimeout: (handle) => clock.clearTimeout(handle),
    setImmediate: (callback) => void clock.setTimeout(callback, 1),
    workNow: () => clock.workNow(),
    random: () => clock.random(),
  };
}

function randomSelector(r: Prng): Pick<WatchOptions, 'namespace' | 'labelSelector' | 'fieldSelector'> {
  const o: Pick<WatchOptions, 'namespace' | 'labelSelector' | 'fieldSelector'> = {};
  if (r.chance(0.3)) o.namespace = r.pick(NAMESPACES);
  const l = r.int(0, 4);
  if (l === 1) o.labelSelector = `app=${r.pick(APPS)}`;
  else if (l === 2) o.labelSelector = `app in (${r.pick(APPS)},${r.pick(APPS)})`;
  else if (l === 3) o.labelSelector = `app!=${r.pick(APPS)},tier`;
  if (r.chance(0.25)) o.fieldSelector = `spec.nodeName=${r.pick(NODES)}`;
  else if (r.chance(0.1)) o.fieldSelector = `metadata.name=${r.pick(NAMES)}`;
  return o;
}

export async function runTrace(
  trace: Trace,
  mode: Mode,
  fault?: { name: FaultName; skip: number },
): Promise<RunResult> {
  const clock = new VirtualClock();
  const store = new MemoryStore({ clock });
  const history = new WriteHistory(INDEXERS);
  store.watch(
    0,
    (ev) => history.record(ev),
    (e) => {
      throw e;
    },
  );
  const faulty = new FaultyStore(store);
  const options: WatchCacheOptions = {
    store: faulty,
    mode,
    clock: turnsTakeTime(trace) ? slowTurns(clock) : clock,
    indexers: INDEXERS,
    history: trace.smallHistory
      ? { lowerBound: 8, upperBound: 32, eventFreshDurationMs: 500 }
      : { lowerBound: 100, upperBound: 4096 },
    bookmarkFrequencyMs: 1500,
    pass: trace.smallBudgets
      ? { scanBudget: 80, pushBudget: 12, maxWatchers: 3, intervalOpenCost: 8, consumerWindow: 24 }
      : {},
  };
  // A fault run gives the cache the fault points (an engine-internal option). The small-budget traces also
  // dispatch live first from one watcher (src/dispatch/dispatcher.ts), so its batches meet every consumer
  // pattern the harness makes, and walk a batch 2 candidates a turn, so its walks stop mid-event and go on
  // while watchers come, go, stall and resync; the others run the shipping values (their few watchers
  // never reach them).
  const faults = fault === undefined ? undefined : new FaultSwitch();
  const liveFirstMinWatchers = trace.smallBudgets ? 1 : undefined;
  const liveFirstWalkChunk = trace.smallBudgets ? 2 : undefined;
  if (faults !== undefined || liveFirstMinWatchers !== undefined)
    withEngineOptions(options, {
      ...(faults === undefined ? {} : { faults }),
      liveFirstMinWatchers,
      liveFirstWalkChunk,
    });
  const cache = new WatchCache(options);
  await cache.start();
  if (fault !== undefined) faults?.arm(fault.name, fault.skip);
  const observedOldest = new Set<number>();
  const noteBounds = (): void => {
    const o = cache.historyBounds().oldest;
    if (o !== undefined) observedOldest.add(o);
  };
  const sessions: SessionRecord[] = [];
  const running: Promise<void>[] = [];
  const w = new Prng(trace.seed);
  const live = new Map<string, number>(); // key -> exists

  const startSession = (
    spec: ConsumerSpec,
    index: number,
    options: WatchOptions,
  ): { rec: SessionRecord; watcher: Watcher } => {
    const floorRV = store.resourceVersion;
    const boundsAtStart = cache.historyBounds();
    const watcher = asWatcher(cache.watch(options));
    const rec: SessionRecord = {
      consumer: spec.id,
      index,
      options,
      floorRV,
      cacheRVAtStart: cache.resourceVersion,
      boundsAtStart,
      received: [],
      end: 'open',
      readingAtEnd: false,
    };
    sessions.push(rec);
    return { rec, watcher };
  };

  const consumer = async (spec: ConsumerSpec): Promise<void> => {
    const r = new Prng(spec.seed);
    const base: WatchOptions = {
      ...randomSelector(r),
      allowWatchBookmarks: r.chance(0.5),
      channelCapacity: r.int(1, 8),
    };
    const startKind = r.int(0, 5);
    if (startKind === 0) base.resourceVersion = '';
    else if (startKind === 1) base.resourceVersion = '0';
    else if (startKind === 2) base.resourceVersion = String(Math.max(0, store.resourceVersion - r.int(0, 20)));
    else if (startKind === 3) base.resourceVersion = String(r.int(0, Math.max(1, store.resourceVersion)));
    else if (startKind === 4) {
      base.resourceVersion = r.pick(['', '0', String(store.resourceVersion)]);
      base.sendInitialEvents = true;
      base.resourceVersionMatch = 'NotOlderThan';
    } else base.resourceVersion = String(store.resourceVersion + r.int(0, 3)); // now, or a future RV
    if (r.chance(0.1)) base.timeoutSeconds = r.int(1, 5);
    let options = base;
    for (let index = 0; ; index++) {
      const { rec, watcher } = startSession(spec, index, options);
      const readDelay = spec.behaviour === 'slow' || spec.behaviour === 'reconnect' ? r.int(1, 30) : 0;
      const stallAt = spec.behaviour === 'stall' || spec.behaviour === 'reconnect' ? r.int(0, 40) : -1;
      const stallFor = r.int(100, 3000);
      const stopAfter = spec.behaviour === 'early' ? r.int(0, 30) : -1;
      let lastRV: number | undefined;
      let got410 = false;
      if (spec.behaviour === 'never') {
        while (!draining) await clock.sleep(50);
        watcher.stop();
        rec.end = 'client';
        return;
      }
      let n = 0;
      for (;;) {
        if (stopAfter >= 0 && n >= stopAfter) {
          watcher.stop();
          rec.end = 'client';
          return;
        }
        const res = await watcher.next();
        if (res.done) {
          if (finishing) {
            rec.end = 'open';
            rec.readingAtEnd = true;
          } else rec.end = 'done';
          break;
        }
        const ev = res.value;
        const meta = ev.object.metadata;
        const item: Received = { type: ev.type, key: keyOf(ev.object), rv: Number(meta.resourceVersion ?? 0) };
        if (ev.type === 'BOOKMARK' && meta.annotations?.['k8s.io/initial-events-end'] === 'true')
          item.initialEnd = true;
        if (ev.type === 'ERROR') {
          const st = ev.object as unknown as { code: number; message: string };
          item.code = st.code;
          item.message = st.message;
          got410 = st.code === 410;
        } else lastRV = item.rv;
        rec.received.push(item);
        n++;
        if (n === stallAt) await pause(stallFor);
        else if (readDelay > 0) await pause(readDelay);
      }
      if (finishing || spec.behaviour !== 'reconnect') return;
      // Reconnect like an informer: from the last RV seen; after a 410 (or nothing seen), re-list.
      if (got410 || lastRV === undefined) {
        const list = await cache.list({ resourceVersion: '0' });
        options = {
          ...base,
          resourceVersion: list.metadata.resourceVersion,
          sendInitialEvents: undefined,
          resourceVersionMatch: undefined,
        };
        rec.relistRV = Number(list.metadata.resourceVersion);
      } else
        options = {
          ...base,
          resourceVersion: String(lastRV),
          sendInitialEvents: undefined,
          resourceVersionMatch: undefined,
        };
    }
  };
  let finishing = false;
  let draining = false;
  /** Sleep in virtual time, cut short once the run drains (consumers then read fast). */
  const pause = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0 && !draining; left -= 50) await clock.sleep(Math.min(50, left));
  };

  for (let step = 0; step < trace.writes; step++) {
    for (const spec of trace.consumers) if (spec.at === step) running.push(consumer(spec));
    const key = `${w.pick(NAMESPACES)}/${w.pick(NAMES)}`;
    const [namespace, name] = key.split('/') as [string, string];
    const labels: Record<string, string> = { app: w.pick(APPS) };
    if (w.chance(0.5)) labels.tier = 'x';
    const obj = { metadata: { namespace, name, labels }, spec: { nodeName: w.pick(NODES) } };
    if (!live.has(key)) {
      await store.create(obj);
      live.set(key, 1);
    } else if (w.chance(0.2)) {
      await store.delete(namespace, name);
      live.delete(key);
    } else await store.update(obj);
    noteBounds();
    if (
      trace.storeFaultEvery !== undefined &&
      trace.storeFaultEvery > 0 &&
      step % trace.storeFaultEvery === trace.storeFaultEvery - 1
    )
      faulty.breakWatches();
    // Bursts and pauses.
    const gap = w.chance(0.6) ? 0 : w.chance(0.9) ? w.int(1, 20) : w.int(100, 800);
    await clock.advance(gap);
    noteBounds();
  }
  draining = true;
  // Let every stalled consumer resume and every unsynced watcher catch up.
  for (let i = 0; i < 80; i++) {
    await clock.advance(100);
    noteBounds();
  }
  finishing = true;
  for (let i = 0; i < 20; i++) await clock.advance(100);
  const counters: Record<string, number> = {};
  for (const [k, name, labels] of [
    ['stalls', 'apiserver_watch_cache_watcher_stalls_total', {}],
    ['catchups', 'apiserver_watch_cache_watcher_catchup_rounds_total', {}],
    ['deferred', 'apiserver_watch_cache_watcher_deferred_events_total', {}],
    ['skipped', 'apiserver_watch_cache_watcher_skipped_events_total', {}],
    ['unresponsive', 'apiserver_terminated_watchers_total', { reason: 'unresponsive' }],
    ['expired', 'apiserver_terminated_watchers_total', { reason: 'resource_expired' }],
    ['expiredInitial', 'apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' }],
  ] as const)
    counters[k] = await cache.metricValue(name, labels);
  counters.storeWatchBreaks = faulty.breaks;
  await cache.stop();
  await clock.advance(1000);
  await Promise.all(running);
  faults?.arm(undefined);

  const violations: Violation[] = [];
  const ctx = { mode, history, observedOldest };
  for (const s of sessions) violations.push(...checkSession(s, ctx));
  // Reconnecting consumers: session k+1 starts at the last RV of session k (no gap, no duplicate).
  const byConsumer = new Map<number, SessionRecord[]>();
  for (const s of sessions) byConsumer.set(s.consumer, [...(byConsumer.get(s.consumer) ?? []), s]);
  for (const list of byConsumer.values()) {
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const last = [...prev.received].reverse().find((x) => x.type !== 'ERROR');
      const expectedStart =
        prev.relistRV !== undefined ? String(prev.relistRV) : last !== undefined ? String(last.rv) : undefined;
      if (expectedStart !== undefined && list[i]!.options.resourceVersion !== expectedStart) {
        violations.push({
          session: list[i]!,
          rule: 'reconnect',
          detail: `resumed at ${list[i]!.options.resourceVersion}, last seen ${expectedStart}`,
        });
      }
    }
  }
  return {
    sessions: sessions.length,
    events: sessions.reduce((a, s) => a + s.received.length, 0),
    violations,
    counters,
    records: sessions,
  };
}
