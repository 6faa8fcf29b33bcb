/**
 * The backing store of one served resource: a MemoryStore, or an EtcdStore
 * (`/registry/<resource>/` prefix) loaded with a dynamic import, so the
 * memory path never depends on the etcd module or its client library.
 */
import { MemoryStore } from '../store/memory-store.js';
import type { Store } from '../core/types.js';
import type { WritableStore } from '../server/served-resource.js';
import type { ResourceSpec } from '../server/resources.js';
import type { StoreKind } from './serve-command.js';

export type ServedStore = Store & WritableStore & { close?(): void };

interface EtcdModule {
  EtcdStore?: new (options: { endpoints: string[]; prefix: string; kind?: string }) => ServedStore;
}

async function loadEtcdStore(): Promise<NonNullable<EtcdModule['EtcdStore']>> {
  const url = new URL('../store/etcd-store.js', import.meta.url).href;
  let mod: EtcdModule;
  try {
    mod = (await import(url)) as EtcdModule;
  } catch (err) {
    throw new Error(`--store etcd is not available: cannot load the etcd store (${(err as Error).message})`, { cause: err });
  }
  if (typeof mod.EtcdStore !== 'function') throw new Error('--store etcd is not available: the etcd store module has no EtcdStore');
  return mod.EtcdStore;
}

/** One store per resource, in the order given. */
export async function createStores(kind: StoreKind, etcdUrl: string, specs: readonly ResourceSpec[]): Promise<ServedStore[]> {
  if (kind === 'memory') return specs.map((s) => new MemoryStore({ kind: s.kind }));
  const EtcdStore = await loadEtcdStore();
  return specs.map((s) => new EtcdStore({ endpoints: [etcdUrl], prefix: `/registry/${s.name}/`, kind: s.kind }));
}
