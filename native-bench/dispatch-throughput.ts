/**
 * Live-path dispatch throughput (issue: core engine, "Hot path"): events/s
 * and watcher-pushes/s with W watchers that select every event, per mode.
 * Watchers' channels are sized to hold the whole run, so the figure is the
 * dispatch loop itself (route, classify, shared wrap, push), not consumers.
 *
 *   node dist/native-bench/dispatch-throughput.js [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MemoryStore, WatchCache, type Mode } from '../src/index.js';
import { asWatcher } from '../src/watch/watcher.js';

interface Row {
  mode: Mode;
  watchers: number;
  events: number;
  seconds: number;
  eventsPerSec: number;
  pushesPerSec: number;
  heapDeltaBytesPerEvent: number;
}

async function measure(mode: Mode, watchers: number, events: number): Promise<Row> {
  const store = new MemoryStore();
  const cache = new WatchCache({ store, mode, history: { lowerBound: 100, upperBound: 102400 } });
  await cache.start();
  const ws = [];
  for (let i = 0; i < watchers; i++)
    ws.push(cache.watch({ resourceVersion: String(cache.resourceVersion), channelCapacity: events + 1 }));
  const obj = {
    metadata: { namespace: 'default', name: 'p', labels: { app: 'x' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] },
  };
  await store.create(obj);
  await new Promise((r) => setImmediate(r));
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = process.hrtime.bigint();
  for (let i = 1; i < events; i++) await store.update(obj); // each write is dispatched in the store's microtask
  await new Promise((r) => setImmediate(r));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const heap1 = process.memoryUsage().heapUsed;
  const pushed = ws.reduce((a, w) => a + asWatcher(w).queue.size, 0);
  if (pushed !== watchers * events) throw new Error(`expected ${watchers * events} pushes, got ${pushed}`);
  await cache.stop();
  return {
    mode,
    watchers,
    events,
    seconds,
    eventsPerSec: events / seconds,
    pushesPerSec: pushed / seconds,
    heapDeltaBytesPerEvent: (heap1 - heap0) / events,
  };
}

const { values } = parseArgs({ options: { json: { type: 'string' } } });
const rows: Row[] = [];
for (const mode of ['off', 'alpha', 'beta'] as Mode[]) {
  rows.push(await measure(mode, 1000, 2000));
  rows.push(await measure(mode, 100_000, 40));
}
console.log('mode   watchers   events   events/s     pushes/s');
for (const r of rows)
  console.log(
    `${r.mode.padEnd(6)} ${String(r.watchers).padStart(8)} ${String(r.events).padStart(8)} ${r.eventsPerSec.toFixed(0).padStart(10)} ${r.pushesPerSec.toExponential(2).padStart(12)}`,
  );
if (values.json !== undefined)
  writeFileSync(values.json, JSON.stringify({ node: process.version, date: new Date().toISOString(), rows }, null, 2));
