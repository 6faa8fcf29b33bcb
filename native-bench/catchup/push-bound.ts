/**
 * The one-thread bound for catch-up pushes: how many event references one
 * thread can push into W watcher channels per second, measured in the same
 * process right before a catch-up run. The channels are W rings of 32 Int32
 * slots with an Int32 tail each, all in one SharedArrayBuffer; per event the
 * thread writes the slot and the tail of every ring with plain stores and
 * publishes once with one Atomics.store (platform-floor.md section 4, the row
 * "plain writes + 1 Atomics.store per event"). Nothing drains the rings: the
 * figure is the pushing thread's cost alone, the bound a sync worker pushing
 * one reference per (event, watcher) cannot beat.
 */

const SLOTS = 32;

/** Pushes per second into `watchers` rings over about `ms` of measuring (after a short warm-up). */
export function measurePushBound(watchers: number, ms = 200): number {
  const w = Math.max(1, watchers);
  const sab = new SharedArrayBuffer((w * (SLOTS + 1) + 1) * 4);
  const a = new Int32Array(sab);
  const epoch = w * (SLOTS + 1);
  let ref = 0;
  const round = (): void => {
    ref++;
    for (let i = 0; i < w; i++) {
      const base = i * (SLOTS + 1);
      const tail = a[base + SLOTS]!;
      a[base + (tail & (SLOTS - 1))] = ref;
      a[base + SLOTS] = tail + 1;
    }
    Atomics.store(a, epoch, ref);
  };
  // Rounds per timing check, so the clock read is a small share of the loop.
  const batch = Math.max(1, Math.ceil(20_000 / w));
  const warm = performance.now();
  while (performance.now() - warm < ms / 4) for (let b = 0; b < batch; b++) round();
  let rounds = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let b = 0; b < batch; b++) round();
    rounds += batch;
    t = performance.now();
  }
  return (rounds * w) / ((t - t0) / 1000);
}
