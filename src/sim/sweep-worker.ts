/**
 * The piscina worker of sweeps: runs one simulation (one scenario, one
 * variant) and returns its plain-JSON result; progress goes back through
 * the MessagePort that came with the task.
 */
import type { MessagePort } from 'node:worker_threads';
import type { SimResult, Variant } from './result.js';
import type { Scenario } from './scenario.js';
import { simulate } from './simulator.js';

export interface SweepTask {
  scenario: Scenario;
  variant: Variant;
  /** Where to post progress (a number in 0..1). */
  port?: MessagePort;
}

export default async function runTask(task: SweepTask): Promise<SimResult> {
  const port = task.port;
  try {
    return await simulate(
      task.scenario,
      task.variant,
      port === undefined ? {} : { onProgress: (f) => port.postMessage(f) },
    );
  } finally {
    port?.close();
  }
}
