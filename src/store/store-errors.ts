/**
 * Errors a Store reports through its watch's onError. The reflector reacts to
 * each: a compacted watch re-lists; anything else re-lists after a back-off.
 */
import { WatchCacheError, type Status } from '../core/errors.js';

/** The store can no longer serve a watch from the requested RV (etcd: "required revision has been compacted"). */
export class StoreCompactedError extends Error {
  readonly requestedRV: number;
  readonly compactedRV: number;
  constructor(requestedRV: number, compactedRV: number) {
    super(`required revision has been compacted: requested ${requestedRV}, compacted ${compactedRV}`);
    this.name = 'StoreCompactedError';
    this.requestedRV = requestedRV;
    this.compactedRV = compactedRV;
  }
}

/** The store is unreachable (etcd down, connection refused): 503 ServiceUnavailable, retry after 1 s. */
export class StoreUnavailableError extends WatchCacheError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(503, 'ServiceUnavailable', message, { retryAfterSeconds: 1 });
    this.name = 'StoreUnavailableError';
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/**
 * An upstream Kubernetes API server answered with a non-2xx status (KubeStore). It carries the
 * upstream's own Status object and HTTP code, so the server answers exactly what the upstream did.
 */
export class UpstreamStatusError extends WatchCacheError {
  constructor(code: number, upstream: Status, retryAfterSeconds?: number) {
    const retry = retryAfterSeconds ?? upstream.details?.retryAfterSeconds;
    super(
      code,
      upstream.reason ?? '',
      upstream.message ?? '',
      retry === undefined ? upstream.details : { ...upstream.details, retryAfterSeconds: retry },
    );
    this.name = 'UpstreamStatusError';
    // The upstream's Status, unchanged (the base class built its own from code/reason/message).
    Object.defineProperty(this, 'status', { value: upstream, enumerable: true });
  }
}
