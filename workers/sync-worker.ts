/**
 * The beta sync worker thread: owns the unsynced watchers and serves them
 * with sync passes over the SharedArrayBuffer history ring
 * (src/beta/worker-pass-host.ts via src/beta/sync-worker-endpoint.ts). It
 * wakes on Atomics when the main thread publishes events (never polls,
 * never gets a message per event) and on the pass scheduler's timer.
 */
import { parentPort } from 'node:worker_threads';
import { HistoryRingReader } from '../src/ring/history-ring.js';
import type { MainToWorker, WorkerToMain } from '../src/beta/sync-messages.js';
import { SyncWorkerEndpoint } from '../src/beta/sync-worker-endpoint.js';

if (parentPort === null) throw new Error('sync-worker must run in a worker thread');
const port = parentPort;
const endpoint = new SyncWorkerEndpoint((msg: WorkerToMain) => port.postMessage(msg));

async function watchPublishes(reader: HistoryRingReader): Promise<void> {
  let seen = reader.publishCount;
  while (!endpoint.stopped) {
    // With nobody to serve the worker does not park on the publish counter, so the main thread's
    // publish() finds no waiter and costs no wake-up (a futex syscall) per event.
    if (!endpoint.hasMembers) {
      await endpoint.membersArrived();
      seen = reader.publishCount;
      endpoint.published();
      continue;
    }
    // Atomics.waitAsync on the ring's publish counter; the timeout only bounds how long a stop waits.
    await reader.waitForPublishAsync(seen, 1000, false);
    const now = reader.publishCount;
    if (now !== seen) {
      seen = now;
      endpoint.published();
    }
  }
}

port.on('message', (msg: MainToWorker) => {
  endpoint.handle(msg);
  if (msg.op === 'init') void watchPublishes(new HistoryRingReader(msg.ring));
  if (msg.op === 'stop') port.close();
});
