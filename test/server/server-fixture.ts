/**
 * A watch server on a real socket (port 0) over MemoryStores, one WatchCache
 * per resource sharing one metrics registry, for the server tests.
 */
import { Registry } from 'prom-client';
import type { Mode } from '../../src/cache/cache-options.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import type { HistoryOptions } from '../../src/history/event-history.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { resolveResource, resourceInfo } from '../../src/server/resources.js';
import { createWatchServer, type TlsOptions, type WatchServer } from '../../src/server/server.js';
import type { ServerTimeouts } from '../../src/server/limits/timeouts.js';

export interface FixtureOptions {
  resources?: string[];
  mode?: Mode;
  channelCapacity?: number;
  token?: string;
  tls?: TlsOptions;
  maxWatches?: number;
  history?: HistoryOptions;
  blockTimeoutMs?: number;
  bookmarkFrequencyMs?: number;
  bodyLimitBytes?: number;
  timeouts?: Partial<ServerTimeouts>;
}

export interface Fixture {
  server: WatchServer;
  url: string;
  port: number;
  registry: Registry;
  cache(resource?: string): WatchCache;
  store(resource?: string): MemoryStore;
  /** The sum of a metric's series across resources, optionally filtered by labels. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  close(): Promise<void>;
}

export async function startFixture(o: FixtureOptions = {}): Promise<Fixture> {
  const registry = new Registry();
  const caches = new Map<string, WatchCache>();
  const stores = new Map<string, MemoryStore>();
  for (const name of o.resources ?? ['pods']) {
    const spec = resolveResource(name);
    const store = new MemoryStore({ kind: spec.kind });
    const cache = new WatchCache({
      store,
      mode: o.mode ?? 'beta',
      resource: resourceInfo(spec),
      channelCapacity: o.channelCapacity,
      history: o.history,
      blockTimeoutMs: o.blockTimeoutMs,
      bookmarkFrequencyMs: o.bookmarkFrequencyMs,
      registry,
    });
    await cache.start();
    caches.set(name, cache);
    stores.set(name, store);
  }
  const server = createWatchServer({
    caches: [...caches.values()],
    stores: Object.fromEntries(stores),
    port: 0,
    token: o.token,
    tls: o.tls,
    maxWatches: o.maxWatches,
    bodyLimitBytes: o.bodyLimitBytes,
    timeouts: o.timeouts,
    shutdownGraceMs: 1000,
  });
  const address = await server.listen();
  return {
    server,
    url: server.url,
    port: address.port,
    registry,
    cache: (r = 'pods') => caches.get(r)!,
    store: (r = 'pods') => stores.get(r)!,
    async metric(name, labels = {}) {
      const m = registry.getSingleMetric(name);
      if (m === undefined) throw new Error(`no metric ${name}`);
      const data = await m.get();
      let sum = 0;
      for (const v of data.values) {
        const l = v.labels as Record<string, string | number>;
        if (Object.entries(labels).every(([k, x]) => String(l[k]) === x)) sum += v.value;
      }
      return sum;
    },
    async close() {
      await server.close();
      await Promise.all([...caches.values()].map((c) => c.stop()));
    },
  };
}

/** A pod manifest with an optional payload of `bytes` characters. */
export function pod(
  name: string,
  namespace = 'default',
  bytes = 0,
  labels: Record<string, string> = {},
): { metadata: Record<string, unknown>; spec: Record<string, unknown> } {
  return {
    metadata: { name, namespace, labels },
    spec:
      bytes > 0
        ? { containers: [{ name: 'c', image: 'busybox' }], payload: 'x'.repeat(bytes) }
        : { containers: [{ name: 'c', image: 'busybox' }] },
  };
}
