/**
 * Live dispatch while the channels fill (issue 13, deliverable 1): what the
 * main thread pays to offer one event to W watchers that select everything
 * and whose channels still have room (nobody reads them: the first ~100
 * events of a KEP mass stall, when every event reaches every channel). Per
 * watcher and event, from the engine's own fan-out timing of each event
 * (`watchcache:event` fanoutMs, docs/observability.md), next to the floor's
 * live push into as many channels (report/ratios.ts).
 *
 * Each round is a fresh cache with W watchers and `events` writes (channels
 * of events + 1 slots, so no push fails), timed once the process is quiet
 * (lib/quiet.ts: beta's new sync worker has booted); the first round warms
 * the JIT and is not counted; the figure is the median round.
 *
 *   node dist/native-bench/live-dispatch.js [--modes alpha,beta] [--watchers N]
 */
import { parseArgs } from 'node:util';
import { MemoryStore, WatchCache, type KubeObject, type Mode } from '../src/index.js';
import { PhaseProbe } from './lib/engine-probe.js';
import { untilQuiet } from './lib/quiet.js';
import { isMain, runIsolated, serveChild } from './lib/isolate.js';
import { makePod } from './lib/pod.js';
import { printTable } from './lib/table.js';
import type { LiveDispatchRow } from './lib/types.js';
import { LIVE_DISPATCH_HEADERS, liveDispatchCells } from './report/tables.js';

export interface LiveDispatchConfig {
  mode: Mode;
  watchers: number;
  /** Writes per round (below the channel capacity: every push succeeds). */
  events: number;
  rounds: number;
}

async function round(c: LiveDispatchConfig): Promise<number> {
  const store = new MemoryStore();
  const cache = new WatchCache({ store, mode: c.mode });
  await cache.start();
  let pod: KubeObject = await store.create(makePod(0));
  for (let i = 0; i < c.watchers; i++)
    cache.watch({ resourceVersion: String(cache.resourceVersion), channelCapacity: c.events + 1 });
  // Nothing else running in this process while the events are timed (this also covers beta's introductions
  // being posted and taken in): beta's fresh sync worker boots for some 100-250 ms of CPU, and on 2 vCPUs it
  // took the main thread's core during the dispatch (lib/quiet.ts).
  await untilQuiet({ label: `live dispatch: mode=${c.mode}` });
  const probe = new PhaseProbe(cache);
  for (let i = 0; i < c.events; i++) {
    const { resourceVersion: _rv, ...metadata } = pod.metadata;
    pod = await store.update({ ...pod, metadata });
  }
  const t = probe.totals();
  probe.close();
  await cache.stop();
  return (t.fanoutMs * 1e6) / (t.events * c.watchers);
}

export async function runLiveDispatchOnce(c: LiveDispatchConfig): Promise<LiveDispatchRow> {
  const keepAlive = setInterval(() => {}, 1000);
  const ns: number[] = [];
  try {
    await round(c); // JIT warm-up
    for (let r = 0; r < c.rounds; r++) ns.push(await round(c));
  } finally {
    clearInterval(keepAlive);
  }
  ns.sort((a, b) => a - b);
  const median = ns[ns.length >> 1]!;
  return {
    mode: c.mode,
    watchers: c.watchers,
    events: c.events,
    rounds: c.rounds,
    nsPerWatcher: median,
    usPerEvent: (median * c.watchers) / 1000,
    minNsPerWatcher: ns[0]!,
  };
}

/** One isolated child per mode (no JIT or heap state from another mode). */
export async function runLiveDispatchSweep(o: {
  modes: readonly Mode[];
  watchers: number;
  log?: (l: string) => void;
}): Promise<LiveDispatchRow[]> {
  const url = new URL('./live-dispatch.js', import.meta.url);
  const rows: LiveDispatchRow[] = [];
  for (const mode of o.modes) {
    o.log?.(`live dispatch: ${o.watchers} watchers mode=${mode} ...`);
    try {
      rows.push(
        await runIsolated<LiveDispatchConfig, LiveDispatchRow>(
          url,
          { mode, watchers: o.watchers, events: 90, rounds: 5 },
          120_000,
        ),
      );
    } catch (err) {
      o.log?.(`live dispatch: mode=${mode} failed: ${(err as Error).message}`);
    }
  }
  return rows;
}

if (!serveChild<LiveDispatchConfig, LiveDispatchRow>(runLiveDispatchOnce) && isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: { modes: { type: 'string', default: 'off,alpha,beta' }, watchers: { type: 'string', default: '10000' } },
  });
  const rows = await runLiveDispatchSweep({
    modes: values.modes.split(',') as Mode[],
    watchers: Number(values.watchers),
    log: (l) => console.error(l),
  });
  printTable('Live dispatch while the channels fill', LIVE_DISPATCH_HEADERS, rows.map(liveDispatchCells));
}
