/**
 * Scenario validation: defaults are filled in, and every mistake is reported
 * with its path and what is wrong (all of them at once).
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadScenario, parseScenario, ScenarioError } from '../../src/sim/scenario.js';
import { shippedScenarioFiles } from '../../src/sim/shipped-scenarios.js';

const minimal = {
  name: 'm',
  durationS: 1,
  seed: 1,
  writes: { rate: [{ atS: 0, perSecond: 10 }], objects: 5, namespaces: { count: 1 } },
  watchers: [{ name: 'w', count: 1, selector: { kind: 'all' }, readRate: 'unlimited' }],
};

function problems(input: unknown): string[] {
  try {
    parseScenario(input, 'test.json');
  } catch (err) {
    assert.ok(err instanceof ScenarioError, `expected a ScenarioError, got ${String(err)}`);
    assert.match(err.message, /^invalid scenario test\.json:/);
    return err.problems;
  }
  assert.fail('expected the scenario to be rejected');
}

test('scenario: a minimal scenario gets its defaults', () => {
  const s = parseScenario(minimal);
  assert.deepEqual(s.modes, ['off', 'alpha', 'beta']);
  assert.equal(s.drainS, 5);
  assert.equal(s.tickMs, 1);
  assert.deepEqual(s.cost, {
    passUsPerScanUnit: 0.25,
    passUsPerPush: 0.25,
    passUsPerWatcher: 0.25,
    passUsPerCandidate: 1,
    workerUsPerScanUnit: 5,
  });
  assert.deepEqual(s.writes.mix, { update: 0.9, create: 0.05, delete: 0.05 });
  const w = s.watchers[0]!;
  assert.equal(w.start, 'now');
  assert.equal(w.bookmarks, true);
  assert.deepEqual(w.reconnect, { delayMs: 0, fromLastRV: true, relistOn410: true });
  assert.deepEqual(w.stalls, []);
});

test('scenario: errors name the path and what is wrong, all at once', () => {
  const p = problems({
    ...minimal,
    durationS: -3,
    modes: ['off', 'gamma'],
    bogus: 1,
    writes: {
      rate: [
        { atS: 0.5, perSecond: 10 },
        { atS: 1, perSecond: 'fast' },
      ],
      objects: 0,
      namespaces: { count: 1 },
    },
    watchers: [
      {
        name: 'w',
        count: 1.5,
        selector: { kind: 'trigger' },
        readRate: { uniform: [10, 5] },
        stalls: [{ atS: 0, forS: 1, fraction: 1.5 }],
      },
      { name: 'w', count: 1, selector: { kind: 'label', labelKey: 'tier' }, readRate: { choice: [] } },
    ],
    engine: { pass: { scanBudget: 'big', colour: 1 } },
    halts: [{ atS: 0 }],
  });
  const expect = [
    'bogus: unknown field',
    'durationS: must be > 0, got -3',
    'modes[1]: must be one of "off", "alpha", "beta", got "gamma"',
    'writes.rate[0].atS: the first step must be at 0, got 0.5',
    'writes.rate[1].perSecond: must be a finite number, got "fast"',
    'writes.objects: must be >= 1, got 0',
    'watchers[0].count: must be an integer, got 1.5',
    'watchers[0].selector.kind: "trigger" needs writes.triggerValues',
    'watchers[0].readRate.uniform: max (5) must be >= min (10)',
    'watchers[0].stalls[0].fraction: must be <= 1, got 1.5',
    'watchers[1].name: duplicate population name "w"',
    'watchers[1].selector.labelKey: no label "tier" in writes.labels',
    'watchers[1].readRate.choice: must have at least 1 item',
    'engine.pass.colour: unknown field',
    'engine.pass.scanBudget: must be a finite number, got "big"',
    'halts[0].forMs: must be a finite number, got nothing',
  ];
  for (const e of expect)
    assert.ok(
      p.some((x) => x.startsWith(e)),
      `missing problem "${e}" in:\n${p.join('\n')}`,
    );
});

test('scenario: not an object, and a file that is not JSON', async () => {
  assert.deepEqual(problems([1, 2]), ['(root): must be an object, got an array']);
  const dir = await mkdtemp(join(tmpdir(), 'wc-sim-'));
  const file = join(dir, 'broken.json');
  await writeFile(file, '{ "name": ');
  await assert.rejects(
    loadScenario(file),
    (err: unknown) => err instanceof ScenarioError && /not valid JSON/.test(err.message),
  );
  await assert.rejects(
    loadScenario(join(dir, 'missing.json')),
    (err: unknown) => err instanceof ScenarioError && /cannot read/.test(err.message),
  );
});

test('scenario: the four shipped scenarios are valid', async () => {
  const files = shippedScenarioFiles();
  assert.equal(files.length, 4);
  for (const f of files) {
    const s = await loadScenario(f);
    assert.ok(s.watchers.length > 0 && s.durationS > 0, f);
  }
});
