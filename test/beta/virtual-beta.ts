/**
 * A beta cache on a virtual clock (its sync worker in-process, so every turn is the test's), with one pod
 * written, and `n` watchers opened at that pod's RV with channels of `capacity` slots: the start of the tests
 * of beta's sliced main-thread work (stall-hand-over, hand-back-slices), and the writes they make between
 * its slices.
 */
import type { MemoryStore } from '../../src/index.js';
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

/**
 * `count` writes, each a zero-delay timer queued behind the sliced work's next slice (the first once `start`
 * is called; later calls do nothing), each recording `pending()` just before it: what the sliced work still
 * had queued when the write came.
 */
export class WritesBetweenSlices {
  readonly pendingAtWrite: number[] = [];
  writes = 0;
  private started = false;

  constructor(
    private readonly clock: VirtualClock,
    private readonly store: MemoryStore,
    private readonly pending: () => number,
    private readonly count = 4,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.clock.setTimeout(this.write, 0);
  }

  private readonly write = (): void => {
    this.pendingAtWrite.push(this.pending());
    void this.store.create(pod(`mid-${this.writes}`));
    if (++this.writes < this.count) this.clock.setTimeout(this.write, 0);
  };
}
