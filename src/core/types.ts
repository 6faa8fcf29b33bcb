/**
 * The shapes every part of watchcache shares: Kubernetes-shaped objects, the
 * events a store emits, the Store contract the cache consumes, and the events a
 * watcher receives. One definition each; everything else imports from here.
 */

/** Kubernetes object metadata. Only the fields the cache reads are typed; the rest is free. */
export interface ObjectMeta {
  namespace?: string;
  name?: string;
  /** A decimal string, set by the store on every write. */
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  creationTimestamp?: string;
  [field: string]: unknown;
}

/** A Kubernetes-shaped JSON object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** The three kinds of change a store reports. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Every event type a watcher can receive. */
export type WatchEventType = ChangeType | 'BOOKMARK' | 'ERROR';

/** One change as a store reports it, in RV order. */
export interface StoreEvent {
  type: ChangeType;
  /** The new state; for DELETED the last state with the deletion RV. */
  object: KubeObject;
  /** The state before this change (absent for ADDED). */
  prevObject?: KubeObject;
  resourceVersion: number;
}

/** A running store watch. */
export interface StoreWatch {
  stop(): void;
}

/** A consistent snapshot of a store. */
export interface StoreListResult {
  items: KubeObject[];
  resourceVersion: number;
}

/**
 * What the cache needs from a backing store (API.md "Store interface").
 * `onProgress` (optional) reports that the store has reached an RV with no
 * further change for this watch, like an etcd progress notification.
 */
export interface Store {
  list(): Promise<StoreListResult>;
  watch(
    afterRV: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (resourceVersion: number) => void,
  ): StoreWatch;
  currentResourceVersion(): Promise<number>;
  /** Optional: ask the store to report progress soon (used while consistent reads wait). */
  requestProgress?(): void;
}

/** The group/version/resource/kind a cache serves. */
export interface ResourceInfo {
  group: string;
  version: string;
  resource: string;
  kind: string;
}

export const DEFAULT_RESOURCE: ResourceInfo = Object.freeze({
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
});

/** apiVersion string of a resource: `v1` for the core group, else `group/version`. */
export function apiVersionOf(resource: ResourceInfo): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** A trigger/field indexer: object -> one string value (or undefined when absent). */
export type IndexerFunc = (object: KubeObject) => string | undefined;

/** The public event a consumer receives. Shared by every watcher: treat as read-only. */
export interface WatchEventLike {
  readonly type: WatchEventType;
  readonly object: KubeObject;
}

/** Storage key of an object: `namespace/name` (cluster-scoped: `/name`). Orders lists. */
export function objectKey(namespace: string, name: string): string {
  return namespace + '/' + name;
}

/** Parse an object's RV string; 0 when absent or malformed. */
export function objectRV(object: KubeObject): number {
  const rv = object.metadata.resourceVersion;
  if (rv === undefined || rv === '') return 0;
  const n = Number(rv);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}
