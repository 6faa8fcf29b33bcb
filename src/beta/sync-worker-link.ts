/**
 * SyncWorkerLink: the main thread's end of the sync worker. It owns the
 * worker's lifecycle (start, death, restart, utilization), every message to
 * it (posted in order, batched per turn) and the decoding of every message
 * from it into the handler's calls.
 *
 * A watcher travels to the worker as numbers (issue 13, deliverable 1): its
 * channel and cell are a region of a slab the worker has (channel-slabs.ts),
 * its selection an id in the WorkerSelectionSpecs, so each batch below is one
 * Float64Array however many watchers it names, and no object, string or
 * SharedArrayBuffer is built or cloned per watcher. One flush (a microtask
 * after the first call of a turn) posts, in the order the worker must see
 * them:
 * 1. Forgets (ids, then the selection specs they released): each was queued
 *    after a flush of everything queued before it (adopt before forget, and
 *    a forget before the introduction of a watcher that reuses its region).
 * 2. Introductions (INTRO_ROW numbers each, after the specs first used by
 *    them), posted at registration so that a stall later names only the id.
 *    A watcher consumed in another thread has buffers of its own: its
 *    introduction is an object, INTRO_CHUNK per turn (a clone of its
 *    buffers costs ~14 µs).
 * 3. Adopts, after the introductions they refer to: ADOPT_ROW numbers each
 *    (a mass stall is one block); an object only for a watcher of step 2's
 *    second kind whose introduction had not been posted, or after a restart.
 *
 * Wake-ups (issue 13, deliverable 4): a worker thread wakes the consumers it
 * fed through the shared-memory doorbell (wake-doorbell.ts), not by message.
 * While the worker has members this link keeps one Atomics.waitAsync pending
 * on it (`listen`), takes every id the worker appended in one task and hands
 * them to `handler.pushedInto`. The `pushed` message still carries the
 * worker's totals (every STATS_EVERY_MS, and at once after a hand-back or
 * expiry), and ids only in-process or when the doorbell was full.
 *
 * A worker that dies is replaced at once: the new one gets the init message
 * and every slab again, and the handler re-adopts every unsynced watcher at
 * its true position (`recoverPosition`). Nothing is lost and nothing is
 * pushed twice: the history still holds what follows.
 */
import type { EventLoopUtilization } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { EventHistory } from '../history/event-history.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { channels } from '../observe/channels.js';
import { Variant, WriterOwner } from '../protocol/channel-variants.js';
import type { Watcher } from '../watch/watcher.js';
import type { SharedWatcherChannel } from './shared-watcher-channel.js';
import { NumberRows } from './number-rows.js';
import { WorkerSelectionSpecs, specOf } from './worker-selection-specs.js';
import {
  ADOPT_ROW,
  INTRO_ROW,
  type AdoptRequest,
  type MainToWorker,
  type WorkerToMain,
  type WorkerTotals,
} from './sync-messages.js';
import { SyncWorkerEndpoint } from './sync-worker-endpoint.js';
import { WakeDoorbell } from './wake-doorbell.js';
import type { WorkerPassHost } from './worker-pass-host.js';

/** Where the sync worker runs: a worker thread (production) or in-process on the engine's clock (simulation). */
export type SyncWorkerPlacement = 'thread' | 'in-process';

/** Object introductions (watchers consumed in another thread) posted per turn of the event loop, at most. */
const INTRO_CHUNK = 256;
/** An introduction turn stops once it has taken this much main-thread time (checked every INTRO_CHECK). */
const INTRO_SLICE_MS = 0.3;
const INTRO_CHECK = 16;

/** Worker-side accounting the main thread receives once per pass. */
export interface BetaWorkerStats {
  passes: number;
  pushes: number;
  scanned: number;
  /** Scanned events whose payload some member's scope made worth decoding. */
  decodes: number;
  workMs: number;
}

/** What the worker's messages become on the main thread. */
export interface WorkerLinkHandler {
  /** The worker pushed into these waiting watchers' channels: wake their consumers. */
  pushedInto(ids: readonly number[]): void;
  /** The worker may be feeding someone (an unsynced watcher exists): the link keeps listening to the doorbell. */
  workerHasMembers(): boolean;
  /** The worker handed the watcher back within the hand-off distance (hand-back.ts). */
  handBack(id: number, position: number, passPushes: number): void;
  /** The worker found the watcher's position aged out of the history. */
  expired(id: number, position: number, oldest: number): void;
  /** The worker dropped every member (the answer to `reset`). */
  resetDone(): void;
  /** A new worker replaced a dead one: re-adopt every unsynced watcher (after `link.restarted`). */
  restarted(): void;
  /** The worker reported an internal error, or died. */
  error(message: string): void;
}

export interface SyncWorkerLinkInit {
  clock: Clock;
  placement: SyncWorkerPlacement;
  metrics: CacheMetrics;
  /** For logs. */
  resourceName: string;
  /** The cache (the observer channels' `cache`). */
  source: object;
  /** What a new worker gets first: its init message, then every slab (once each, never per watcher). */
  hello: () => MainToWorker[];
  handler: WorkerLinkHandler;
}

export class SyncWorkerLink {
  readonly stats: BetaWorkerStats = { passes: 0, pushes: 0, scanned: 0, decodes: 0, workMs: 0 };
  private readonly clock: Clock;
  private readonly placement: SyncWorkerPlacement;
  private readonly metrics: CacheMetrics;
  private readonly resourceName: string;
  private readonly source: object;
  private readonly hello: () => MainToWorker[];
  private readonly handler: WorkerLinkHandler;
  private worker: Worker | undefined;
  private inProcess: SyncWorkerEndpoint | undefined;
  private closed = false;
  /**
   * The worker's generation (+1 on every start): a watcher whose channel records this generation
   * (`introducedTo`) is known to this worker, or will be once its pending introduction is posted.
   */
  private generation = 0;
  /**
   * Watchers with buffers of their own whose introduction has not been posted yet (in registration
   * order; their channel's `introPending`).
   */
  private pendingIntros = new Map<number, Watcher>();
  /** Adopts that carry an introduction (rare: a watcher of `pendingIntros`, or one after a restart). */
  private pendingAdopts: AdoptRequest[] = [];
  /** The selection specs the worker knows, by id. */
  private readonly selections = new WorkerSelectionSpecs();
  /** Introductions of pooled watchers, INTRO_ROW numbers each (sync-messages.ts). */
  private readonly introRows = new NumberRows(INTRO_ROW);
  /** Adopts of introduced watchers, ADOPT_ROW numbers each. */
  private readonly adoptRows = new NumberRows(ADOPT_ROW);
  /** Ids to forget: each queued after a flush of everything queued before it (step 1 above). */
  private readonly forgetIds = new NumberRows(1);
  private introTimer: TimerHandle | undefined;
  private flushScheduled = false;
  private reportedPushes = 0;
  /**
   * The totals of the workers that died before this one: a new worker counts from 0, so its totals are
   * added to these (`stats` and the counters never go back after a restart).
   */
  private readonly before: WorkerTotals = { passes: 0, pushes: 0, scanned: 0, decodes: 0, workMs: 0 };
  /** The wake doorbell (placement 'thread'; outlives a worker restart: the next worker continues its ring). */
  private readonly doorbell: WakeDoorbell | undefined;
  /** A wait on the doorbell is pending (listen). */
  private listening = false;

  constructor(init: SyncWorkerLinkInit) {
    this.clock = init.clock;
    this.placement = init.placement;
    this.metrics = init.metrics;
    this.resourceName = init.resourceName;
    this.source = init.source;
    this.hello = init.hello;
    this.handler = init.handler;
    this.doorbell = this.placement === 'thread' ? new WakeDoorbell() : undefined;
    this.start();
  }

  /** Start (or restart) the sync worker and send it the shared memory it reads. */
  private start(): void {
    this.generation++; // no watcher is known to the new worker
    if (this.placement === 'thread') {
      this.inProcess = undefined;
      const worker = new Worker(new URL('../../workers/sync-worker.js', import.meta.url));
      this.worker = worker;
      worker.unref();
      worker.on('message', (msg: WorkerToMain) => this.worker === worker && this.onMessage(msg));
      worker.on('error', (err) => this.worker === worker && this.died(`error: ${err.stack ?? err.message}`));
      worker.on('exit', (code) => this.worker === worker && this.died(`exit code ${code}`));
    } else {
      // Same endpoint code, messages delivered asynchronously on the engine's clock.
      this.worker = undefined;
      this.inProcess = new SyncWorkerEndpoint((msg) => this.clock.setTimeout(() => this.onMessage(msg), 0), this.clock);
    }
    const doorbell = this.doorbell?.buffer;
    for (const msg of this.hello()) this.post(msg.op === 'init' && doorbell !== undefined ? { ...msg, doorbell } : msg);
  }

  /** The worker died: count and log it, start a new one, and let the handler hand it every unsynced watcher again. */
  private died(why: string): void {
    if (this.closed) return;
    this.metrics.syncWorkerRestarts.inc();
    console.error(`watchcache: the ${this.resourceName} sync worker died (${why}); restarting it`);
    this.handler.error(`sync worker died: ${why}`);
    this.worker = undefined;
    const b = this.before; // what the dead worker reported is kept; the next one counts from 0
    b.passes = this.stats.passes;
    b.pushes = this.stats.pushes;
    b.scanned = this.stats.scanned;
    b.decodes = this.stats.decodes;
    b.workMs = this.stats.workMs;
    this.pendingAdopts = []; // every unsynced watcher is adopted again by the handler, with its channel
    this.adoptRows.clear();
    this.introRows.clear(); // the new worker hears of each watcher again, at its adopt
    this.forgetIds.clear(); // it never knew them
    this.selections.clear();
    for (const w of this.pendingIntros.values()) channelOf(w).introPending = false;
    this.pendingIntros.clear();
    this.start(); // a new generation: every watcher is unknown to the new worker
    this.handler.restarted();
  }

  /** The in-process sync worker's pass host (placement 'in-process': the simulator models its cost). */
  get inProcessHost(): WorkerPassHost | undefined {
    return this.inProcess?.host;
  }

  /** True when the endpoint runs in this thread (it must be told of every publish). */
  get inProcessEndpoint(): SyncWorkerEndpoint | undefined {
    return this.inProcess;
  }

  /**
   * The sync worker thread's event-loop utilization since `since` (Node's
   * EventLoopUtilization; undefined in-process): how busy the thread was,
   * pass work and wake-ups included (the bench's "worker busy" figure).
   */
  utilization(since?: EventLoopUtilization): EventLoopUtilization | undefined {
    const w = this.worker;
    if (w === undefined) return undefined;
    return since === undefined ? w.performance.eventLoopUtilization() : w.performance.eventLoopUtilization(since);
  }

  /** Test hook: kill the worker thread as a crash would. */
  crashForTest(): Promise<number> | undefined {
    return this.worker?.terminate();
  }

  /**
   * Tell the worker about a new beta watcher (its shared channel, position
   * cell and selection) at registration, batched, so that a stall later is a
   * few numbers: 10,000 watchers stalling at once cost one small message.
   */
  introduce(watcher: Watcher): void {
    const channel = channelOf(watcher);
    if (this.closed || channel.introducedTo === this.generation) return;
    channel.introducedTo = this.generation;
    if (channel.slot !== undefined) this.queueIntroRow(watcher, channel);
    else {
      channel.introPending = true;
      this.pendingIntros.set(watcher.id, watcher);
    }
    this.scheduleFlush();
  }

  /** A pooled watcher's introduction: its row of numbers (and its spec, the first time the worker needs it). */
  private queueIntroRow(watcher: Watcher, channel: SharedWatcherChannel): void {
    const slot = channel.slot!;
    channel.selectionId = this.selections.use(watcher.selection);
    this.introRows.add(watcher.id, slot.slab, slot.offset, slot.capacity, channel.selectionId);
  }

  /**
   * Queue `watcher`'s adopt at its current position. The caller has handed
   * its channel to the worker (single writer) before this.
   */
  adopt(watcher: Watcher): void {
    // Normally introduced at registration. After a worker restart a pooled watcher's introduction row goes
    // first (same flush, posted before the adopts); one with buffers of its own whose introduction is
    // still queued, or after a restart, carries it. Two fields of its channel say which (no set lookup).
    const channel = channelOf(watcher);
    let first = channel.introducedTo !== this.generation;
    if (channel.introPending) {
      channel.introPending = false;
      this.pendingIntros.delete(watcher.id);
      first = true;
    }
    channel.introducedTo = this.generation;
    if (first && channel.slot !== undefined) this.queueIntroRow(watcher, channel);
    if (first && channel.slot === undefined) {
      this.pendingAdopts.push({
        id: watcher.id,
        position: watcher.position,
        capacity: watcher.capacity,
        reachedLive: watcher.reachedLive,
        ...introduction(watcher),
      });
    } else {
      // Already introduced (every watcher of a mass stall): ADOPT_ROW numbers, no object per watcher.
      this.adoptRows.add(watcher.id, watcher.position, watcher.capacity, watcher.reachedLive ? 1 : 0);
    }
    this.scheduleFlush();
    this.listen();
  }

  /**
   * Keep one wait pending on the doorbell while the worker has members
   * (a no-op while one is, or without a doorbell). It does not keep the
   * process alive, and once the worker has nobody it is not renewed.
   */
  private listen(): void {
    const bell = this.doorbell;
    if (bell === undefined || this.listening || this.closed) return;
    this.listening = true;
    // Dekker pair (WakeDoorbell.armWait / ring): ids appended before WAITING was set are seen here and
    // taken at once; any appended later find WAITING set and wake the wait.
    const epoch = bell.armWait();
    if (epoch === null) queueMicrotask(() => this.answerDoorbell());
    else void bell.wait(epoch).then(() => this.answerDoorbell());
  }

  /** The doorbell rang: listen again, then wake the consumers of every id it held (one task for all). */
  private answerDoorbell(): void {
    this.listening = false;
    if (this.closed) return;
    const timed = channels.catchUpMain.hasSubscribers;
    const t0 = timed ? performance.now() : 0;
    const ids: number[] = [];
    // Single delivery: take() moves HEAD past exactly the ids it returns; each wake is answered once.
    this.doorbell!.take(ids);
    // Re-armed before the wake-ups: ids the worker appends meanwhile are answered in a task of their own.
    if (this.handler.workerHasMembers()) this.listen();
    if (ids.length === 0) return;
    if (channels.workerPost.hasSubscribers) channels.workerPost.publish({ cache: this.source, from: 'doorbell', ids });
    this.handler.pushedInto(ids);
    if (timed)
      channels.catchUpMain.publish({ cache: this.source, step: 'worker-message', durationMs: performance.now() - t0 });
  }

  /** `watcher` ended: the worker forgets it (nothing to post if its introduction never left). */
  forget(watcher: Watcher): void {
    const channel = channelOf(watcher);
    if (channel.introducedTo !== this.generation) return; // this worker never heard of it
    channel.introducedTo = 0;
    if (channel.introPending) {
      channel.introPending = false;
      this.pendingIntros.delete(watcher.id); // never posted: nothing to forget
      return;
    }
    // Keep the order: whatever was queued before (its own adopt among them) is posted before this forget.
    // 10,000 watchers ending one after another queue nothing else in between: one message.
    if (this.introRows.rows > 0 || this.adoptRows.rows > 0 || this.pendingAdopts.length > 0) this.flush();
    this.forgetIds.add(watcher.id);
    if (channel.slot !== undefined) this.selections.release(channel.selectionId);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  /**
   * Post the introductions of watchers with buffers of their own in turns of
   * at most INTRO_CHUNK watchers or INTRO_SLICE_MS of main-thread time: each
   * clones its buffers and its selection's strings (~14 µs).
   */
  private flushObjectIntroductions(): void {
    if (this.pendingIntros.size === 0 || this.closed) return;
    const watchers: AdoptRequest[] = [];
    const t0 = this.clock.workNow();
    let seen = 0;
    for (const [id, w] of this.pendingIntros) {
      this.pendingIntros.delete(id);
      channelOf(w).introPending = false;
      if (w.accepting || w.state === 'pending')
        watchers.push({ id, position: 0, capacity: w.capacity, reachedLive: false, ...introduction(w) });
      if (watchers.length === INTRO_CHUNK) break;
      if (++seen % INTRO_CHECK === 0 && this.clock.workNow() - t0 >= INTRO_SLICE_MS) break;
    }
    if (watchers.length > 0) this.post({ op: 'introduce', watchers });
    if (this.pendingIntros.size > 0 && this.introTimer === undefined) {
      this.introTimer = this.clock.setTimeout(() => {
        this.introTimer = undefined;
        this.flushObjectIntroductions();
      }, 0);
    }
  }

  /** Post what is pending, in the order of the class comment: forgets, introductions, adopts. */
  flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    if (this.forgetIds.rows > 0) {
      const ids = this.forgetIds.take();
      this.post({ op: 'forget', ids, selections: this.selections.takeDropped() });
    }
    if (this.introRows.rows > 0) {
      const rows = this.introRows.take();
      this.post({ op: 'introduce-rows', selections: this.selections.takeAdded(), rows });
    }
    this.flushObjectIntroductions();
    // A watcher adopted and then ended before the flush is forgotten right after; the worker drops it.
    if (this.pendingAdopts.length > 0) {
      const first = this.pendingAdopts;
      this.pendingAdopts = [];
      this.post({ op: 'adopt', watchers: first });
    }
    if (this.adoptRows.rows > 0) {
      // A mass stall: one Float64Array, copied into the message (never transferred: post's note).
      const rows = this.adoptRows.take();
      this.post({ op: 'adopt-rows', rows });
    }
  }

  /**
   * Post `msg`. Nothing is transferred, only copied: the first ArrayBuffer a thread detaches (a transfer
   * does) invalidates V8's ArrayBuffer-detaching protector in that thread's isolate for good. Every
   * optimized function that touches a typed array (the ring mirror, msgpackr's pack, the channels,
   * performance.now, async hooks) was thrown away at once at the first stall and compiled again (issue
   * 13, deliverables 1 and 4: ~40 functions deoptimized as a first catch-up began; the catch-up suite's
   * healthy p99 during the catch-up, W = 100, medians of 3 and of 4 runs: 6.3 / 0.64 ms with the
   * transfers, 0.44 / 0.42 ms without). test/beta/worker-post-copies.test.ts keeps it so.
   *   The copies are small: an adopt-rows message holds one hand-over slice (at most 256 watchers,
   * 8 KiB); the introductions of 10,000 watches opened in one turn (390 KiB) cost ~0.1-0.2 ms to copy
   * and post, against ~0.05 ms moved.
   */
  post(msg: MainToWorker): void {
    if (this.closed && msg.op !== 'stop') return;
    if (channels.workerPost.hasSubscribers)
      channels.workerPost.publish({ cache: this.source, from: 'main', message: msg });
    if (this.worker !== undefined) this.worker.postMessage(msg);
    else {
      const endpoint = this.inProcess!;
      this.clock.setTimeout(() => endpoint.handle(msg), 0);
    }
  }

  /** Stop the worker for good (its exit is expected now). */
  close(): void {
    if (this.closed) return;
    this.post({ op: 'stop' });
    this.closed = true;
    this.doorbell?.release(); // settles the pending wait (answerDoorbell then sees `closed`)
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) void worker.terminate();
  }

  private onMessage(msg: WorkerToMain): void {
    if (this.closed) return;
    if (channels.workerPost.hasSubscribers)
      channels.workerPost.publish({ cache: this.source, from: 'worker', message: msg });
    const timed = channels.catchUpMain.hasSubscribers;
    const t0 = timed ? performance.now() : 0;
    this.handle(msg);
    if (timed)
      channels.catchUpMain.publish({ cache: this.source, step: 'worker-message', durationMs: performance.now() - t0 });
  }

  private handle(msg: WorkerToMain): void {
    switch (msg.op) {
      case 'pushed':
        this.account(msg);
        this.handler.pushedInto(msg.ids);
        break;
      case 'handback':
        this.account(msg.totals); // before the watcher is back: its readers see complete totals
        this.handler.handBack(msg.id, msg.position, msg.passPushes);
        break;
      case 'expire':
        this.account(msg.totals);
        this.handler.expired(msg.id, msg.position, msg.oldest);
        break;
      case 'reset-done':
        this.handler.resetDone();
        break;
      case 'warmed-up':
        // The rehearsal's passes and pushes are never in the stats or the metrics; tools see the message
        // on the worker-post channel (onMessage).
        break;
      case 'error':
        this.handler.error(msg.message);
        break;
    }
  }

  /** A pass's accounting: the stats, the `pass` observer channel, the deferred-events counter. */
  private account(msg: WorkerTotals): void {
    const s = this.stats;
    const b = this.before; // this worker's totals start where the dead ones' ended
    const passes = b.passes + msg.passes;
    const pushes = b.pushes + msg.pushes;
    const scanned = b.scanned + msg.scanned;
    const workMs = b.workMs + msg.workMs;
    if (pushes === s.pushes && passes === s.passes && scanned === s.scanned && workMs === s.workMs) return; // nothing new (a hand-back right after a notice)
    if (channels.pass.hasSubscribers) {
      channels.pass.publish({
        cache: this.source,
        thread: 'worker',
        passes: passes - s.passes,
        durationMs: workMs - s.workMs,
        scanned: scanned - s.scanned,
        pushes: pushes - s.pushes,
        cohorts: 0,
        resynced: 0,
        expired: 0,
      });
    }
    s.passes = passes;
    s.workMs = workMs;
    s.pushes = pushes;
    s.scanned = scanned;
    s.decodes = b.decodes + msg.decodes;
    this.metrics.deferredEvents.inc(Math.max(0, pushes - this.reportedPushes)); // monotone: `before` carries the dead workers
    this.reportedPushes = pushes;
  }
}

/**
 * After a worker died, an unsynced watcher's true position: the furthest of
 * what the dead worker recorded in its cell, what is still queued in its
 * channel and what the consumer already took. The channel's writer side
 * comes back to the main thread (the dead worker's role), ready to be handed
 * to the new worker.
 */
export function recoverPosition(w: Watcher, history: EventHistory): void {
  const channel = w.queue as SharedWatcherChannel;
  w.cursor.raiseTo(w.receivedRV);
  const ref = channel.lastPushedRef();
  if (
    ref >= 0 &&
    channel.lastPushedVariant !== Variant.BOOKMARK &&
    ref >= history.startIndex &&
    ref < history.endIndex
  ) {
    w.cursor.raiseTo(history.at(ref).rv); // pushed, but the dead worker may not have recorded it
  }
  channel.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN); // the dead worker's role
}

/** A beta watcher's channel (beta gives every watcher a SharedWatcherChannel). */
function channelOf(watcher: Watcher): SharedWatcherChannel {
  return watcher.queue as SharedWatcherChannel;
}

/**
 * The introduction of a watcher with buffers of its own (consumed in another
 * thread): its channel, position cell and selection. A pooled one's is a row
 * of numbers (`queueIntroRow`).
 */
function introduction(watcher: Watcher): Pick<AdoptRequest, 'channel' | 'selection' | 'cell'> {
  const channel = channelOf(watcher);
  return {
    channel: channel.handle,
    selection: specOf(watcher.selection),
    cell: channel.positionCell.buffer as SharedArrayBuffer,
  };
}
