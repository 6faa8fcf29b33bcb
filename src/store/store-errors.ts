/**
 * Errors a Store reports through its watch's onError. The reflector reacts to
 * each: a compacted watch re-lists; anything else re-lists after a back-off.
 */

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

/** The store is unreachable (etcd down, connection refused). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
