/**
 * Sim vs real: one small deterministic workload run twice through the
 * simulator's driver, once on the VirtualClock (beta's sync worker
 * in-process) and once on the real clock with small real sleeps (beta's sync
 * worker in its own thread), and every watcher must receive the identical
 * event sequence. Only deliveries are compared, never timing.
 *
 * The workload avoids what legitimately depends on timing: bookmarks (their
 * RV is whatever was dispatched when the timer fired), 410s (the history
 * holds the whole run) and, in off mode, force-closes (channels hold the
 * whole run there). Stalls and paced readers are kept in alpha and beta:
 * there a stalled watcher must still receive exactly the same events.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Mode } from '../../src/index.js';
import { parseScenario, type Scenario } from '../../src/sim/scenario.js';
import { simulate } from '../../src/sim/simulator.js';

function workload(mode: Mode): Scenario {
  const off = mode === 'off';
  return parseScenario({
    name: 'sim-vs-real',
    durationS: 1.2,
    drainS: 1.5,
    seed: 77,
    tickMs: 5,
    engine: { history: { lowerBound: 1024, upperBound: 4096 }, channelCapacity: off ? 2000 : 8 },
    writes: {
      rate: [{ atS: 0, perSecond: 200 }],
      objects: 40,
      namespaces: { count: 3 },
      labels: [{ key: 'app', count: 3 }],
      labelChurn: 0.2,
      triggerValues: { count: 4 },
      triggerChurn: 0.1,
      payloadBytes: 20,
    },
    watchers: [
      { name: 'all', count: 2, selector: { kind: 'all' }, readRate: 'unlimited', bookmarks: false },
      {
        name: 'label',
        count: 3,
        selector: { kind: 'label' },
        readRate: off ? 'unlimited' : 150,
        bookmarks: false,
        stalls: off ? [] : [{ atS: 0.3, forS: 0.3, fraction: 1 }],
      },
      { name: 'ns', count: 2, selector: { kind: 'namespace' }, readRate: 'unlimited', bookmarks: false },
      { name: 'node', count: 4, selector: { kind: 'trigger' }, readRate: off ? 'unlimited' : 80, bookmarks: false },
    ],
  });
}

for (const mode of ['alpha', 'beta', 'off'] as const) {
  test(`sim vs real: identical deliveries on the virtual and the real clock (${mode})`, async () => {
    const scenario = workload(mode);
    const variant = { label: mode, mode };
    const virtual = await simulate(scenario, variant, { recordSequences: true });
    const real = await simulate(scenario, variant, { recordSequences: true, driver: 'real' });
    const v = virtual.sequences!;
    const r = real.sequences!;
    assert.deepEqual(Object.keys(r).sort(), Object.keys(v).sort());
    let events = 0;
    for (const key of Object.keys(v)) {
      assert.deepEqual(r[key], v[key], `watcher ${key} received a different sequence`);
      events += v[key]!.length;
    }
    assert.ok(events > 500, `the workload delivered ${events} events`);
    assert.equal(virtual.terminations.total, 0);
    assert.equal(real.terminations.total, 0);
    if (mode !== 'off')
      assert.ok(virtual.engine.stalls > 0 && real.engine.stalls > 0, 'watchers went unsynced in both runs');
  });
}
