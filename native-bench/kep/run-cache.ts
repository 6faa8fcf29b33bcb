/**
 * The cache one in-process KEP or catch-up run measures: a MemoryStore with
 * `pods` pods created, a started WatchCache in `mode` over it, and a
 * keep-alive timer (the engine's own timers are unref'd, so without it the
 * process could exit mid-run). `stop()` stops the cache and lets the process go.
 */
import { MemoryStore, WatchCache, type KubeObject, type Mode } from '../../src/index.js';
import { makePod } from '../lib/pod.js';

export interface RunCache {
  store: MemoryStore;
  cache: WatchCache;
  /** The pods as created (the writer updates them in turn). */
  pods: KubeObject[];
  stop(): Promise<void>;
}

export async function startRunCache(mode: Mode, channelCapacity: number, podCount: number): Promise<RunCache> {
  const keepAlive = setInterval(() => {}, 1000);
  const store = new MemoryStore();
  const cache = new WatchCache({ store, mode, channelCapacity });
  await cache.start();
  const pods: KubeObject[] = [];
  for (let i = 0; i < podCount; i++) pods.push(await store.create(makePod(i)));
  return {
    store,
    cache,
    pods,
    async stop() {
      await cache.stop();
      clearInterval(keepAlive);
    },
  };
}

/** Watchers ended with 410 Gone so far (both reasons: during the watch and at its start). */
export async function expiredCount(cache: WatchCache): Promise<number> {
  return (
    (await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'resource_expired' })) +
    (await cache.metricValue('apiserver_terminated_watchers_total', { reason: 'resource_expired_initial' }))
  );
}
