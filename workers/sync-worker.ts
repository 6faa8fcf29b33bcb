/**
 * The beta sync worker thread: owns the unsynced watchers and serves them
 * with sync passes over the SharedArrayBuffer history ring
 * (src/beta/worker-pass-host.ts via src/beta/sync-worker-endpoint.ts). It
 * never polls and never gets a message per event. It wakes on:
 *  - the pass scheduler's timer (sub-millisecond delays run on setImmediate:
 *    Node's timers have a 1 ms floor, which capped a draining cohort at a
 *    pass or two per millisecond);
 *  - a consumer's room signal (ControlBlock), while the last pass left
 *    nothing that can move until a consumer reads;
 *  - messages (adopt, forget, reset, stop).
 * It does not wait on the ring's publish counter: the scheduler keeps a timer
 * armed while it has members, and after every pass a member at the resync
 * point is handed back or has a full channel (a room signal brings it on),
 * so a publish could never bring a pass forward. publish() thus finds no
 * waiter and costs no wake-up (a futex syscall) per event (issue 13,
 * deliverable 6).
 */
import { parentPort } from 'node:worker_threads';
import { realClock, type Clock, type TimerHandle } from '../src/core/clock.js';
import type { MainToWorker, WorkerToMain } from '../src/beta/sync-messages.js';
import { SyncWorkerEndpoint } from '../src/beta/sync-worker-endpoint.js';

if (parentPort === null) throw new Error('sync-worker must run in a worker thread');
const port = parentPort;

/** A delay under this runs on setImmediate (a timer would wait a whole millisecond). */
const IMMEDIATE_BELOW_MS = 1;

type ThreadTimer = { kind: 'timeout'; t: NodeJS.Timeout } | { kind: 'immediate'; t: NodeJS.Immediate };

/**
 * The real clock, with sub-millisecond delays on setImmediate. Not unref'd:
 * an unref'd immediate does not stop the poll phase from blocking, so it
 * would wait for the next message (the worker thread itself is unref'd on
 * the main side).
 */
const threadClock: Clock = {
  ...realClock,
  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    if (delayMs >= IMMEDIATE_BELOW_MS) return { kind: 'timeout', t: realTimeout(callback, delayMs) } as TimerHandle;
    return { kind: 'immediate', t: setImmediate(callback) } as TimerHandle;
  },
  clearTimeout(handle: TimerHandle): void {
    const h = handle as ThreadTimer;
    if (h.kind === 'immediate') clearImmediate(h.t);
    else clearTimeout(h.t);
  },
};

function realTimeout(callback: () => void, delayMs: number): NodeJS.Timeout {
  const t = setTimeout(callback, delayMs);
  t.unref();
  return t;
}

/**
 * After a pass that pushed, the worker waits for room itself this long before it parks (serveRoom's
 * hot wait): a consumer reading on the main thread frees a quarter of a 100-slot channel in tens of
 * microseconds, less than a park, its wake-up and a setImmediate take (issue 13, deliverable 4).
 */
const HOT_WAIT_MS = 1;
/**
 * Of which it spins this long (a consumer reading on another core frees a quarter within it, and its
 * pop then costs no notify); the rest it sleeps on the room word, leaving the core to the consumer
 * (SyncWorkerEndpoint.lookForRoom).
 */
const HOT_SPIN_MS = 0.05;

const endpoint = new SyncWorkerEndpoint((msg: WorkerToMain) => port.postMessage(msg), threadClock, true, {
  ms: HOT_WAIT_MS,
  spinMs: HOT_SPIN_MS,
  now: () => performance.now(),
});

port.on('message', (msg: MainToWorker) => {
  endpoint.handle(msg);
  if (msg.op === 'init') void endpoint.serveRoom();
  if (msg.op === 'stop') port.close();
});
