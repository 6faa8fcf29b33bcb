/**
 * KubeWatch: one store watch over an upstream Kubernetes API server's watch
 * API, kept alive across broken streams (KubeStore's `watch`). The life cycle it shares with
 * EtcdStore's watch (resume point, stream attempts, timer, back-off, fail and stop) is
 * ResumingWatch's (resuming-watch.ts, which also says what differs and why).
 *
 * Invariants
 * - `resumeRV` is the last RV whose events were all delivered (or that a bookmark proved). Every
 *   (re)connect watches from `resumeRV` (`resourceVersion=resumeRV`, events strictly above it),
 *   and any event at or below it is dropped: each event is delivered once, in RV order, with the
 *   upstream's RV unchanged.
 * - A BOOKMARK's RV R means the upstream has sent this watch every event up to R (Kubernetes:
 *   re-watching from R neither repeats nor misses), so it is store progress: onProgress(R).
 * - A broken stream (reset, refused, non-200 other than 410, an in-stream ERROR other than 410)
 *   or a clean end (the upstream's timeout, its shutdown) reconnects from `resumeRV` after a back-off
 *   with jitter (equal jitter, 200 ms doubling to 5 s; reset once a stream delivers something), so
 *   a fleet of proxies cut at once does not reconnect in lockstep. It never gives up by itself: a
 *   long outage is reported as unreachability (`unreachableSince`), not as a watch error, so the
 *   cache keeps serving what it has and catches up from the upstream's history when it returns.
 * - A 410 (an HTTP 410, or an in-stream ERROR with code 410: the upstream's history no longer
 *   reaches `resumeRV`) is the one terminal error: onError(StoreCompactedError), once, after a
 *   jittered delay (up to 1 s) so that proxies expired together re-list at different moments.
 *
 * From RV 0 (an upstream that was empty when listed) the watch is a watch-list (sendInitialEvents),
 * its initial events delivered in RV order once the initial-events-end bookmark arrives.
 *
 * requestProgress (consistent reads waiting for the upstream's current RV): the upstream has no
 * "progress request" API, so a short probe watch from L = resumeRV (allowWatchBookmarks,
 * timeoutSeconds 3: both kube-apiserver and watchcache send a bookmark about 2 s before a watch's
 * deadline) is opened. If its first event is a BOOKMARK at B > L, the upstream had no event for
 * this collection in (L, B], so onProgress(B) is exact for the main stream too. If it is a change,
 * that change is on its way on the main stream: nothing is reported. One probe at a time.
 */
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../core/clock.js';
import type { Status } from '../core/errors.js';
import type { StoreEvent } from '../core/types.js';
import { upstreamError } from './kube-client.js';
import { KubeWatchStream, type WatchStreamHandlers, type WireWatchEvent } from './kube-watch-stream.js';
import { ReconnectBackoff, ResumingWatch, type WatchCallbacks } from './resuming-watch.js';
import { StoreCompactedError, UpstreamStatusError } from './store-errors.js';

/** What a KubeWatch needs from its store. */
export interface KubeWatchBackend {
  readonly clock: Clock;
  readonly probeTimeoutSeconds: number;
  /**
   * Open `?watch=true&resourceVersion=rv&allowWatchBookmarks=true` (+ timeoutSeconds when given;
   * + sendInitialEvents=true&resourceVersionMatch=NotOlderThan when `initialEvents`).
   */
  openWatch(
    rv: number,
    signal: AbortSignal,
    timeoutSeconds?: number,
    initialEvents?: boolean,
  ): Promise<IncomingMessage>;
  /** A watch reached the upstream (200) or could not (refused, 5xx...). */
  reached(ok: boolean, error?: Error): void;
  /** The upstream answered 410 (the watch ends; the cache re-lists). */
  expired(): void;
  forget(w: KubeWatch): void;
}

const BACKOFF_MIN_MS = 200;
const BACKOFF_MAX_MS = 5000;
const EXPIRED_JITTER_MS = 1000;

/** The RV of a wire object; undefined when absent or not a decimal integer. */
export function wireRV(object: { metadata?: { resourceVersion?: unknown } }): number | undefined {
  const rv = object.metadata?.resourceVersion;
  if (typeof rv !== 'string' || !/^\d+$/.test(rv)) return undefined;
  const n = Number(rv);
  return Number.isSafeInteger(n) ? n : undefined;
}

export class KubeWatch extends ResumingWatch {
  private abort: AbortController | undefined;
  private stream: KubeWatchStream | undefined;
  private readonly backoff: ReconnectBackoff;
  private probing = false;
  /** Events (or bookmarks) the current stream delivered. */
  private receivedOnStream = 0;
  /** From RV 0: the initial ADDED events, held until the initial-events-end bookmark. */
  private initial: StoreEvent[] | undefined;

  constructor(
    private readonly backend: KubeWatchBackend,
    afterRV: number,
    callbacks: WatchCallbacks,
  ) {
    super(backend.clock, afterRV, callbacks);
    this.backoff = new ReconnectBackoff(BACKOFF_MIN_MS, BACKOFF_MAX_MS, () => backend.clock.random());
  }

  connect(): void {
    if (this.stopped) return;
    const attempt = this.nextAttempt();
    const abort = (this.abort = new AbortController());
    this.receivedOnStream = 0;
    // From RV 0 (an upstream that was empty when listed), "resourceVersion=0" means "any state,
    // then changes": its initial events come in key order, not RV order. Ask for them as a
    // watch-list instead, hold them until the initial-events-end bookmark and deliver them in RV order.
    this.initial = this.resumeRV === 0 ? [] : undefined;
    // Invariant: always (re)start right after the last fully delivered RV.
    this.backend.openWatch(this.resumeRV, abort.signal, undefined, this.initial !== undefined).then(
      (res) => {
        if (!this.isCurrent(attempt)) {
          res.destroy();
          return;
        }
        if (res.statusCode !== 200) {
          void readError(res).then((err) => {
            if (!this.isCurrent(attempt)) return;
            if (err.code === 410) return this.expired(err.status);
            this.backend.reached(false, err);
            this.retry(err);
          });
          return;
        }
        this.backend.reached(true);
        this.stream = new KubeWatchStream(res, this.handlersOf(attempt));
      },
      (err: Error) => {
        if (!this.isCurrent(attempt)) return;
        this.backend.reached(false, err);
        this.retry(err);
      },
    );
  }

  /**
   * Continue on a stream that already delivered everything up to resumeRV (KubeStore's watch-list
   * list): `pending` are the events it sent since, `ended` whether it has ended meanwhile.
   */
  adopt(stream: KubeWatchStream, pending: readonly WireWatchEvent[], ended: Error | undefined | false): void {
    if (this.stopped) return stream.close();
    const attempt = this.nextAttempt();
    this.stream = stream;
    this.initial = undefined;
    this.receivedOnStream = 0;
    for (const ev of pending) {
      if (!this.isCurrent(attempt)) return;
      this.handle(ev);
    }
    if (!this.isCurrent(attempt)) return;
    if (ended !== false) return this.retry(ended ?? new Error('the upstream ended the watch'));
    stream.setHandlers(this.handlersOf(attempt));
  }

  /** A stream's handlers for one attempt: a stream of an abandoned attempt is not heard. */
  private handlersOf(attempt: number): WatchStreamHandlers {
    return {
      onEvent: (ev) => {
        if (this.isCurrent(attempt)) this.handle(ev);
      },
      onEnd: (err) => {
        if (this.isCurrent(attempt)) this.retry(err ?? new Error('the upstream ended the watch'));
      },
    };
  }

  private handle(ev: WireWatchEvent): void {
    if (this.stopped) return;
    if (ev.type === 'ERROR') {
      const status = ev.object as unknown as Status;
      if (status.code === 410) return this.expired(status);
      return this.retry(new UpstreamStatusError(typeof status.code === 'number' ? status.code : 500, status));
    }
    const rv = wireRV(ev.object);
    if (rv === undefined) return this.retry(new Error(`a ${ev.type} event without a valid metadata.resourceVersion`));
    this.receivedOnStream++;
    if (this.initial !== undefined) {
      if (ev.type !== 'BOOKMARK')
        return void this.initial.push({ type: ev.type, object: ev.object, resourceVersion: rv });
      if (ev.object.metadata.annotations?.['k8s.io/initial-events-end'] !== 'true') return;
      // The state at `rv`: each object once, at its RV; in RV order it is a valid change sequence.
      const initial = this.initial.sort((a, b) => a.resourceVersion - b.resourceVersion);
      this.initial = undefined;
      for (const e of initial) {
        if (e.resourceVersion <= this.resumeRV) continue;
        this.resumeRV = e.resourceVersion;
        this.emit(e);
        if (this.stopped) return;
      }
    }
    if (ev.type === 'BOOKMARK') return this.advance(rv);
    // Invariant: once, in RV order. Anything at or below the resume point was delivered before.
    if (rv <= this.resumeRV) return;
    this.resumeRV = rv;
    this.emit({ type: ev.type, object: ev.object, resourceVersion: rv });
  }

  /** The upstream proved everything up to `rv` delivered (a bookmark, or a probe's bookmark). */
  private advance(rv: number): void {
    if (this.stopped || rv <= this.resumeRV) return;
    this.resumeRV = rv;
    this.reportProgress(rv);
  }

  /** Reconnect from resumeRV after a back-off with jitter. */
  private retry(_err: Error): void {
    if (this.stopped) return;
    const fruitful = this.receivedOnStream > 0;
    this.abandonStream();
    if (fruitful) this.backoff.reset();
    this.schedule(() => this.connect(), this.backoff.next());
  }

  /** 410: the upstream's history no longer reaches resumeRV. Terminal; reported after a jitter. */
  private expired(status: Status): void {
    if (this.stopped) return;
    this.abandonStream();
    this.backend.expired();
    const m = /\((\d+)\)/.exec(status.message ?? '');
    const error = new StoreCompactedError(this.resumeRV, m !== null ? Number(m[1]) : this.resumeRV);
    this.schedule(() => this.fail(error), this.clock.random() * EXPIRED_JITTER_MS);
  }

  requestProgress(): void {
    if (this.stopped || this.probing) return;
    this.probing = true;
    const from = this.resumeRV;
    const abort = new AbortController();
    const done = (): void => {
      this.probing = false;
      abort.abort();
    };
    this.backend.openWatch(from, abort.signal, this.backend.probeTimeoutSeconds).then(
      (res) => {
        if (this.stopped || res.statusCode !== 200) {
          res.destroy();
          return done();
        }
        const probe = new KubeWatchStream(res, {
          onEvent: (ev) => {
            // Invariant (progress): a bookmark as the FIRST event proves no change in (from, B].
            if (ev.type === 'BOOKMARK') {
              const b = wireRV(ev.object);
              if (b !== undefined && b > from) this.advance(b);
            }
            probe.close();
            done();
          },
          onEnd: () => done(),
        });
      },
      () => done(),
    );
  }

  protected dropStream(): void {
    this.stream?.close();
    this.stream = undefined;
    this.abort?.abort();
    this.abort = undefined;
  }

  protected released(): void {
    this.backend.forget(this);
  }
}

async function readError(res: IncomingMessage): Promise<UpstreamStatusError> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of res) chunks.push(c as Buffer);
  } catch {
    // a broken error body: the status line is enough
  }
  return upstreamError(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'));
}
