/**
 * Worker side of the floor's wake-up latency measurement. It parks until the
 * main thread signals (raw `Atomics.wait` on a word, or the engine's
 * SpscChannel consumer wait), then stamps the shared monotonic clock
 * (process.hrtime, CLOCK_MONOTONIC, the same in every thread) into shared
 * memory and acknowledges, so the main thread gets the one-way latency.
 *
 * Shared words (Int32): 0 = request sequence (-1 = exit), 1 = acknowledged
 * sequence; BigInt64 word at byte 16 = the worker's wake time in ns.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { POP_CLOSED, POP_EMPTY, SpscChannel, type SpscChannelHandle } from '../src/ring/spsc-channel.js';

interface WakeWorkerData {
  kind: 'atomics' | 'spsc';
  sab: SharedArrayBuffer;
  channel?: SpscChannelHandle;
}

const data = workerData as WakeWorkerData;
const i32 = new Int32Array(data.sab, 0, 4);
const t64 = new BigInt64Array(data.sab, 16, 1);

function ack(seq: number): void {
  t64[0] = process.hrtime.bigint();
  Atomics.store(i32, 1, seq);
  Atomics.notify(i32, 1);
}

parentPort?.postMessage('ready');
if (data.kind === 'atomics') {
  // Compare with the last acknowledged request, not with what was seen at start: a request
  // stored before this loop began must still be answered.
  let acked = Atomics.load(i32, 1);
  for (;;) {
    const v = Atomics.load(i32, 0);
    if (v < 0) break;
    if (v !== acked) {
      ack(v);
      acked = v;
      continue;
    }
    Atomics.wait(i32, 0, v);
  }
} else {
  const ch = new SpscChannel(data.channel!);
  for (;;) {
    const ref = ch.pop();
    if (ref === POP_EMPTY) {
      ch.waitForDataSync();
      continue;
    }
    if (ref === POP_CLOSED) break;
    ack(ref);
  }
}
