/**
 * Errors as Kubernetes Status objects (API.md "Errors"). Every error the
 * library throws or rejects with is a WatchCacheError carrying `code` (HTTP
 * status), `reason` (Kubernetes reason) and `status` (the Status object).
 */

interface StatusCause {
  type?: string;
  /** The cause type as kube-apiserver writes it on the wire (metav1.StatusCause `reason`). */
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  kind?: string;
  retryAfterSeconds?: number;
  causes?: StatusCause[];
}

/** A Kubernetes `Status` object (kind Status, apiVersion v1). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export function makeStatus(code: number, reason: string, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details !== undefined) status.details = details;
  return status;
}

export class WatchCacheError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly status: Status;
  readonly retryAfterSeconds: number | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.reason = reason;
    this.status = makeStatus(code, reason, message, details);
    this.retryAfterSeconds = details?.retryAfterSeconds;
  }
}

/** 400: malformed RV, selector, option or body. */
export class BadRequestError extends WatchCacheError {
  constructor(message: string) {
    super(400, 'BadRequest', message);
  }
}

/** 404. */
export class NotFoundError extends WatchCacheError {
  constructor(kind: string, name: string) {
    super(404, 'NotFound', `${kind.toLowerCase()}s "${name}" not found`, { name, kind: kind.toLowerCase() + 's' });
  }
}

/** 409, reason AlreadyExists (duplicate create) or Conflict (stale resourceVersion). */
export class ConflictError extends WatchCacheError {
  constructor(reason: 'AlreadyExists' | 'Conflict', message: string, name?: string) {
    super(409, reason, message, name === undefined ? undefined : { name });
  }
}

/** 410 Expired: `too old resource version: X (Y)`. */
export class ResourceExpiredError extends WatchCacheError {
  constructor(message: string) {
    super(410, 'Expired', message);
  }
  static tooOld(requested: number, oldestServable: number): ResourceExpiredError {
    return new ResourceExpiredError(`too old resource version: ${requested} (${oldestServable})`);
  }
}

/** 504 Timeout with cause ResourceVersionTooLarge and retryAfterSeconds 1 (seed 001). */
export class TooLargeResourceVersionError extends WatchCacheError {
  constructor(requested: number, current: number) {
    super(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
      retryAfterSeconds: 1,
      causes: [{ type: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    });
  }
}

/** 429 with Retry-After. */
export class TooManyRequestsError extends WatchCacheError {
  constructor(message: string, retryAfterSeconds = 1) {
    super(429, 'TooManyRequests', message, { retryAfterSeconds });
  }
}

/** 503: the cache (or its store) is stopped or unavailable. */
export class ServiceUnavailableError extends WatchCacheError {
  constructor(message: string, retryAfterSeconds?: number) {
    super(503, 'ServiceUnavailable', message, retryAfterSeconds === undefined ? undefined : { retryAfterSeconds });
  }
}

/** 413: a request body over the limit. */
export class RequestEntityTooLargeError extends WatchCacheError {
  constructor(message: string) {
    super(413, 'RequestEntityTooLarge', message);
  }
}

/** 500 for anything that is not a Status error. */
export class InternalError extends WatchCacheError {
  constructor(message: string) {
    super(500, 'InternalError', message);
  }
}

/** Wrap any thrown value as a WatchCacheError (non-Status errors become 500 InternalError). */
export function toWatchCacheError(err: unknown): WatchCacheError {
  if (err instanceof WatchCacheError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new InternalError(message);
}
