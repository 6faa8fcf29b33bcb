/**
 * The messages between the main thread and the sync worker. None is sent per
 * event: adopt / hand back / expire are per watcher episode, `pushed` carries
 * the worker's totals now and then (the consumers it fed are woken through
 * the shared-memory doorbell, wake-doorbell.ts, or by `pushed` without one).
 */
import type { HistoryRingHandle } from '../ring/ring-layout.js';
import type { SpscChannelHandle } from '../ring/spsc-channel.js';
import type { PassOptions } from '../sync/pass-options.js';

/** What the worker needs to rebuild a watcher's selection (indexer functions cannot cross threads). */
export interface SelectionSpec {
  namespace: string;
  name: string;
  labelSelector: string;
  fieldSelector: string;
}

/**
 * A watcher that went unsynced at `position`: the worker owns its channel now.
 * `slot` (or `channel` and `cell`) and `selection` only the first time. As an
 * object only for a watcher with buffers of its own (consumed in another
 * thread); a pooled one travels as rows of numbers (INTRO_ROW, ADOPT_ROW).
 */
export interface AdoptRequest {
  id: number;
  position: number;
  capacity: number;
  reachedLive: boolean;
  /** Its channel and cell in a slab the worker already has (channel-slabs.ts): two numbers, no buffer. */
  slot?: { slab: number; offset: number };
  /** Buffers of its own (a watcher consumed in another thread), when there is no `slot`. */
  channel?: SpscChannelHandle;
  selection?: SelectionSpec;
  cell?: SharedArrayBuffer;
}

/** Numbers per watcher in an `adopt-rows` message: id, position, capacity, reachedLive (0/1). */
export const ADOPT_ROW = 4;

/**
 * Numbers per watcher in an `introduce-rows` message: id, slab, offset (its
 * region in a slab the worker has, channel-slabs.ts), capacity, and the id
 * of its selection's spec (worker-selection-specs.ts).
 */
export const INTRO_ROW = 5;

export type MainToWorker =
  | {
      op: 'init';
      ring: HistoryRingHandle;
      control: SharedArrayBuffer;
      pass: PassOptions;
      indexerFields: string[];
      triggerField: string | undefined;
      /**
       * The wake doorbell (wake-doorbell.ts; a worker thread only): the worker wakes main-thread consumers
       * through it, not through `pushed` ids. Absent (in-process): the ids travel in `pushed`.
       */
      doorbell?: SharedArrayBuffer;
    }
  /** A slab of pooled channels and position cells (sent once per slab, never per watcher). */
  | { op: 'slab'; id: number; buffer: SharedArrayBuffer }
  /**
   * New pooled watchers, INTRO_ROW numbers each, after the specs first used
   * by them (`selections`, each sent once): all a flush registered, one array.
   */
  | { op: 'introduce-rows'; selections: { id: number; spec: SelectionSpec }[]; rows: Float64Array }
  /** New watchers with buffers of their own (consumed in another thread): channel, cell and selection. */
  | { op: 'introduce'; watchers: AdoptRequest[] }
  /** Watchers that went unsynced (batched: one message per dispatch, not per watcher). */
  | { op: 'adopt'; watchers: AdoptRequest[] }
  /**
   * Introduced watchers that went unsynced, ADOPT_ROW numbers each (id,
   * position, capacity, reachedLive 0/1): a mass stall is one typed array.
   */
  | { op: 'adopt-rows'; rows: Float64Array }
  /**
   * Forget these watchers (stopped or ended on the main thread), then the
   * selection specs their last user took away.
   */
  | { op: 'forget'; ids: Float64Array; selections: number[] }
  /** A relist: every member is gone (the main thread ends them). */
  | { op: 'reset' }
  /** Commit the ring arena's pages below `upTo` ahead of the main thread's writer (src/ring/arena-prefault.ts). */
  | { op: 'prefault'; upTo: number }
  /**
   * A ring of synthetic events (src/beta/warm-up-ring.ts) for a new worker thread to rehearse catch-up
   * passes on, privately, until its first real adopt (src/beta/worker-warm-up.ts). After `init`.
   */
  | { op: 'warm-up'; ring: HistoryRingHandle; control: SharedArrayBuffer; selections: SelectionSpec[] }
  | { op: 'stop' };

/** The sync worker's cumulative totals (the main thread's BetaWorkerStats, metrics and `pass` channel). */
export interface WorkerTotals {
  pushes: number;
  scanned: number;
  decodes: number;
  workMs: number;
  passes: number;
}

/** What the worker's warm-up rehearsal did (src/beta/worker-warm-up.ts; the `warmed-up` message). */
export interface WarmUpTotals {
  /** Rounds of catch-up it completed over the warm-up ring. */
  rounds: number;
  passes: number;
  pushes: number;
  /** Wall time from its start to its end, ms. */
  ms: number;
  /** Ended early by real work (the first adopt) or a stop. */
  aborted: boolean;
}

export type WorkerToMain =
  /**
   * The watcher is within the hand-off distance of the last dispatched RV: the main thread owns its channel
   * again. `totals`: the worker's, with every push made for it (complete when the watcher is back).
   */
  | { op: 'handback'; id: number; position: number; passPushes: number; totals: WorkerTotals }
  /** The watcher's position aged out of the history; the main thread owns its channel again. */
  | { op: 'expire'; id: number; position: number; oldest: number; totals: WorkerTotals }
  /**
   * Waiting watchers the worker pushed into (wake their consumers: without a doorbell, or when it was
   * full), and the worker's totals (at most every STATS_EVERY_MS, and at once after a hand-back or expiry).
   */
  | ({ op: 'pushed'; ids: number[] } & WorkerTotals)
  /** The worker dropped every member and handed their channels back (answer to `reset`). */
  | { op: 'reset-done' }
  /** The warm-up rehearsal ended (all its rounds, or cut short by real work): what it did. */
  | ({ op: 'warmed-up' } & WarmUpTotals)
  | { op: 'error'; message: string };
