/**
 * Does a piscina pool pay for encoding events off the main thread on this
 * 2-core machine? (issue 4: "use piscina where a pool fits, measure whether
 * it pays, keep it only where it does".) Encodes the same 2 KiB pods on the
 * main thread and through a pool (batches of 1, 16 and 256), and reports the
 * main thread's time per event for each (the pool's cost to the main thread
 * is structured-cloning the objects out and the bytes back).
 *
 *   node dist/native-bench/piscina-encode.js [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Packr } from 'msgpackr';
import { Piscina } from 'piscina';

function pod(i: number): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: `ns-${i % 50}`,
      name: `pod-${i}`,
      resourceVersion: String(i),
      labels: { app: `app-${i % 10}`, tier: 'web' },
      uid: `uid-${i}`,
    },
    spec: {
      nodeName: `node-${i % 100}`,
      containers: [
        {
          name: 'c',
          image: 'registry.example/app:1.2.3',
          env: Array.from({ length: 20 }, (_, k) => ({ name: `VAR_${k}`, value: 'x'.repeat(60) })),
        },
      ],
    },
    status: { phase: 'Running', podIP: '10.0.0.1' },
  };
}

const { values } = parseArgs({ options: { json: { type: 'string' } } });
const N = 20_000;
const pods = Array.from({ length: N }, (_, i) => pod(i));
const packr = new Packr({ useRecords: false });
const rows: { how: string; batch: number; mainThreadUsPerEvent: number; wallUsPerEvent: number }[] = [];

// Main thread: encode each pod (the first round warms the JIT up and is not reported).
for (let round = 0; round < 2; round++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let bytes = 0;
  for (const p of pods) bytes += packr.pack(p).length;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (round === 1)
    rows.push({
      how: 'main thread',
      batch: 1,
      mainThreadUsPerEvent: (cpu.user + cpu.system) / N,
      wallUsPerEvent: (wall * 1000) / N,
    });
  if (bytes === 0) throw new Error('nothing encoded');
}

const pool = new Piscina({
  filename: new URL('./piscina-encode-worker.js', import.meta.url).href,
  minThreads: 1,
  maxThreads: 1,
});
await pool.run([pods[0]]); // warm up
for (const batch of [1, 16, 256]) {
  // Main-thread cost: event-loop utilization of this thread while the pool works.
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const inflight: Promise<Uint8Array[]>[] = [];
  for (let i = 0; i < N; i += batch) inflight.push(pool.run(pods.slice(i, i + batch)) as Promise<Uint8Array[]>);
  const out = await Promise.all(inflight);
  const wall = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  if (out.flat().length !== N) throw new Error('lost results');
  rows.push({
    how: 'piscina (1 worker)',
    batch,
    mainThreadUsPerEvent: (elu.active * 1000) / N,
    wallUsPerEvent: (wall * 1000) / N,
  });
}
await pool.destroy();

console.log('encode 2 KiB pods (msgpackr)      batch   main-thread µs/event   wall µs/event');
for (const r of rows)
  console.log(
    `${r.how.padEnd(32)} ${String(r.batch).padStart(6)} ${r.mainThreadUsPerEvent.toFixed(2).padStart(20)} ${r.wallUsPerEvent.toFixed(2).padStart(15)}`,
  );
if (values.json !== undefined)
  writeFileSync(
    values.json,
    JSON.stringify({ node: process.version, date: new Date().toISOString(), N, rows }, null, 2),
  );
