/**
 * Watch: what `cache.watch()` returns, the public face of a watch. An async
 * iterator of events, `stop()`, and why it ended. The engine's Watcher
 * (src/watch/watcher.ts) implements it; its cursor, channel and owner
 * callbacks stay internal.
 *
 * Events are a discriminated union on `type`: ADDED, MODIFIED, DELETED and
 * BOOKMARK carry a Kubernetes object; ERROR carries a `Status` (410 Expired,
 * 504 Timeout, ...) and is the last event of the watch.
 */
import type { Status } from '../core/errors.js';
import type { KubeObject } from '../core/types.js';
import type { WatchEvent } from '../wire/watch-event.js';
import type { EndReason } from './watcher.js';

/** The shared, encoded-once event (read-only: every watcher that selects it gets the same one). */
type EventBody = Omit<WatchEvent, 'type' | 'object'>;

export type ObjectWatchEvent = EventBody & {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  readonly object: KubeObject;
};
export type ErrorWatchEvent = EventBody & { readonly type: 'ERROR'; readonly object: Status };
export type CacheWatchEvent = ObjectWatchEvent | ErrorWatchEvent;

export interface Watch extends AsyncIterableIterator<CacheWatchEvent> {
  /** End the watch now (also: leaving a for-await loop, the AbortSignal). Idempotent. */
  stop(): void;
  /** Why it ended; undefined while it runs. */
  readonly reason: EndReason | undefined;
  readonly stopped: boolean;
}
