/**
 * Catch-up with a selector (issue 13, deliverable 4: "no decode for
 * selections the slot metadata decides"): W watchers open 50,000 events
 * behind (2 KiB pods, 1,000 of them on 100 nodes) with one selection, and
 * read until each has the last event it selects. The catchup suite's
 * watchers select everything; a controller or a kubelet selects by label
 * or by an indexed field, and beta's sync worker then decides each scanned
 * event from the payload's selection section (labels, name, namespace,
 * indexed values), decoding the payload only where the section cannot.
 *
 * Selections: `all` (none), `label` (`tier=db`: a third of the pods),
 * `field` (`spec.nodeName=node-3`, the trigger index: 1 % of the pods).
 * Each (mode, selection, W) runs in a fresh child process: the history is
 * written, the process waits until quiet (lib/quiet.ts), then the catch-up
 * runs twice, cold (the cache's first) and warm. No writer runs meanwhile,
 * and no healthy watcher: the catchup suite measures those.
 *
 *   node dist/native-bench/catchup/selector-catchup.js [--modes alpha,beta]
 *     [--selections all,label,field] [--watchers 1,100] [--json FILE]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryStore, WatchCache, type KubeObject, type Mode, type WatchOptions } from '../../src/index.js';
import { isMain, runIsolated, serveChild } from '../lib/isolate.js';
import { makePod, podUpdate } from '../lib/pod.js';
import { untilQuiet } from '../lib/quiet.js';
import { printTable, fmt } from '../lib/table.js';

const SELECTIONS = ['all', 'label', 'field'] as const;
type SelectionKind = (typeof SELECTIONS)[number];

export interface SelectorCatchupConfig {
  mode: Mode;
  selection: SelectionKind;
  watchers: number;
  historyEvents: number;
  pods: number;
}

/** One catch-up: time until every watcher had its last selected event, and what it cost. */
interface Window {
  allCaughtUpMs: number;
  delivered: number;
  cpuMs: number;
}

export interface SelectorCatchupRow {
  mode: Mode;
  selection: SelectionKind;
  watchers: number;
  historyEvents: number;
  /** Events each watcher selects of the history. */
  selectedPerWatcher: number;
  cold: Window;
  warm: Window;
}

const NODES = 100;
/**
 * A catch-up not done after this long fails the run with each lagging watcher's progress (events, RV). Runs
 * take ~0.01-2 s here; a catch-up that stops moving is a bug to see, not a wait until the child's timeout.
 */
const CATCHUP_LIMIT_MS = 120_000;
const nodeOf = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

function optionsOf(kind: SelectionKind): Partial<WatchOptions> {
  if (kind === 'label') return { labelSelector: 'tier=db' };
  if (kind === 'field') return { fieldSelector: 'spec.nodeName=node-3' };
  return {};
}

function selects(kind: SelectionKind, o: KubeObject): boolean {
  if (kind === 'label') return o.metadata.labels?.tier === 'db';
  if (kind === 'field') return nodeOf(o) === 'node-3';
  return true;
}

async function catchUp(c: SelectorCatchupConfig, cache: WatchCache, fromRV: number, lastRV: number): Promise<Window> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const watches = Array.from({ length: c.watchers }, () =>
    cache.watch({ resourceVersion: String(fromRV), channelCapacity: 100, ...optionsOf(c.selection) }),
  );
  let delivered = 0;
  // Each watcher's progress (events, last RV; -1 once done), for the report of a catch-up that stalls.
  const got = new Array<number>(c.watchers).fill(0);
  const at = new Array<number>(c.watchers).fill(fromRV);
  let stalled: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    stalled = setTimeout(() => {
      const behind = at.flatMap((rv, i) => (rv < 0 ? [] : [`#${i}: ${got[i]} events, at RV ${rv}`]));
      reject(
        new Error(
          `selector catch-up (${c.mode}, ${c.selection}, W = ${c.watchers}) not done after ${CATCHUP_LIMIT_MS} ms: ` +
            `${behind.length} watchers short of RV ${lastRV} (${behind.slice(0, 5).join('; ')})`,
        ),
      );
    }, CATCHUP_LIMIT_MS);
  });
  let times: number[];
  try {
    times = await Promise.race([
      deadline,
      Promise.all(
        watches.map(async (w, i) => {
          for await (const ev of w) {
            if (ev.type === 'BOOKMARK') continue;
            delivered++;
            got[i]!++;
            at[i] = ev.rv;
            if (ev.rv >= lastRV) {
              at[i] = -1;
              return performance.now() - t0;
            }
          }
          throw new Error('a watch ended before its last selected event');
        }),
      ),
    ]);
  } catch (err) {
    for (const w of watches) w.stop();
    throw err;
  } finally {
    clearTimeout(stalled);
  }
  const cpu = process.cpuUsage(cpu0);
  for (const w of watches) w.stop();
  return { allCaughtUpMs: Math.max(...times), delivered, cpuMs: (cpu.user + cpu.system) / 1000 };
}

export async function runSelectorCatchupOnce(c: SelectorCatchupConfig): Promise<SelectorCatchupRow> {
  const keepAlive = setInterval(() => {}, 1000);
  const store = new MemoryStore();
  const cache = new WatchCache({ store, mode: c.mode, indexers: { 'spec.nodeName': nodeOf } });
  try {
    await cache.start();
    const pods: KubeObject[] = [];
    for (let i = 0; i < c.pods; i++) pods.push(await store.create(makePod(i, { nodes: NODES })));
    const fromRV = cache.resourceVersion;
    let lastRV = 0;
    let selected = 0;
    for (let n = 0; n < c.historyEvents; n++) {
      const k = n % c.pods;
      const pod = await store.update(podUpdate(pods[k]!, n, 0));
      pods[k] = pod;
      if (selects(c.selection, pod)) {
        lastRV = Number(pod.metadata.resourceVersion);
        selected++;
      }
      if (n % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    while (cache.resourceVersion < lastRV) await new Promise((r) => setTimeout(r, 5));
    await untilQuiet({ label: `selector catch-up: mode=${c.mode} selection=${c.selection}` });
    const cold = await catchUp(c, cache, fromRV, lastRV);
    await untilQuiet({ label: `selector catch-up (warm): mode=${c.mode} selection=${c.selection}` });
    const warm = await catchUp(c, cache, fromRV, lastRV);
    return {
      mode: c.mode,
      selection: c.selection,
      watchers: c.watchers,
      historyEvents: c.historyEvents,
      selectedPerWatcher: selected,
      cold,
      warm,
    };
  } finally {
    await cache.stop();
    clearInterval(keepAlive);
  }
}

const HEADERS = [
  'selection',
  'W',
  'mode',
  'selected / watcher',
  'cold: all caught up ms',
  'warm: all caught up ms',
  'cold CPU ms',
  'warm CPU ms',
  'beta vs alpha (cold / warm)',
];

function cells(rows: SelectorCatchupRow[]): (string | number)[][] {
  return rows.map((r) => {
    const alpha = rows.find((a) => a.mode === 'alpha' && a.selection === r.selection && a.watchers === r.watchers);
    const vs =
      r.mode === 'beta' && alpha !== undefined
        ? `${fmt(r.cold.allCaughtUpMs / alpha.cold.allCaughtUpMs)}x / ${fmt(r.warm.allCaughtUpMs / alpha.warm.allCaughtUpMs)}x`
        : '';
    return [
      r.selection,
      r.watchers,
      r.mode,
      r.selectedPerWatcher,
      fmt(r.cold.allCaughtUpMs),
      fmt(r.warm.allCaughtUpMs),
      fmt(r.cold.cpuMs),
      fmt(r.warm.cpuMs),
      vs,
    ];
  });
}

if (!serveChild<SelectorCatchupConfig, SelectorCatchupRow>(runSelectorCatchupOnce) && isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      modes: { type: 'string', default: 'alpha,beta' },
      selections: { type: 'string', default: SELECTIONS.join(',') },
      watchers: { type: 'string', default: '1,100' },
      json: { type: 'string', default: 'bench-results/selector-catchup.json' },
    },
  });
  const modes = values.modes.split(',') as Mode[];
  const kinds = values.selections.split(',');
  for (const k of kinds)
    if (!(SELECTIONS as readonly string[]).includes(k))
      throw new Error(`--selections: ${k} is not one of ${SELECTIONS.join(', ')}`);
  const ws = values.watchers.split(',').map(Number);
  for (const w of ws) if (!(Number.isInteger(w) && w >= 1)) throw new Error(`--watchers: ${w} is not a count >= 1`);
  const url = new URL('./selector-catchup.js', import.meta.url);
  const rows: SelectorCatchupRow[] = [];
  const failed: string[] = [];
  for (const selection of kinds as SelectionKind[])
    for (const watchers of ws)
      for (const mode of modes) {
        console.error(`[bench] selector catch-up: selection=${selection} W=${watchers} mode=${mode} ...`);
        const config: SelectorCatchupConfig = { mode, selection, watchers, historyEvents: 50_000, pods: 1000 };
        try {
          rows.push(await runIsolated<SelectorCatchupConfig, SelectorCatchupRow>(url, config, 300_000));
        } catch (err) {
          failed.push(`${selection} W=${watchers} mode=${mode}`);
          console.error(
            `[bench] selector catch-up: ${selection} W=${watchers} mode=${mode} failed: ${(err as Error).message}`,
          );
        }
      }
  printTable('Catch-up with a selector: W watchers 50,000 events behind (2 KiB pods)', HEADERS, cells(rows));
  mkdirSync(dirname(values.json), { recursive: true });
  writeFileSync(values.json, JSON.stringify({ when: new Date().toISOString(), rows }, null, 2));
  console.error(`[bench] wrote ${values.json}`);
  if (failed.length > 0) {
    // The table and the JSON hold the runs that finished; the exit status says some did not.
    console.error(`[bench] selector catch-up: ${failed.length} runs failed (${failed.join('; ')})`);
    process.exitCode = 1;
  }
}
