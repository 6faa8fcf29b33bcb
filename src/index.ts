/**
 * watchcache: a watch-cache engine for Node.js (KEP-6268 stall and resume).
 * The public entry point; everything exported here is the library contract
 * of API.md.
 */
export { WatchCache, errorEvent, type ListResult } from './cache/watch-cache.js';
export { MODES, suggestedChannelSize, type Mode, type WatchCacheOptions } from './cache/cache-options.js';
export type { GetOptions, ListOptions, ResourceVersionMatch, WatchOptions } from './cache/request-options.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory-store.js';
export { EtcdStore, type EtcdStoreOptions } from './store/etcd-store.js';
export { KubeStore, type KubeStoreOptions, type KubeResource } from './store/kube-store.js';
export { KubeClient, type KubeClientOptions } from './store/kube-client.js';
export { StoreCompactedError, StoreUnavailableError, UpstreamStatusError } from './store/store-errors.js';
export { DEFAULT_OBJECT_LIMITS, type ObjectLimits } from './store/stored-shape.js';
export { DEFAULT_COMPACTION, type CompactionLimits } from './store/memory-compaction.js';
export { StoreHealth, type HealthState, type HealthListener } from './store/store-health.js';
export { PreconditionFailedError, type DeletePreconditions } from './store/write-preconditions.js';
export { MAX_WATCH_TIMEOUT_SECONDS } from './cache/request-options.js';
export {
  WatchCacheError,
  BadRequestError,
  ConflictError,
  InternalError,
  NotFoundError,
  RequestEntityTooLargeError,
  ResourceExpiredError,
  ServiceUnavailableError,
  TooLargeResourceVersionError,
  TooManyRequestsError,
  makeStatus,
  type Status,
  type StatusDetails,
} from './core/errors.js';
export { realClock, type Clock, type TimerHandle } from './core/clock.js';
export {
  DEFAULT_RESOURCE,
  apiVersionOf,
  type ChangeType,
  type IndexerFunc,
  type KubeObject,
  type ObjectMeta,
  type ResourceInfo,
  type Store,
  type StoreEvent,
  type StoreListResult,
  type StoreWatch,
  type WatchEventLike,
  type WatchEventType,
} from './core/types.js';
export type { EndReason } from './watch/watcher.js';
export type { Watch, CacheWatchEvent, ObjectWatchEvent, ErrorWatchEvent } from './watch/watch.js';
export {
  CHANNEL_NAMES,
  observe,
  type StallMessage,
  type ResyncMessage,
  type ExpireMessage,
  type WatcherEndMessage,
  type PassMessage,
  type CatchUpMainMessage,
  type MirrorMessage,
  type EventPhasesMessage,
} from './observe/channels.js';
export type { EncodingCounter } from './wire/watch-event.js';
export { openWatch, RemoteWatch, type WatchPortHandle } from './beta/watch-port.js';
export { WatchEvent } from './wire/watch-event.js';
export { DEFAULT_PASS_OPTIONS, type PassOptions } from './sync/pass-options.js';
export {
  capacityUpperBound,
  DEFAULT_LOWER_BOUND,
  DEFAULT_UPPER_BOUND,
  DEFAULT_EVENT_FRESH_DURATION_MS,
  type HistoryOptions,
} from './history/event-history.js';
export { parseLabelSelector, LabelSelector } from './selection/label-selector.js';
export { parseFieldSelector, FieldSelector } from './selection/field-selector.js';
