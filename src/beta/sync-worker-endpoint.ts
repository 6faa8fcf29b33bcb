/**
 * SyncWorkerEndpoint: the sync worker's message handling, independent of
 * where it runs: in a worker thread (workers/sync-worker.ts, production) or
 * in-process on the same clock as the engine (the simulator and the
 * harness, so a beta run is reproducible from its seed).
 */
import { realClock, type Clock } from '../core/clock.js';
import type { MainToWorker, WorkerToMain } from './sync-messages.js';
import { WorkerPassHost, type KnownWatcher } from './worker-pass-host.js';

export class SyncWorkerEndpoint {
  host: WorkerPassHost | undefined;
  stopped = false;
  private readonly known = new Map<number, KnownWatcher>();
  private readonly send: (msg: WorkerToMain) => void;
  private readonly clock: Clock;

  constructor(send: (msg: WorkerToMain) => void, clock: Clock = realClock) {
    this.send = send;
    this.clock = clock;
  }

  handle(msg: MainToWorker): void {
    try {
      switch (msg.op) {
        case 'init':
          this.host = new WorkerPassHost(msg.ring, msg.control, msg.pass, msg.indexerFields, msg.triggerField, this.send, this.clock);
          break;
        case 'adopt':
          this.host!.adopt(msg.id, msg.position, msg.reachedLive, msg.channel, msg.selection, msg.cell, this.known);
          break;
        case 'forget':
          this.host?.forget(msg.id);
          this.known.delete(msg.id);
          break;
        case 'reset':
          this.host?.reset();
          break;
        case 'stop':
          this.stopped = true;
          this.host?.scheduler.stop();
          this.host?.reset();
          break;
      }
    } catch (err) {
      this.send({ op: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }

  /** New events were published in the ring. */
  published(): void {
    if (!this.stopped) this.host?.published();
  }
}
