/**
 * ResumingWatch: what every store watch over a remote stream that can break shares. Two watches use
 * it: EtcdWatchStream (etcd's gRPC Watch) and KubeWatch (an upstream Kubernetes API server's HTTP
 * watch). The shared part:
 * - the resume point `resumeRV`: the last RV whose events were all delivered, or that the remote
 *   proved it had sent. Every (re)connect starts right after it.
 * - stream attempts. Each (re)connect is a new attempt, and a callback of an abandoned attempt is
 *   ignored (`isCurrent`).
 * - one timer slot: the reconnect delay, a deadline, an expiry delay.
 * - the reconnect back-off (ReconnectBackoff).
 * - the consumer callbacks, guarded so an exception does not unwind into the stream's handler.
 * - the terminal `fail` (onError once) and `stop`.
 *
 * What differs stays in the two watches, because the remote protocols differ:
 * - What one message holds. An etcd response holds whole revisions, and one revision can hold
 *   several events (a txn), so the etcd watch moves resumeRV once per response. An upstream watch
 *   event has an RV of its own, so KubeWatch moves resumeRV once per event.
 * - What counts as new progress. etcd: a notification at or above resumeRV that is above the last
 *   one reported. Kubernetes: a bookmark strictly above resumeRV. A bookmark at the last event's RV
 *   says nothing new (test/store/kube-store.test.ts checks that nothing is reported then).
 * - When it gives up. etcd: after watchReconnectTimeoutMs without a watch (the cache re-lists).
 *   An upstream: never, except on a 410.
 * - The back-off parameters, and how progress is requested (docs/etcd.md; kube-watch.ts).
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { StoreEvent } from '../core/types.js';

/**
 * Reconnect delays. The ceiling starts at minMs and doubles per attempt, up to maxMs. With `random`
 * the delay has equal jitter (half the ceiling fixed, half random), so that watches cut together do
 * not reconnect in lockstep. Without it the delay is the ceiling.
 */
export class ReconnectBackoff {
  private attempt = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
    private readonly random?: () => number,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.minMs * 2 ** this.attempt);
    this.attempt++;
    return this.random === undefined ? ceiling : ceiling / 2 + this.random() * (ceiling / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** The consumer's side of a store watch (Store.watch's callbacks). */
export interface WatchCallbacks {
  readonly onEvent: (event: StoreEvent) => void;
  readonly onError: (error: Error) => void;
  readonly onProgress?: ((resourceVersion: number) => void) | undefined;
}

export abstract class ResumingWatch {
  /** The last RV whose events were all delivered (or that the remote proved it had sent). */
  protected resumeRV: number;
  protected stopped = false;
  /** Incremented per stream attempt and when one is abandoned. */
  private generation = 0;
  private timer: TimerHandle | undefined;

  constructor(
    protected readonly clock: Clock,
    afterRV: number,
    private readonly callbacks: WatchCallbacks,
  ) {
    this.resumeRV = afterRV;
  }

  /** Close the current stream, if any (no further callbacks from it matter). */
  protected abstract dropStream(): void;

  /** The watch stopped: unregister it from its store. */
  protected abstract released(): void;

  /** Begin a new stream attempt; its callbacks check `isCurrent(attempt)`. */
  protected nextAttempt(): number {
    return ++this.generation;
  }

  /** Whether `attempt` is the current one (a stopped watch has none). */
  protected isCurrent(attempt: number): boolean {
    return attempt === this.generation;
  }

  /** Hand one event to the consumer. */
  protected emit(event: StoreEvent): void {
    deliver(this.callbacks.onEvent, event);
  }

  /** Report progress to the consumer (when it listens). */
  protected reportProgress(rv: number): void {
    const { onProgress } = this.callbacks;
    if (onProgress !== undefined) deliver(onProgress, rv);
  }

  /** Run `fn` after `delayMs` in the watch's one timer slot (replacing what was there). */
  protected schedule(fn: () => void, delayMs: number): void {
    this.cancelTimer();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      fn();
    }, delayMs);
  }

  protected cancelTimer(): void {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** End the current attempt: its callbacks are ignored from now on, its timer and stream are gone. */
  protected abandonStream(): void {
    this.generation++;
    this.cancelTimer();
    this.dropStream();
  }

  /** Report a terminal error once and stop. */
  fail(err: Error): void {
    if (this.stopped) return;
    this.stop();
    deliver(this.callbacks.onError, err);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abandonStream();
    this.released();
  }
}

/**
 * Call a consumer callback. It runs inside the stream's data handler (grpc-js, or a socket's), so an
 * exception is re-thrown on a later tick instead of unwinding through it (the event counts as
 * delivered).
 */
function deliver<T>(callback: (value: T) => void, value: T): void {
  try {
    callback(value);
  } catch (err) {
    setImmediate(() => {
      throw err;
    });
  }
}
