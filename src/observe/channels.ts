/**
 * The engine's observer API on node:diagnostics_channel (the convention
 * undici and fastify use). Every channel is named `watchcache:…`; payloads
 * are documented in docs/observability.md and typed below. A payload is
 * built, and a phase timed, only while the channel has subscribers: with
 * nobody listening the hot path pays one `hasSubscribers` read.
 *
 * Every payload carries `cache`, the WatchCache that published it (channels
 * are process-wide: a subscriber filters on it).
 */
import diagnostics_channel from 'node:diagnostics_channel';
import type { MainToWorker, WorkerToMain } from '../beta/sync-messages.js';
import type { PassMember, PassStats } from '../sync/sync-pass.js';

export const CHANNEL_NAMES = {
  stall: 'watchcache:stall',
  resync: 'watchcache:resync',
  expire: 'watchcache:expire',
  watcherEnd: 'watchcache:watcher-end',
  pass: 'watchcache:pass',
  catchUpMain: 'watchcache:catchup-main',
  mirror: 'watchcache:mirror',
  event: 'watchcache:event',
} as const;

/**
 * Tool channels: per-pass detail for the simulator's cost model. Their
 * payloads carry engine objects (the pass members), so they are not part of
 * the public contract: not exported from the package entry (`observeTool`).
 */
const TOOL_CHANNEL_NAMES = {
  passStart: 'watchcache:pass-start',
  passWork: 'watchcache:pass-work',
  passResync: 'watchcache:pass-resync',
  workerPost: 'watchcache:worker-post',
} as const;

/** A watcher entered its mode's unsynced set. */
export interface StallMessage {
  cache: object;
  watcherId: number;
  /** Its position when it entered (the RV before the event it missed, or its start RV). */
  position: number;
  /** 'full': its channel was full on the live path; 'start': beta adopts a watch from an old RV. */
  cause: 'full' | 'start';
  /** Size of the unsynced set after it entered. */
  unsynced: number;
}

/** A watcher caught up and is back on the live path. */
export interface ResyncMessage {
  cache: object;
  watcherId: number;
  position: number;
  /** Events pushed by catch-up during this unsynced episode. */
  passPushes: number;
  unsynced: number;
}

/** A watcher is ending with a 410 Expired. */
export interface ExpireMessage {
  cache: object;
  watcherId: number;
  /** The RV the 410 names when nothing more is delivered (the consumer's resume point). */
  position: number;
  oldestMinus1: number;
  /** 'after-backlog': position aged out; 'drop-backlog': the backlog followed a gap; 'at-start': start RV too old. */
  kind: 'after-backlog' | 'drop-backlog' | 'at-start';
}

/** A watcher ended (any reason: client, timeout, expired, ...). */
export interface WatcherEndMessage {
  cache: object;
  watcherId: number;
  reason: string;
}

/** One or more sync passes ran (alpha: one main-thread pass; beta: what the worker reported since its last report). */
export interface PassMessage {
  cache: object;
  thread: 'main' | 'worker';
  passes: number;
  /** Pass work time on that thread (ms): alpha, the synchronous part of the pass; beta, the worker's own measure. */
  durationMs: number;
  scanned: number;
  pushes: number;
  /** Alpha only (the worker reports totals): cohorts formed, watchers resynced and expired. */
  cohorts: number;
  resynced: number;
  expired: number;
}

/**
 * One sync pass starts (every pass: alpha's on the main thread, the sync
 * worker's). `cache` is the cache, or for a worker's pass its pass host (the
 * worker thread has no cache; in-process: `betaSyncOf(cache).inProcessHost`).
 */
interface PassStartMessage {
  cache: object;
  /** The unsynced members it walks, in order (read them now: the pass moves them). */
  members: readonly PassMember[];
  oldestServableRV: number | undefined;
}

/**
 * The work one sync pass did in one synchronous stretch (the pass itself,
 * each retry round): published at the end of the stretch and, marked
 * `ended`, just before the pass reports its stats (counts since the
 * previous message of the same pass).
 */
export interface PassWorkMessage {
  cache: object;
  /** Intervals opened (one per cohort). */
  opens: number;
  scanned: number;
  pushes: number;
  /** Real time since the stretch began (ms). */
  durationMs: number;
  /** The pass's stats on the message published as it ends; undefined otherwise. */
  ended: PassStats | undefined;
}

/** A sync pass resyncs one member (published just before its host does: alpha's resync, beta's hand-back request). */
interface PassResyncMessage {
  cache: object;
  member: PassMember;
}

/**
 * Beta, the traffic between the main thread and its sync worker: `from: 'main'`, one message the main
 * thread posts to the worker, as it posts it (the batching of introductions, adopts and forgets, as the
 * worker will see it); `from: 'worker'`, one message from the worker as the main thread handles it;
 * `from: 'doorbell'`, the consumers one turn of the wake doorbell woke (no message: shared memory).
 */
type WorkerPostMessage =
  | { cache: object; from: 'main'; message: MainToWorker }
  | { cache: object; from: 'worker'; message: WorkerToMain }
  | { cache: object; from: 'doorbell'; ids: readonly number[] };

/** Beta: main-thread time spent on catch-up outside the live path. */
export interface CatchUpMainMessage {
  cache: object;
  /** 'adopt': handing a watcher to the worker; 'worker-message': hand-backs (one per slice), wake-ups, expiries. */
  step: 'adopt' | 'worker-message';
  durationMs: number;
}

/** Beta: one event mirrored into the shared history ring (msgpack encode, ring append, publish). */
export interface MirrorMessage {
  cache: object;
  rv: number;
  durationMs: number;
}

/**
 * Per ingested event, the main thread's time in each phase (ms). While this
 * channel has subscribers the engine also makes each event's JSON line before
 * fan-out, to time it apart (it would otherwise be made by the first JSON
 * consumer): the encodings counter then counts one per event.
 */
export interface EventPhasesMessage {
  cache: object;
  rv: number;
  /** history append + object state apply */
  appendMs: number;
  /** the mode's mirror (beta: msgpack encode, ring append, publish; 0 elsewhere) */
  ringMs: number;
  /** the event's JSON line, made once before fan-out (encode-once would make it on first use) */
  encodeMs: number;
  /** the live path: offers to every candidate, wake-ups, anything a full channel triggers */
  fanoutMs: number;
}

export const channels = {
  stall: diagnostics_channel.channel(CHANNEL_NAMES.stall),
  resync: diagnostics_channel.channel(CHANNEL_NAMES.resync),
  expire: diagnostics_channel.channel(CHANNEL_NAMES.expire),
  watcherEnd: diagnostics_channel.channel(CHANNEL_NAMES.watcherEnd),
  pass: diagnostics_channel.channel(CHANNEL_NAMES.pass),
  passStart: diagnostics_channel.channel(TOOL_CHANNEL_NAMES.passStart),
  passWork: diagnostics_channel.channel(TOOL_CHANNEL_NAMES.passWork),
  passResync: diagnostics_channel.channel(TOOL_CHANNEL_NAMES.passResync),
  workerPost: diagnostics_channel.channel(TOOL_CHANNEL_NAMES.workerPost),
  catchUpMain: diagnostics_channel.channel(CHANNEL_NAMES.catchUpMain),
  mirror: diagnostics_channel.channel(CHANNEL_NAMES.mirror),
  event: diagnostics_channel.channel(CHANNEL_NAMES.event),
};

interface MessageOf {
  stall: StallMessage;
  resync: ResyncMessage;
  expire: ExpireMessage;
  watcherEnd: WatcherEndMessage;
  pass: PassMessage;
  catchUpMain: CatchUpMainMessage;
  mirror: MirrorMessage;
  event: EventPhasesMessage;
}

interface ToolMessageOf {
  passStart: PassStartMessage;
  passWork: PassWorkMessage;
  passResync: PassResyncMessage;
  workerPost: WorkerPostMessage;
}

/**
 * Subscribe to one channel for one cache; returns the unsubscribe function.
 * (Tools use this; any diagnostics_channel subscriber works the same way.)
 */
export function observe<K extends keyof MessageOf>(
  cache: object,
  name: K,
  onMessage: (message: MessageOf[K]) => void,
): () => void {
  return subscribeFor(cache, CHANNEL_NAMES[name], onMessage);
}

/** `observe` for the tool channels (engine-internal: the simulator, the tests). */
export function observeTool<K extends keyof ToolMessageOf>(
  cache: object,
  name: K,
  onMessage: (message: ToolMessageOf[K]) => void,
): () => void {
  return subscribeFor(cache, TOOL_CHANNEL_NAMES[name], onMessage);
}

function subscribeFor<T>(cache: object, channel: string, onMessage: (message: T) => void): () => void {
  const listener = (message: unknown): void => {
    if ((message as { cache?: unknown }).cache === cache) onMessage(message as T);
  };
  diagnostics_channel.subscribe(channel, listener);
  return () => {
    diagnostics_channel.unsubscribe(channel, listener);
  };
}
