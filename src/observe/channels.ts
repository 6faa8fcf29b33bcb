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

/** Beta: main-thread time spent on catch-up outside the live path. */
export interface CatchUpMainMessage {
  cache: object;
  /** 'adopt': handing a watcher to the worker; 'worker-message': hand-backs, wake-ups, expiries. */
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

/**
 * Subscribe to one channel for one cache; returns the unsubscribe function.
 * (Tools use this; any diagnostics_channel subscriber works the same way.)
 */
export function observe<K extends keyof MessageOf>(cache: object, name: K, onMessage: (message: MessageOf[K]) => void): () => void {
  const listener = (message: unknown): void => {
    if ((message as { cache?: unknown }).cache === cache) onMessage(message as MessageOf[K]);
  };
  diagnostics_channel.subscribe(CHANNEL_NAMES[name], listener);
  return () => {
    diagnostics_channel.unsubscribe(CHANNEL_NAMES[name], listener);
  };
}
