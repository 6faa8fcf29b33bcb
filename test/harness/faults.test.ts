/**
 * Proof that the harness can fail: each injected engine fault must be
 * reported, with a minimal reproduction (seed and a shrunk trace).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Mode } from '../../src/index.js';
import { FAULT_NAMES, type FaultName } from '../../src/testing/faults.js';
import { makeTrace, runTrace } from './run.js';
import { shrink } from './shrink.js';
import { formatViolation } from './report.js';

/** Faults of the sync pass need a mode with passes. */
const MODE_FOR: Record<FaultName, Mode> = {
  drop: 'alpha',
  duplicate: 'off',
  reorder: 'beta',
  'bookmark-backwards': 'alpha',
  'skip-transition': 'off',
  'early-resync': 'alpha',
};

for (const name of FAULT_NAMES) {
  test(`harness catches the injected fault "${name}" and shrinks it`, async () => {
    const mode = MODE_FOR[name];
    let found: { seed: number; skip: number } | undefined;
    for (let seed = 1; seed <= 40 && found === undefined; seed++) {
      for (const skip of [0, 3, 20]) {
        const r = await runTrace(makeTrace(seed, 150, 30), mode, { name, skip });
        if (r.violations.length > 0) {
          found = { seed, skip };
          break;
        }
      }
    }
    assert.ok(found, `fault ${name} was never reported`);
    const small = await shrink(makeTrace(found.seed, 150, 30), mode, { name, skip: found.skip });
    assert.ok(small.violations.length > 0);
    assert.ok(small.trace.writes <= 150 && small.trace.consumers.length <= 30);
    console.log(
      `# fault ${name} (${mode}): seed ${found.seed}, shrunk to ${small.trace.writes} writes and ${small.trace.consumers.length} consumer(s) ${JSON.stringify(small.trace.consumers)}\n${formatViolation(small.violations[0]!)}`,
    );
  });
}
