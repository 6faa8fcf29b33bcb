/**
 * The backing store of one served resource: a MemoryStore (RVs starting at
 * the resource-version epoch), an EtcdStore
 * (`/registry/<resource>/` prefix) loaded with a dynamic import, so the
 * memory path never depends on the etcd module or its client library, or a
 * KubeStore (the same resource of an upstream API server: a caching proxy).
 */
import { KubeClient } from '../store/kube-client.js';
import { KubeStore } from '../store/kube-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { resourceVersionEpoch } from './resource-version-epoch.js';
import type { Registry } from 'prom-client';
import type { Store } from '../core/types.js';
import type { WritableStore } from '../server/served-resource.js';
import type { ResourceSpec } from '../server/resources.js';
import { resolveUpstream, type UpstreamFlags } from './kubeconfig.js';
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
    throw new Error(`--store etcd is not available: cannot load the etcd store (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (typeof mod.EtcdStore !== 'function')
    throw new Error('--store etcd is not available: the etcd store module has no EtcdStore');
  return mod.EtcdStore;
}

/** One store per resource, in the order given. */
export async function createStores(
  kind: StoreKind,
  etcdUrl: string,
  specs: readonly ResourceSpec[],
  upstream?: UpstreamFlags,
  registry?: Registry,
): Promise<ServedStore[]> {
  if (kind === 'memory') {
    // RVs start at the server's start time, so RVs from before a restart are older than the history (410, re-list).
    const startResourceVersion = resourceVersionEpoch();
    return specs.map((s) => new MemoryStore({ kind: s.kind, startResourceVersion }));
  }
  if (kind === 'kube') {
    if (upstream === undefined) throw new Error('--store kube needs an upstream');
    // One client (one keep-alive agent) shared by every resource's store.
    const client = new KubeClient(resolveUpstream(upstream));
    return specs.map(
      (s, i) =>
        new KubeStore({
          upstream: client,
          resource: { group: s.group, version: s.version, resource: s.name, namespaced: s.namespaced },
          closeUpstream: i === specs.length - 1, // the runtime closes the stores in order
          registry,
          initialEvents: upstream.watchList ? 'stream' : 'list',
        }),
    );
  }
  const EtcdStore = await loadEtcdStore();
  return specs.map((s) => new EtcdStore({ endpoints: [etcdUrl], prefix: `/registry/${s.name}/`, kind: s.kind }));
}
