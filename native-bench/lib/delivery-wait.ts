/**
 * The drain at the end of a benchmark run: after the writes, wait until the watchers have every
 * event, bounded in time and ended early when nothing arrives for 3 s (a watcher that will never
 * get the rest must not hold the run).
 */

const NO_PROGRESS_MS = 3000;

/**
 * Wait until `delivered()` reaches `expected`, for at most `capMs`, and no longer than 3 s without
 * progress.
 */
export async function waitForDelivery(delivered: () => number, expected: number, capMs: number): Promise<void> {
  const start = performance.now();
  let last = delivered();
  let lastProgress = start;
  while (
    delivered() < expected &&
    performance.now() - start < capMs &&
    performance.now() - lastProgress < NO_PROGRESS_MS
  ) {
    await new Promise((r) => setTimeout(r, 20));
    if (delivered() !== last) {
      last = delivered();
      lastProgress = performance.now();
    }
  }
}
