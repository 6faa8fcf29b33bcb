/**
 * One served resource: its discovery spec, its WatchCache (reads, watches)
 * and the store its writes go to (absent: read-only, writes are 405).
 */
import type { WatchCache } from '../cache/watch-cache.js';
import type { KubeObject } from '../core/types.js';
import type { StoreHealth } from '../store/store-health.js';
import type { ResourceSpec } from './resources.js';

/** The write API of a store (MemoryStore and EtcdStore both have it). */
export interface WritableStore {
  create(object: KubeObject): Promise<KubeObject>;
  update(object: KubeObject): Promise<KubeObject>;
  delete(namespace: string, name: string, options?: { resourceVersion?: string; uid?: string }): Promise<KubeObject>;
  /** Reachability, when the store tracks it (EtcdStore): /readyz is 503 while unhealthy. */
  readonly health?: StoreHealth;
}

export interface ServedResource {
  readonly spec: ResourceSpec;
  readonly cache: WatchCache;
  readonly store: WritableStore | undefined;
}
