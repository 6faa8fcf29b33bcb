/**
 * Test support: moving an in-process sync worker endpoint along on a
 * virtual clock. Its room loop (SyncWorkerEndpoint.serveRoom) runs on
 * promise continuations and Atomics.waitAsync resolutions, its passes on
 * the clock's timers.
 */
import type { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import { settle, type VirtualClock } from '../../src/sim/virtual-clock.js';

/** Let the room loop's promise continuations and Atomics.waitAsync resolutions run. */
export async function settleAll(): Promise<void> {
  for (let i = 0; i < 5; i++) await settle();
}

/** Let the worker's pass after a room signal run (1 ms of the virtual clock between settles). */
export async function settlePass(clock: VirtualClock): Promise<void> {
  await settleAll();
  await clock.advance(1);
  await settleAll();
}

/** Stop the endpoint and let its room loop and timers wind down. */
export async function stopEndpoint(endpoint: SyncWorkerEndpoint, clock: VirtualClock): Promise<void> {
  endpoint.handle({ op: 'stop' });
  await settleAll();
  await clock.advance(2000);
}
