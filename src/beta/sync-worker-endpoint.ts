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
        case 'slab':
          this.host!.slabs[msg.id] = msg.buffer;
          break;
        case 'introduce':
          for (const a of msg.watchers) this.host!.introduce(a, this.known);
          break;
        case 'adopt':
          for (const a of msg.watchers) this.host!.adopt(a, this.known);
          this.wakeArrivals();
          break;
        case 'forget':
          this.host?.forget(msg.id);
          this.known.delete(msg.id);
          break;
        case 'reset':
          this.host?.reset();
          this.send({ op: 'reset-done' });
          break;
        case 'stop':
          this.stopped = true;
          this.host?.scheduler.stop();
          this.host?.reset();
          this.wakeArrivals();
          break;
      }
    } catch (err) {
      this.send({ op: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }

  /** True while the worker serves anyone. */
  get hasMembers(): boolean {
    return this.host !== undefined && this.host.members.size > 0;
  }

  /** Resolves when a watcher is adopted (or the worker stops). */
  membersArrived(): Promise<void> {
    if (this.hasMembers || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push(resolve));
  }

  private arrivals: (() => void)[] = [];

  private wakeArrivals(): void {
    const a = this.arrivals;
    this.arrivals = [];
    for (const r of a) r();
  }

  /** New events were published in the ring. */
  published(): void {
    if (!this.stopped) this.host?.published();
  }
}
