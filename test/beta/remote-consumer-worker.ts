/**
 * Test worker: consumes a watch handed over with cache.watchPort() through
 * openWatch(), optionally pausing to become a slow watcher, and posts back
 * what it received.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { openWatch, type WatchPortHandle } from '../../src/index.js';

const { handle, want, pauseAfter, pauseMs, stopAfter } = workerData as {
  handle: WatchPortHandle;
  want: number;
  pauseAfter: number;
  pauseMs: number;
  stopAfter: number;
};
const w = openWatch(handle);
const got: string[] = [];
for await (const ev of w) {
  got.push(
    `${ev.type}:${ev.object.metadata.name ?? ''}@${ev.object.metadata.resourceVersion ?? (ev.object as unknown as { code?: number }).code}`,
  );
  if (got.length === pauseAfter) await sleep(pauseMs);
  if (stopAfter > 0 && got.length >= stopAfter) {
    w.stop();
    break;
  }
  if (got.length >= want) break;
}
parentPort!.postMessage(got);
