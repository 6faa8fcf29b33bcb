/**
 * Small scenarios for the simulator tests: a few seconds of virtual time and
 * a handful of watchers, so every test runs in well under a second or two.
 */
import { parseScenario, type Scenario } from '../../src/sim/scenario.js';
import type { SimResult } from '../../src/sim/result.js';

/** Fast readers, paced readers that stall and resume, trigger-indexed agents, one halt. */
export function smallScenario(overrides: Record<string, unknown> = {}): Scenario {
  return parseScenario({
    name: 'small',
    durationS: 4,
    drainS: 3,
    seed: 11,
    tickMs: 2,
    engine: { channelCapacity: 20, history: { upperBound: 4096 } },
    writes: {
      rate: [
        { atS: 0, perSecond: 150 },
        { atS: 2, perSecond: 300 },
      ],
      objects: 60,
      namespaces: { count: 4, skew: 1 },
      labels: [{ key: 'app', count: 3 }],
      labelChurn: 0.1,
      triggerValues: { count: 5 },
      triggerChurn: 0.05,
      payloadBytes: 50,
    },
    watchers: [
      { name: 'fast', count: 3, selector: { kind: 'all' }, readRate: 'unlimited' },
      {
        name: 'paced',
        count: 4,
        selector: { kind: 'label' },
        readRate: { uniform: [200, 400] },
        channelCapacity: 5,
        stalls: [{ atS: 1, forS: 0.5, fraction: 0.5 }],
      },
      { name: 'agents', count: 5, selector: { kind: 'trigger' }, readRate: 50 },
    ],
    halts: [{ atS: 3, forMs: 200 }],
    ...overrides,
  });
}

/** A result without its wall-clock figures (those differ run to run). */
export function deterministicPart(r: SimResult): Omit<SimResult, 'real'> {
  const { real: _real, ...rest } = r;
  return rest;
}
