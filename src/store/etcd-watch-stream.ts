/**
 * EtcdWatchStream: one running EtcdStore watch over a raw etcd gRPC Watch stream of its own, with
 * its resume point, reconnects, compaction handling and progress (docs/etcd.md "Watch"; the
 * stream's life cycle is shared with KubeWatch in resuming-watch.ts).
 * - It does not use the etcd3 client's managed Watcher, whose resume point can skip events
 *   (docs/etcd.md "The etcd3 client").
 * - Events are delivered in revision order, each exactly once. `resumeRV` is the last revision
 *   whose events were all delivered, or that a progress notification or proof covered. A
 *   (re)connect always creates the watch from resumeRV + 1; any event at or below it is dropped.
 * - After a stream failure it reconnects with back-off. If it cannot re-create the watch within
 *   watchReconnectTimeoutMs, or etcd cancels the watch, onError is called once and the watch is
 *   dead (the cache re-lists). A cancel with a compact_revision (the start revision was compacted,
 *   at the start or while the watch was stalled) is onError(StoreCompactedError): the cache's 410.
 * - Progress: etcd's periodic notifications, and on request a proof by reads (`requestProgress`).
 *   It never sends etcd's on-demand progress request: on 3.4 its reply can overtake events.
 */
import type { IDuplexStream, IEvent, IWatchRequest, IWatchResponse } from 'etcd3';
import type { Clock } from '../core/clock.js';
import type { StoreEvent } from '../core/types.js';
import { ReconnectBackoff, ResumingWatch, type WatchCallbacks } from './resuming-watch.js';
import { StoreCompactedError, StoreUnavailableError } from './store-errors.js';
import type { StoreHealth } from './store-health.js';

/** A raw etcd Watch stream (grpc-js duplex). */
type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;

/** What an EtcdWatchStream needs from its store (closures over the store's private state). */
export interface EtcdWatchBackend {
  readonly prefix: string;
  readonly clock: Clock;
  readonly requestTimeoutMs: number;
  readonly watchReconnectTimeoutMs: number;
  openStream(): Promise<WatchStream>;
  createRequest(startRevision: number): IWatchRequest;
  decodeEvent(ev: IEvent): StoreEvent | undefined;
  /**
   * Prove that the prefix had no change in (after, R] for the current revision R: R when proven,
   * 'pending' when changes exist (their events are on the way), undefined when there is nothing to
   * prove (R <= after) or it cannot be proven (after is compacted).
   */
  proveNoChangesSince(after: number): Promise<number | 'pending' | undefined>;
  forget(w: EtcdWatchStream): void;
  readonly health: StoreHealth;
}

const RECONNECT_BACKOFF_MIN_MS = 100;
const RECONNECT_BACKOFF_MAX_MS = 2000;
/** While changes are pending, how long to wait for their events before proving again. */
const PROVE_RETRY_MS = 50;

export class EtcdWatchStream extends ResumingWatch {
  /** The last revision reported through onProgress (reports strictly increase). */
  private lastProgress = -1;
  private stream: WatchStream | undefined;
  private watchId: string | undefined;
  private outageSince: number | undefined;
  private readonly backoff = new ReconnectBackoff(RECONNECT_BACKOFF_MIN_MS, RECONNECT_BACKOFF_MAX_MS);
  private proving = false;
  private proveAgain = false;
  private progressWantedUntil = 0;

  constructor(
    private readonly backend: EtcdWatchBackend,
    afterRV: number,
    callbacks: WatchCallbacks,
  ) {
    super(backend.clock, afterRV, callbacks);
  }

  connect(): void {
    if (this.stopped) return;
    const attempt = this.nextAttempt();
    this.watchId = undefined;
    this.backend.openStream().then(
      (stream) => {
        if (!this.isCurrent(attempt)) {
          closeStream(stream);
          return;
        }
        this.stream = stream;
        stream.on('data', (res: IWatchResponse) => {
          if (this.isCurrent(attempt)) this.handle(res);
        });
        stream.on('error', (err: Error) => {
          if (this.isCurrent(attempt)) this.streamFailed(err);
        });
        stream.on('end', () => {
          if (this.isCurrent(attempt)) this.streamFailed(new Error('watch stream ended'));
        });
        // Invariant: always (re)start right after the last fully delivered revision.
        stream.write(this.backend.createRequest(this.resumeRV + 1));
        const { requestTimeoutMs } = this.backend;
        this.schedule(() => {
          if (this.isCurrent(attempt) && this.watchId === undefined) {
            this.streamFailed(new Error(`no watch-created response within ${requestTimeoutMs} ms`));
          }
        }, requestTimeoutMs);
      },
      (err: unknown) => {
        if (this.isCurrent(attempt)) this.streamFailed(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  private handle(res: IWatchResponse): void {
    if (this.stopped) return;
    if (res.created) {
      this.watchId = res.watch_id;
      this.cancelTimer();
      this.outageSince = undefined;
      this.backend.health.recover(this);
      this.backoff.reset();
      if (res.canceled) this.canceled(res);
      // The created header's revision is the store's current revision, not a proof that anything
      // was delivered (docs/etcd.md "The etcd3 client"): it is deliberately ignored.
      return;
    }
    // watch_id "-1" is an on-demand progress reply (never requested here, unsafe on 3.4.23).
    if (res.watch_id !== this.watchId) return;
    if (res.canceled) {
      this.canceled(res);
      return;
    }
    if (res.events.length === 0) {
      // Periodic progress notification: sent only once this watcher has caught up, in order with
      // its events, so every event up to header.revision has been delivered.
      this.advance(Number(res.header.revision));
      return;
    }
    const before = this.resumeRV;
    let last = before;
    for (const ev of res.events) {
      const rv = Number(ev.kv.mod_revision);
      // Invariant: no duplicates across reconnects, revision order. Anything at or below the resume
      // point was delivered before; a revision below one already delivered would be out of order.
      if (rv <= before || rv < last) continue;
      last = rv;
      const event = this.backend.decodeEvent(ev);
      if (event === undefined) continue;
      this.emit(event);
      if (this.stopped) return;
    }
    // A response holds whole revisions (no fragments): everything up to `last` is delivered.
    if (last > this.resumeRV) this.resumeRV = last;
  }

  private canceled(res: IWatchResponse): void {
    const compactRev = Number(res.compact_revision);
    if (compactRev > 0) {
      this.fail(new StoreCompactedError(this.resumeRV, compactRev));
    } else {
      this.fail(
        new StoreUnavailableError(
          `etcd canceled the watch on ${this.backend.prefix}: ${res.cancel_reason || 'no reason given'}`,
        ),
      );
    }
  }

  /** The watch has provably delivered everything up to `rv`. */
  private advance(rv: number): void {
    if (this.stopped || rv < this.resumeRV) return;
    this.resumeRV = rv;
    if (rv > this.lastProgress) {
      this.lastProgress = rv;
      this.reportProgress(rv);
    }
  }

  private streamFailed(err: Error): void {
    if (this.stopped) return;
    this.abandonStream();
    const { watchReconnectTimeoutMs } = this.backend;
    const now = this.clock.now();
    if (this.outageSince === undefined) this.outageSince = now;
    this.backend.health.fail(this, err);
    if (now - this.outageSince >= watchReconnectTimeoutMs) {
      this.fail(
        new StoreUnavailableError(
          `etcd watch on ${this.backend.prefix} could not resume from revision ${this.resumeRV + 1} for ${Math.round(now - this.outageSince)} ms: ${err.message}`,
          { cause: err },
        ),
      );
      return;
    }
    this.schedule(() => this.connect(), this.backoff.next());
  }

  /** Report progress soon: prove by reads that nothing is pending (docs/etcd.md "Progress"). */
  requestProgress(): void {
    if (this.stopped) return;
    this.progressWantedUntil = this.clock.now() + this.backend.requestTimeoutMs;
    if (this.proving) {
      this.proveAgain = true;
      return;
    }
    void this.proveLoop();
  }

  private async proveLoop(): Promise<void> {
    const { clock } = this;
    this.proving = true;
    try {
      while (!this.stopped && clock.now() < this.progressWantedUntil) {
        this.proveAgain = false;
        const after = this.resumeRV;
        const result = await this.backend.proveNoChangesSince(after);
        if (typeof result === 'number') {
          // No event exists in (after, result]; events above `result` may have been delivered
          // meanwhile, in which case advance() ignores the older proof.
          this.advance(result);
          if (!this.proveAgain) return;
          continue;
        }
        if (result === undefined && !this.proveAgain) return;
        // Pending changes: wait for their events, then prove again.
        await new Promise<void>((resolve) => clock.setTimeout(resolve, PROVE_RETRY_MS));
      }
    } catch {
      // etcd unavailable: periodic notifications and the reconnect path take over.
    } finally {
      this.proving = false;
    }
  }

  protected dropStream(): void {
    if (this.stream !== undefined) {
      closeStream(this.stream);
      this.stream = undefined;
    }
    this.watchId = undefined;
  }

  protected released(): void {
    this.backend.forget(this);
    this.backend.health.recover(this); // a stopped watch no longer speaks for the store (a relist will)
  }
}

/**
 * Close a raw watch stream. end() first: the client's own 'error' hook on the stream treats a
 * CANCELLED error on a still-writable stream as a host failure and resets every connection.
 */
function closeStream(stream: WatchStream): void {
  stream.on('error', () => undefined);
  try {
    stream.end();
  } catch {
    /* already closed */
  }
  try {
    stream.cancel();
  } catch {
    /* already closed */
  }
}
