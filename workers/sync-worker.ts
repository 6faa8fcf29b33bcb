/**
 * The beta sync worker thread: owns the unsynced watchers and serves them
 * with sync passes over the SharedArrayBuffer history ring
 * (src/beta/worker-pass-host.ts via src/beta/sync-worker-endpoint.ts). It
 * wakes on Atomics when the main thread publishes events (never polls,
 * never gets a message per event) and on the pass scheduler's timer.
 */
import { parentPort } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { HistoryRingReader } from '../src/ring/ring-reader.js';
import { ControlBlock } from '../src/beta/control-block.js';
import type { MainToWorker, WorkerToMain } from '../src/beta/sync-messages.js';
import { SyncWorkerEndpoint } from '../src/beta/sync-worker-endpoint.js';
import { waitAsync } from '../src/ring/shared-memory.js';

if (parentPort === null) throw new Error('sync-worker must run in a worker thread');
const port = parentPort;
const endpoint = new SyncWorkerEndpoint((msg: WorkerToMain) => port.postMessage(msg), undefined, true);

/**
 * Park while every channel the worker owns is full and nobody reads (issue
 * 13, deliverable 6): after such a pass the scheduler waits the idle period,
 * and a consumer's pop from a worker-owned channel (ControlBlock.signalRoom)
 * brings the next pass forward. The timeout bounds how long a stop waits.
 */
async function watchRoom(control: ControlBlock): Promise<void> {
  const word = control.roomWord;
  while (!endpoint.stopped) {
    await endpoint.allFull();
    if (endpoint.stopped) return;
    const epoch = control.armRoomWait();
    // Re-check after announcing the wait (Dekker pair with signalRoom): a pop just before is not missed.
    if (endpoint.host?.anyMemberHasRoom() !== true) await waitAsync(word.array, word.index, epoch, 1000, false);
    control.disarmRoomWait();
    endpoint.room();
  }
}

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
      // No wake-up per event: off the publish counter (so publish() finds no waiter to notify) until
      // the next pass is due; that pass reads whatever was published meanwhile.
      const ms = endpoint.msUntilNextPass;
      if (ms > 0 && Number.isFinite(ms)) await sleep(ms);
    }
  }
}

port.on('message', (msg: MainToWorker) => {
  endpoint.handle(msg);
  if (msg.op === 'init') {
    void watchPublishes(new HistoryRingReader(msg.ring));
    void watchRoom(new ControlBlock(msg.control));
  }
  if (msg.op === 'stop') port.close();
});
