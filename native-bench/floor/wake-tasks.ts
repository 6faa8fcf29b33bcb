/**
 * Floor tasks across threads and processes: the one-way wake-up latency of a
 * parked worker (raw Atomics.notify -> Atomics.wait, and the engine's
 * SpscChannel tryPush -> waitForDataSync), measured on the shared monotonic
 * clock after a fixed idle gap, and batched vs unbatched writes of 1 KiB
 * NDJSON lines to a loopback TCP socket read by another process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SpscChannel } from '../../src/ring/spsc-channel.js';
import type { FloorTask } from './memory-tasks.js';

export interface Resource<T> {
  tasks: T;
  close(): Promise<void>;
}

function spinUs(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}

/** A parked worker of `kind`; each task call wakes it once after `gapUs` and returns the one-way latency. */
export async function wakeTask(kind: 'atomics' | 'spsc', gapUs: number): Promise<Resource<FloorTask>> {
  const sab = new SharedArrayBuffer(32);
  const i32 = new Int32Array(sab, 0, 4);
  const t64 = new BigInt64Array(sab, 16, 1);
  const ch = kind === 'spsc' ? SpscChannel.create(1024) : undefined;
  const worker = new Worker(new URL('../floor-worker.js', import.meta.url), {
    workerData: { kind, sab, ...(ch ? { channel: ch.handle } : {}) },
  });
  await once(worker, 'message'); // 'ready'
  let seq = 0;
  const task: FloorTask = {
    name:
      kind === 'atomics'
        ? `Atomics.notify -> worker Atomics.wait (one way, ${gapUs} µs idle)`
        : `SpscChannel.tryPush -> worker waitForDataSync (one way, ${gapUs} µs idle)`,
    group: 'wake-up across threads',
    unit: 'us/op',
    ops: 1,
    fn: () => {
      const start = performance.now();
      spinUs(gapUs);
      seq++;
      const sent = process.hrtime.bigint();
      if (ch !== undefined) ch.tryPush(seq);
      else {
        Atomics.store(i32, 0, seq);
        Atomics.notify(i32, 0);
      }
      const deadline = performance.now() + 2000;
      while (Atomics.load(i32, 1) !== seq) {
        if (performance.now() > deadline) throw new Error('wake-up floor: the worker did not answer within 2 s');
        Atomics.wait(i32, 1, Atomics.load(i32, 1), 50);
      }
      // The sample is the one-way latency; the time budget is charged the whole call (gap included).
      return { overriddenDuration: Number(t64[0]! - sent) / 1e6, overriddenIterationCost: performance.now() - start };
    },
  };
  return {
    tasks: task,
    close: async () => {
      if (ch !== undefined) ch.close();
      else {
        Atomics.store(i32, 0, -1);
        Atomics.notify(i32, 0);
      }
      await Promise.race([once(worker, 'exit'), new Promise((r) => setTimeout(r, 1000))]);
      await worker.terminate();
    },
  };
}

/** Two tasks over one loopback connection to a sink process: 1 line per write() and 16 lines per write(). */
export async function socketTasks(): Promise<Resource<FloorTask[]>> {
  const child: ChildProcess = fork(fileURLToPath(new URL('../floor-sink.js', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [msg] = (await once(child, 'message')) as [{ port: number }];
  const sock: Socket = connect(msg.port, '127.0.0.1');
  await once(sock, 'connect');
  sock.setNoDelay(true);
  // The sink may reset the connection while writes are still queued when we close: not an error here.
  sock.on('error', () => {});
  const line = Buffer.from(
    JSON.stringify({ type: 'MODIFIED', object: { pad: 'x'.repeat(1000) } }).slice(0, 1023) + '\n',
  );
  const lines16 = Array.from({ length: 16 }, () => line);
  const LINES = 64;
  const writeAll = async (perWrite: number): Promise<void> => {
    let ok = true;
    for (let i = 0; i < LINES; i += perWrite)
      ok = sock.write(perWrite === 1 ? line : Buffer.concat(lines16, 16 * line.length));
    if (!ok) await once(sock, 'drain');
  };
  return {
    tasks: [
      {
        name: 'loopback socket: 1 KiB line, 1 line per write()',
        group: 'socket writes',
        unit: 'ns/op',
        ops: LINES,
        fn: () => writeAll(1),
      },
      {
        name: 'loopback socket: 1 KiB lines, 16 lines per write() (concat)',
        group: 'socket writes',
        unit: 'ns/op',
        ops: LINES,
        fn: () => writeAll(16),
      },
    ],
    close: async () => {
      sock.destroy();
      child.disconnect();
      await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 2000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
