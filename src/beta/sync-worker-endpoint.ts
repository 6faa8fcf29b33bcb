/**
 * SyncWorkerEndpoint: the sync worker's message handling, independent of
 * where it runs: in a worker thread (workers/sync-worker.ts, production) or
 * in-process on the same clock as the engine (the simulator and the
 * harness, so a beta run is reproducible from its seed).
 */
import { realClock, type Clock } from '../core/clock.js';
import { waitAsync } from '../ring/shared-memory.js';
import type { MainToWorker, SelectionSpec, WorkerToMain } from './sync-messages.js';
import { adoptRows, introduceRows } from './member-rows.js';
import { WakeDoorbell } from './wake-doorbell.js';
import { ArenaPrefault } from '../ring/arena-prefault.js';
import { READING_MS } from './consumer-window.js';
import { WorkerPassHost, type KnownWatcher } from './worker-pass-host.js';
import { WorkerWarmUp } from './worker-warm-up.js';

/**
 * How long the worker waits for room itself after a pass that pushed, before it parks (serveRoom):
 * `ms` in all, of which the first `spinMs` it looks without announcing a wait, and the rest it sleeps
 * in Atomics.wait on the room word with the wait announced (lookForRoom).
 */
export interface HotWait {
  readonly ms: number;
  readonly spinMs: number;
  /** Milliseconds, monotonic (performance.now in the worker thread). */
  now(): number;
}

/** Messages that end a warm-up rehearsal before they are handled: real members, the end (a relist leaves it be). */
const WARM_UP_ENDERS: ReadonlySet<MainToWorker['op']> = new Set(['adopt', 'adopt-rows', 'stop']);

export class SyncWorkerEndpoint {
  host: WorkerPassHost | undefined;
  /** Commits the ring arena's pages the main thread asks for (`prefault`), off the main thread. */
  prefault: ArenaPrefault | undefined;
  stopped = false;
  /** The warm-up rehearsal while it runs (worker-warm-up.ts): the first real adopt ends it. */
  warmUp: WorkerWarmUp | undefined;
  /** The `init` message (a warm-up builds its host as the real one). */
  private init: Extract<MainToWorker, { op: 'init' }> | undefined;
  private readonly known = new Map<number, KnownWatcher>();
  /** The selection specs the main thread sent, by id (worker-selection-specs.ts): a pooled introduction names one. */
  private readonly specs = new Map<number, SelectionSpec>();
  private readonly send: (msg: WorkerToMain) => void;
  /**
   * What both pass hosts send through, the real one and the warm-up's: one function, so the call in the
   * optimized pass (a hand-back) meets the same target after the rehearsal as during it; another one
   * threw that code away at the first real hand-back. While a rehearsal runs, the real host has no
   * member (the first real adopt ends the rehearsal before it is handled), so it sends nothing: every
   * host message then is the rehearsal's, and stays in this thread.
   */
  private readonly hostSend = (msg: WorkerToMain): void => {
    const rehearsal = this.warmUp;
    if (rehearsal !== undefined) rehearsal.heard(msg);
    else this.send(msg);
  };
  private readonly clock: Clock;

  private readonly roomSignal: boolean;
  private readonly hotWait: HotWait | undefined;

  /**
   * `roomSignal`: the worker thread parks for room when every channel is full (see WorkerPassHost).
   * `hotWait`: before it parks after a pass that pushed, it looks for room itself for that long
   * (serveRoom); the worker thread's, on real time. Absent: it parks at once (in-process hosts).
   */
  constructor(send: (msg: WorkerToMain) => void, clock: Clock = realClock, roomSignal = false, hotWait?: HotWait) {
    this.send = send;
    this.clock = clock;
    this.roomSignal = roomSignal;
    this.hotWait = hotWait;
  }

  handle(msg: MainToWorker): void {
    try {
      // Real work (or the end) ends a warm-up first: the rehearsal never delays a real watcher.
      if (this.warmUp !== undefined && WARM_UP_ENDERS.has(msg.op)) this.warmUp.abort();
      switch (msg.op) {
        case 'init':
          this.init = msg;
          this.host = new WorkerPassHost(
            msg.ring,
            msg.control,
            msg.pass,
            msg.indexerFields,
            msg.triggerField,
            this.hostSend,
            this.clock,
            this.roomSignal,
            msg.doorbell === undefined ? undefined : new WakeDoorbell(msg.doorbell),
          );
          this.host.onAllFull = () => this.wakeParkers();
          this.prefault = new ArenaPrefault(msg.ring.arena, this.clock);
          break;
        case 'slab':
          this.host!.slabs[msg.id] = msg.buffer;
          break;
        case 'introduce-rows':
          for (const { id, spec } of msg.selections) this.specs.set(id, spec);
          introduceRows(this.host!, msg.rows, this.specs, this.known);
          break;
        case 'introduce':
          for (const a of msg.watchers) this.host!.introduce(a, this.known);
          break;
        case 'adopt-rows':
          adoptRows(this.host!, msg.rows, this.known);
          this.wakeArrivals();
          break;
        case 'adopt':
          for (const a of msg.watchers) this.host!.adopt(a, this.known);
          this.wakeArrivals();
          break;
        case 'forget':
          for (const id of msg.ids) {
            this.host?.forget(id);
            this.known.delete(id);
          }
          for (const id of msg.selections) this.specs.delete(id);
          break;
        case 'reset':
          this.host?.reset();
          this.send({ op: 'reset-done' });
          break;
        case 'prefault':
          this.prefault?.request(msg.upTo);
          break;
        case 'warm-up': {
          const init = this.init;
          if (init === undefined || this.stopped || this.hasMembers) break; // too late to rehearse
          this.warmUp = new WorkerWarmUp(msg, init, this.hostSend, this.clock, (t) => {
            this.warmUp = undefined;
            this.send({ op: 'warmed-up', ...t });
          });
          break;
        }
        case 'stop':
          this.stopped = true;
          this.prefault?.stop();
          this.host?.scheduler.stop();
          this.host?.reset();
          this.wakeArrivals();
          this.wakeParkers();
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

  /** Resolves after a pass that found every member's channel full (or when the worker stops). */
  allFull(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.parkers.push(resolve));
  }

  private parkers: (() => void)[] = [];

  private wakeParkers(): void {
    const p = this.parkers;
    this.parkers = [];
    for (const r of p) r();
  }

  /** A consumer made room in a channel the worker owns. */
  room(): void {
    if (!this.stopped) this.host?.scheduler.onRoom();
  }

  /**
   * Park while the last pass left nothing that can move until a consumer
   * reads (every member it left owed has a full channel, or it fed members
   * still behind, or every channel was full): a consumer's pop that leaves a
   * worker-owned channel with room worth a pass (ControlBlock.signalRoom)
   * brings the next pass forward (issue 13, deliverables 4 and 6). Runs
   * until stop; the worker thread starts it after `init`.
   */
  async serveRoom(): Promise<void> {
    while (!this.stopped) {
      await this.allFull();
      const host = this.host;
      if (this.stopped || host === undefined) return;
      // A pass that pushed fed consumers that are reading now: their room comes within microseconds,
      // sooner than a park and a wake-up would bring the next pass (and without their Atomics.notify).
      if (host.lastPassPushed && this.lookForRoom(host)) {
        this.hotWaits++;
        this.room();
        continue;
      }
      const control = host.controlBlock;
      const { array, index } = control.roomWord;
      const epoch = control.armRoomWait();
      // Re-check after announcing the wait (Dekker pair with signalRoom): a pop just before is not
      // missed, and one after finds WAITING set. Until a consumer signals the epoch stays: no re-check.
      if (!host.anyMemberHasRoom()) {
        // Until room, a stop, or the scheduler moved on meanwhile (a new stall, an expiry pass). The
        // timeout bounds how long a stop waits; behind a shut consumer window it is READING_MS, after which
        // the consumers that were fed but never read leave the window (consumer-window.ts, liveness).
        while (!this.stopped && this.waitingForRoom) {
          const timeout = host.window.shut ? READING_MS : 1000;
          if ((await waitAsync(array, index, epoch, timeout, false)) !== 'timed-out') break;
          if (host.window.shut && host.anyMemberHasRoom()) break;
        }
      }
      control.disarmRoomWait();
      this.room();
    }
  }

  /** Hot waits that found room (the next pass came without a park). */
  hotWaits = 0;

  /**
   * The hot wait (issue 13, deliverable 4): wait for room worth a pass in the members' channels for up
   * to `hotWait.ms`. True: found some. First it looks for `spinMs` without announcing a wait
   * (ROOM_WAITING stays clear, so a consumer that reads at once on another core costs no
   * Atomics.notify). Then it announces the wait and sleeps in Atomics.wait on the room word for the
   * rest: the consumer's pop that makes room worth a pass wakes it at once (ControlBlock.signalRoom),
   * and meanwhile the thread leaves its core to the consumer. On a host that gives the process about
   * one core (this 2-vCPU VM, shared: two spinning threads got 0.8-1.0x one thread's work, sometimes
   * 1.9x), a 1 ms spin held the core the consumer it had just fed needed: catch-up9's W = 1 timelines
   * showed 26-98 spins per catch-up that ran the full millisecond, found nothing and parked, and the
   * consumer woke only after. Only right after a pass that pushed: once a pass finds nothing to push
   * (every consumer stopped reading) it parks at once, so a stall with nobody reading costs no hot
   * wait (deliverable 6).
   */
  private lookForRoom(host: WorkerPassHost): boolean {
    const hot = this.hotWait;
    if (hot === undefined || hot.ms <= 0) return false;
    const spin = Math.min(hot.spinMs, hot.ms);
    const until = hot.now() + spin;
    do {
      if (host.anyMemberHasRoom()) return true;
    } while (hot.now() < until);
    if (spin >= hot.ms) return false;
    const control = host.controlBlock;
    const { array, index } = control.roomWord;
    const epoch = control.armRoomWait();
    // Re-check after announcing the wait (Dekker pair with signalRoom, as in serveRoom's park): a pop
    // just before is seen here, one after finds ROOM_WAITING set and notifies.
    if (!host.anyMemberHasRoom()) Atomics.wait(array, index, epoch, hot.ms - spin);
    control.disarmRoomWait();
    return host.anyMemberHasRoom();
  }

  /** The last pass left nothing that can move until a consumer reads (the thread parks for room). */
  get waitingForRoom(): boolean {
    return this.host?.scheduler.allFull === true;
  }

  /** New events were published in the ring. */
  published(): void {
    if (!this.stopped) this.host?.published();
  }
}
