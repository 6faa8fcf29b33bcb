/**
 * Test support: the `init` message an in-process sync worker endpoint gets
 * first: the ring and control block it serves, beta's resolved pass options
 * (with any given over them), no indexers and no trigger field.
 */
import type { ControlBlock } from '../../src/beta/control-block.js';
import type { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import type { HistoryRing } from '../../src/ring/ring-writer.js';
import { resolvePassOptions, type PassOptions } from '../../src/sync/pass-options.js';

/** `pass`: options over beta's resolved defaults. */
export function initEndpoint(
  endpoint: SyncWorkerEndpoint,
  ring: HistoryRing,
  control: ControlBlock,
  pass: Partial<PassOptions> = {},
): void {
  endpoint.handle({
    op: 'init',
    ring: ring.handle,
    control: control.buffer,
    pass: resolvePassOptions(pass, 'beta'),
    indexerFields: [],
    triggerField: undefined,
  });
}
