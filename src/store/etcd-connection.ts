/**
 * EtcdConnection: the etcd3 client as EtcdStore uses it, and how a request fails (docs/etcd.md
 * "Requests and failures").
 * - One client per store, with its own TCP connection and the gRPC options in the constructor.
 * - The client's own fault handling is switched off (a pass-through policy). Its circuit breaker
 *   kept failing calls for 5 s after etcd was back, and its global retry would re-send
 *   non-idempotent txns.
 * - `call` runs one request with a deadline (requestTimeoutMs) and maps its failure to the store's
 *   errors: unreachable or unhealthy etcd -> StoreUnavailableError (a timed-out write says it may
 *   have been applied), a compacted revision -> StoreCompactedError, a too large request -> 413.
 * - `health` is reachability as the requests see it (the watches report into it too). After a
 *   failure a probe reads every second until one succeeds.
 */
import {
  ClientClosedError,
  Etcd3,
  GRPCCancelledError,
  GRPCDeadlineExceededError,
  GRPCInternalError,
  GRPCOutOfRangeError,
  GRPCResourceExhastedError,
  GRPCUnavailableError,
  type IOptions,
} from 'etcd3';
import { RequestEntityTooLargeError } from '../core/errors.js';
import { StoreCompactedError, StoreUnavailableError } from './store-errors.js';
import { StoreHealth } from './store-health.js';

export interface EtcdConnectionOptions {
  endpoints: readonly string[];
  /** Deadline of every request, in ms. */
  requestTimeoutMs: number;
  /** The key the reachability probe reads (keys only, limit 1). */
  probeKey: Buffer;
}

type FaultHandling = NonNullable<IOptions['faultHandling']>;

const PROBE_INTERVAL_MS = 1000;
/** The operations that only read: a timeout of any other may have been applied. */
const READS = new Set(['list', 'get', 'currentResourceVersion']);

/** A pass-through cockatiel policy: no retries, no circuit breaker. */
const passThroughPolicy = {
  execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
    return Promise.resolve().then(() => fn({ signal: new AbortController().signal }));
  },
};

export class EtcdConnection {
  readonly client: Etcd3;
  /** Reachability as requests and watches see it (store-health.ts): /readyz and the logs read it. */
  readonly health = new StoreHealth();
  private readonly endpoints: readonly string[];
  private readonly requestTimeoutMs: number;
  private readonly probeKey: Buffer;
  private probe: NodeJS.Timeout | undefined;
  private isClosed = false;

  constructor(options: EtcdConnectionOptions) {
    this.endpoints = options.endpoints;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.probeKey = options.probeKey;
    const faultHandling: FaultHandling = {
      host: () => passThroughPolicy as unknown as ReturnType<NonNullable<FaultHandling['host']>>,
      global: passThroughPolicy as unknown as NonNullable<FaultHandling['global']>,
    };
    this.client = new Etcd3({
      hosts: [...options.endpoints],
      faultHandling,
      grpcOptions: {
        // An own TCP connection per store (grpc-js otherwise shares one per target).
        'grpc.use_local_subchannel_pool': 1,
        // Reconnect quickly once etcd is back (grpc-js defaults back off up to 120 s).
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1000,
        // A 64 KiB HTTP/2 window caps watch throughput (docs/etcd.md); objects can be large.
        'grpc-node.flow_control_window': 4 * 1024 * 1024,
        'grpc.max_receive_message_length': 256 * 1024 * 1024,
        // Detect a hung (not closed) connection under a live watch. etcd's minimum is 5 s.
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
      },
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The deadline of a request (or a write operation of several) starting now. */
  deadline(): number {
    return Date.now() + this.requestTimeoutMs;
  }

  /**
   * Run one etcd request with a deadline and map its failure (see the file comment). `atRevision`
   * is the revision the request reads at, for the StoreCompactedError it may become.
   */
  async call<T>(
    op: string,
    fn: (deadline: number) => Promise<T>,
    atRevision = 0,
    deadline = this.deadline(),
  ): Promise<T> {
    if (this.isClosed) throw new StoreUnavailableError(`EtcdStore is closed (${op})`);
    try {
      const result = await fn(deadline);
      this.health.recover(this.health);
      return result;
    } catch (err) {
      const mapped = this.mapError(op, err, atRevision);
      if (mapped instanceof StoreUnavailableError && !this.isClosed) {
        this.health.fail(this.health, mapped);
        this.probeUntilReachable();
      }
      throw mapped;
    }
  }

  /** Close the client; later calls reject with StoreUnavailableError. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.probe !== undefined) clearTimeout(this.probe);
    this.client.close();
  }

  /** After a failed request: probe etcd every second until one succeeds (the health then recovers by itself). */
  private probeUntilReachable(): void {
    if (this.probe !== undefined) return;
    this.probe = setTimeout(() => {
      this.probe = undefined;
      if (this.isClosed || this.health.state.healthy) return;
      this.call('currentResourceVersion', (deadline) =>
        this.client.kv.range({ key: this.probeKey, keys_only: true, limit: 1 }, { deadline }),
      ).catch(() => undefined); // a failure re-arms the probe
    }, PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  private mapError(op: string, err: unknown, atRevision: number): Error {
    if (
      err instanceof GRPCOutOfRangeError ||
      (err instanceof Error && /required revision has been compacted/.test(err.message))
    ) {
      const m = /compacted.*?(\d+)/.exec(err.message);
      return new StoreCompactedError(atRevision, m ? Number(m[1]) : atRevision);
    }
    if (err instanceof Error && /request is too large/.test(err.message)) {
      return new RequestEntityTooLargeError(`etcd refused the ${op}: ${err.message} (etcd's --max-request-bytes)`);
    }
    if (isUnavailable(err)) {
      const detail = err instanceof Error ? err.message : String(err);
      const ambiguous =
        err instanceof GRPCDeadlineExceededError && !READS.has(op)
          ? ' (the write may or may not have been applied)'
          : '';
      return new StoreUnavailableError(
        `etcd ${this.endpoints.join(',')} unavailable during ${op}${ambiguous}: ${detail}`,
        { cause: err },
      );
    }
    return err instanceof Error ? err : new Error(String(err));
  }
}

function isUnavailable(err: unknown): boolean {
  if (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCCancelledError ||
    err instanceof GRPCInternalError ||
    err instanceof GRPCResourceExhastedError ||
    err instanceof ClientClosedError
  ) {
    return true;
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (code === 1 || code === 4 || code === 8 || code === 13 || code === 14) return true;
    return /ECONNREFUSED|ECONNRESET|UNAVAILABLE|DEADLINE_EXCEEDED|no leader|leader changed|request timed out/i.test(
      err.message,
    );
  }
  return false;
}
