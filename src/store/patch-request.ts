/**
 * A PATCH request as the server received it. The server applies patches to
 * its own stores (get, apply, update with the read RV as precondition); a
 * store that applies patches itself — an upstream Kubernetes API server —
 * implements `PatchingStore`, and the server hands the request over as is.
 */
import type { KubeObject } from '../core/types.js';

export interface PatchRequest {
  /** The request's Content-Type without parameters, e.g. `application/strategic-merge-patch+json`. */
  readonly contentType: string;
  /** The raw patch body (UTF-8). */
  readonly body: string;
  /** The `fieldManager` query parameter (server-side apply). */
  readonly fieldManager?: string;
  /** The `force` query parameter (server-side apply). */
  readonly force?: boolean;
}

/** A store that applies PATCH itself and answers with the patched object. */
export interface PatchingStore {
  patch(namespace: string, name: string, request: PatchRequest): Promise<KubeObject>;
}

/** Whether a store applies patches itself. */
export function isPatchingStore(store: object): store is PatchingStore {
  return typeof (store as Partial<PatchingStore>).patch === 'function';
}
