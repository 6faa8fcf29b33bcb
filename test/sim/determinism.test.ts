/**
 * Determinism: the same scenario and seed give the identical result (every
 * figure except the wall-clock ones), in every mode; another seed does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MODES } from '../../src/index.js';
import { simulate } from '../../src/sim/simulator.js';
import { deterministicPart, smallScenario } from './fixtures.js';

for (const mode of MODES) {
  test(`determinism: same seed, identical JSON result (${mode})`, async () => {
    const s = smallScenario();
    const a = await simulate(s, { label: mode, mode });
    const b = await simulate(smallScenario(), { label: mode, mode });
    assert.ok(a.deliveries.total > 0, 'the run delivered something');
    assert.equal(JSON.stringify(deterministicPart(a)), JSON.stringify(deterministicPart(b)));
    if (mode !== 'off') assert.ok(a.engine.stalls > 0 && a.catchup.passes > 0, 'the workload exercises catch-up');
  });
}

test('determinism: another seed gives another run', async () => {
  const a = await simulate(smallScenario(), { label: 'alpha', mode: 'alpha' });
  const b = await simulate(smallScenario({ seed: 12 }), { label: 'alpha', mode: 'alpha' });
  assert.notEqual(JSON.stringify(deterministicPart(a)), JSON.stringify(deterministicPart(b)));
});
