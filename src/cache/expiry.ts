/**
 * Expiry: the one way a watcher ends with its 410 Expired, from numbers
 * (the position the client must resume from and the oldest servable RV - 1),
 * never from parsing a message. Every 410 a watch can get goes through
 * `end` below: a position that aged out of the history (after its backlog),
 * a replay or a channel overtaken by the history (backlog dropped: it would
 * follow a gap), and a start RV older than the history.
 */
import { ResourceExpiredError, makeStatus, type WatchCacheError } from '../core/errors.js';
import type { KubeObject } from '../core/types.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { channels } from '../observe/channels.js';
import type { Watcher } from '../watch/watcher.js';
import { WatchEvent } from '../wire/watch-event.js';

/** How the backlog is treated. */
export const enum ExpiryKind {
  /** The position aged out: the backlog is delivered first, then the 410. */
  AfterBacklog = 0,
  /** The backlog follows a gap (overtaken replay, overwritten channel): dropped, the 410 now. */
  DropBacklog = 1,
  /** The start RV is older than the history: the 410 is the only event. */
  AtStart = 2,
}

export class Expiry {
  private readonly metrics: CacheMetrics;
  /** Take the watcher off the live path and out of its mode's sets. */
  private readonly detach: (w: Watcher) => void;
  private readonly source: object;

  constructor(metrics: CacheMetrics, detach: (w: Watcher) => void, source: object) {
    this.metrics = metrics;
    this.detach = detach;
    this.source = source;
  }

  /** Alpha/beta: its position aged out; backlog, then one 410 naming what the client reached (or `position`). */
  afterBacklog(w: Watcher, position: number, oldestMinus1: number): void {
    if (!w.accepting) return;
    this.end(w, ExpiryKind.AfterBacklog, position, oldestMinus1, !w.reachedLive);
  }

  /** The backlog follows a gap: it is dropped and the 410 names what the client received. */
  dropBacklog(w: Watcher, oldestMinus1: number, initial: boolean): void {
    if (w.stopped) return;
    this.end(w, ExpiryKind.DropBacklog, w.receivedRV, oldestMinus1, initial);
  }

  /** A start at `rv`, older than the history. */
  atStart(w: Watcher, rv: number, oldestMinus1: number): void {
    if (w.state !== 'pending') return;
    this.end(w, ExpiryKind.AtStart, rv, oldestMinus1, true);
  }

  /** The one function that ends a watcher with its 410. */
  private end(w: Watcher, kind: ExpiryKind, position: number, oldestMinus1: number, initial: boolean): void {
    // Counted once: a watcher already draining toward a 410 (or a start) is not counted again.
    if (kind !== ExpiryKind.AtStart && w.accepting) {
      this.detach(w);
      this.metrics.terminated[initial ? 'resource_expired_initial' : 'resource_expired'].inc();
    }
    if (channels.expire.hasSubscribers)
      channels.expire.publish({ cache: this.source, watcherId: w.id, position, oldestMinus1, kind: KIND_NAMES[kind] });
    const channel = w.queue;
    if (channel.remote === true && kind !== ExpiryKind.DropBacklog) {
      // The consuming thread drains what is queued, then yields the 410 from these numbers.
      channel.endRemote?.({ position, oldestMinus1 });
      if (kind === ExpiryKind.AfterBacklog) {
        w.stop('expired');
        return;
      }
    }
    if (kind === ExpiryKind.AtStart) {
      w.activate(0, undefined);
      w.drain('error', errorEvent(ResourceExpiredError.tooOld(position, oldestMinus1)));
    } else if (kind === ExpiryKind.AfterBacklog) {
      // The 410 names the RV the client has reached (`position` when nothing was delivered: where it had to resume).
      w.drain('expired', (received) =>
        errorEvent(ResourceExpiredError.tooOld(received > 0 ? received : position, oldestMinus1)),
      );
    } else {
      w.abort('expired', errorEvent(ResourceExpiredError.tooOld(position, oldestMinus1)));
    }
  }
}

const KIND_NAMES = ['after-backlog', 'drop-backlog', 'at-start'] as const;

/** An ERROR event carrying the error's Status. */
export function errorEvent(err: WatchCacheError): WatchEvent {
  return new WatchEvent(
    'ERROR',
    makeStatus(err.code, err.reason, err.message, err.status.details) as unknown as KubeObject,
    0,
  );
}
