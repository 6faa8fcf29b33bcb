/**
 * Test support: every message the main thread posts to its sync worker, in
 * the order it posts them, while `body` runs (the main thread's batching, as
 * the worker sees it). Read off the engine's `watchcache:worker-post` tool
 * channel (src/observe/channels.ts, `from: 'main'`), for every cache `body` makes.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import type { MainToWorker } from '../../src/beta/sync-messages.js';

const WORKER_POST = 'watchcache:worker-post';

export async function recordingEndpointMessages(body: (sent: MainToWorker[]) => Promise<void>): Promise<void> {
  const sent: MainToWorker[] = [];
  const listener = (posted: unknown): void => {
    const p = posted as { from: string; message: MainToWorker };
    if (p.from === 'main') sent.push(p.message);
  };
  diagnostics_channel.subscribe(WORKER_POST, listener);
  try {
    await body(sent);
  } finally {
    diagnostics_channel.unsubscribe(WORKER_POST, listener);
  }
}
