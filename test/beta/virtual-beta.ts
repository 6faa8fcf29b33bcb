/**
 * A beta cache on a virtual clock (its sync worker in-process, so every turn is the test's), with one pod
 * written, and `n` watchers opened at that pod's RV with channels of `capacity` slots: the start of the tests
 * of beta's sliced main-thread work (stall-hand-over, hand-back-slices).
 */
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { flush, pod, setup, VirtualClock } from '../unit/support/harness.js';

export async function virtualBeta(n: number, capacity: number) {
  const clock = new VirtualClock();
  const { cache, store } = await setup({ mode: 'beta' }, undefined, { clock });
  const beta = betaSyncOf(cache)!;
  await store.create(pod('a'));
  await flush();
  const from = cache.resourceVersion;
  const watchers = Array.from({ length: n }, () =>
    asWatcher(cache.watch({ resourceVersion: String(from), channelCapacity: capacity })),
  );
  return { clock, cache, store, beta, from, watchers };
}
