/**
 * The floor (issue 8, part 3): what each primitive the engine is built from
 * costs on this machine, measured with tinybench in the same run as the
 * engine figures, so the report can print every engine figure next to the
 * floor that bounds it (report/ratios.ts). Primitives: the SAB history ring
 * (src/ring), a watcher channel push+pop (EventQueue, SpscChannel), the
 * fan-out floor, Atomics wake-up across threads, msgpackr vs JSON for the
 * same pod, batched vs unbatched loopback socket writes, a microtask hop.
 *
 *   node dist/native-bench/floor.js [--quick|--full] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import { channelTasks, encodeTasks, hopTask, ringTasks, type FloorTask } from './floor/memory-tasks.js';
import { mirrorVsPack } from './floor/mirror-pack.js';
import { socketTasks, wakeTask } from './floor/wake-tasks.js';
import { isMain, runIsolated, serveChild } from './lib/isolate.js';
import { printTable } from './lib/table.js';
import type { FloorRow } from './lib/types.js';
import { FLOOR_HEADERS, floorCells } from './report/tables.js';

export interface FloorConfig {
  timeMs: number;
  /** Largest fan-out N (100,000 in the report). */
  bigFanout: number;
}

async function bench(tasks: FloorTask[], timeMs: number): Promise<FloorRow[]> {
  const b = new Bench({ time: timeMs, warmupTime: Math.max(20, timeMs / 4), iterations: 16 });
  for (const t of tasks) b.add(t.name, t.fn);
  await b.run();
  const rows: FloorRow[] = [];
  for (const t of tasks) {
    const r = b.getTask(t.name)?.result;
    if (r === undefined || !('latency' in r)) continue;
    const scale = (t.unit === 'ns/op' ? 1e6 : 1e3) / t.ops; // ms per call -> unit per op
    rows.push({
      name: t.name,
      group: t.group,
      unit: t.unit,
      mean: r.latency.mean * scale,
      p50: r.latency.p50 * scale,
      p99: r.latency.p99 * scale,
      opsPerSec: (1000 / r.latency.mean) * t.ops,
      samples: r.latency.samplesCount ?? 0,
    });
  }
  return rows;
}

/** The whole floor, in this process. */
export async function runFloor(c: FloorConfig): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  rows.push(...(await bench([...ringTasks(), ...channelTasks(c.bigFanout), ...encodeTasks(), hopTask()], c.timeMs)));
  // 100-event batches, as many as timeMs gives the pack's tinybench row (about 20 µs an event each side).
  rows.push(...mirrorVsPack(Math.max(20, Math.round(c.timeMs / 4))));
  for (const kind of ['atomics', 'spsc'] as const) {
    for (const gap of [20, 200]) {
      const w = await wakeTask(kind, gap);
      try {
        rows.push(...(await bench([w.tasks], c.timeMs)));
      } finally {
        await w.close();
      }
    }
  }
  const s = await socketTasks();
  try {
    rows.push(...(await bench(s.tasks, c.timeMs * 2)));
  } finally {
    await s.close();
  }
  return rows;
}

/** The floor in a fresh child process (no JIT or heap state from other benches). */
export function runFloorIsolated(c: FloorConfig): Promise<FloorRow[]> {
  return runIsolated<FloorConfig, FloorRow[]>(new URL('./floor.js', import.meta.url), c, 300_000);
}

if (!serveChild<FloorConfig, FloorRow[]>(runFloor) && isMain(import.meta.url)) {
  const full = process.argv.includes('--full');
  const rows = await runFloor({ timeMs: full ? 1000 : 250, bigFanout: 100_000 });
  printTable('Floor: primitives on this machine (tinybench)', FLOOR_HEADERS, rows.map(floorCells));
  const j = process.argv.indexOf('--json');
  if (j >= 0 && process.argv[j + 1] !== undefined) writeFileSync(process.argv[j + 1]!, JSON.stringify(rows, null, 2));
}
