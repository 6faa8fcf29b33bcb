/**
 * Test support: the `init` message an in-process sync worker endpoint gets
 * first: the ring and control block it serves, beta's resolved pass options,
 * no indexers and no trigger field.
 */
import type { ControlBlock } from '../../src/beta/control-block.js';
import type { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import type { HistoryRing } from '../../src/ring/ring-writer.js';
import { resolvePassOptions } from '../../src/sync/pass-options.js';

export function initEndpoint(endpoint: SyncWorkerEndpoint, ring: HistoryRing, control: ControlBlock): void {
  endpoint.handle({
    op: 'init',
    ring: ring.handle,
    control: control.buffer,
    pass: resolvePassOptions({}, 'beta'),
    indexerFields: [],
    triggerField: undefined,
  });
}
