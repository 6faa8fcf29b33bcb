/**
 * Test support: every message the in-process sync worker endpoints handle,
 * in the order they handle them, while `body` runs (the main thread's
 * batching, as the worker sees it).
 */
import type { MainToWorker } from '../../src/beta/sync-messages.js';
import { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';

export async function recordingEndpointMessages(body: (sent: MainToWorker[]) => Promise<void>): Promise<void> {
  const sent: MainToWorker[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with its own `this`, restored after `body`
  const handle = SyncWorkerEndpoint.prototype.handle;
  SyncWorkerEndpoint.prototype.handle = function (msg: MainToWorker): void {
    sent.push(msg);
    handle.call(this, msg);
  };
  try {
    await body(sent);
  } finally {
    SyncWorkerEndpoint.prototype.handle = handle;
  }
}
