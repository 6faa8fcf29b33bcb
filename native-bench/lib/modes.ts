/**
 * How each mode is labelled in every table and plot: off is today's
 * Kubernetes (force-close), alpha runs its sync passes on the main thread,
 * beta in a sync worker thread over the SharedArrayBuffer history ring.
 */
import type { Mode } from '../../src/index.js';

export function modeLabel(mode: Mode): string {
  switch (mode) {
    case 'off':
      return 'off (force-close)';
    case 'alpha':
      return 'alpha (main-thread passes)';
    default:
      return 'beta (sync worker thread)';
  }
}

export const BETA_NOTE =
  'beta: passes run in the sync worker thread; "catch-up % main" is the main thread\'s share (adopt, hand-back of the last events, consumer wake-ups), "worker %" the worker\'s pass time. On 2 vCPUs the worker competes with the main thread and the consumers.';
