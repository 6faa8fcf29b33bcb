/**
 * Worker script for wake-doorbell.test.ts: rings ids 0 .. count-1 into the
 * doorbell (workerData.buffer), spinning while it is full (a test producer:
 * the engine's falls back to a message instead), pausing every `burst` ids
 * so the consumer waits often. Posts how many rings notified a waiting consumer.
 *
 * Loaded directly by the test runner (node --test dist/test/) it does nothing.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { WakeDoorbell } from '../../src/beta/wake-doorbell.js';

export interface DoorbellProducerData {
  buffer: SharedArrayBuffer;
  count: number;
  burst: number;
}

if (!isMainThread && parentPort !== null) {
  const { buffer, count, burst } = workerData as DoorbellProducerData;
  const bell = new WakeDoorbell(buffer);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let full = 0;
  for (let id = 0; id < count; id++) {
    while (!bell.ring(id)) full++;
    if ((id + 1) % burst === 0) Atomics.wait(pause, 0, 0, 0.05); // let the consumer drain and wait again
  }
  parentPort.postMessage({ notifies: bell.notifies, full });
}
