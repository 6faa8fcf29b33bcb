/**
 * Sweeps: `--sweep` parsing, variants, and a small sweep run through the
 * piscina pool giving the same results as running each variant in-process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runJobs } from '../../src/sim/sweep.js';
import { buildVariants, parseSettings, parseSweep, SweepError } from '../../src/sim/variant.js';
import { deterministicPart, smallScenario } from './fixtures.js';

test('sweep: parsing and variants', () => {
  assert.deepEqual(parseSweep('pass.scanBudget=500,2000'), { param: 'scanBudget', values: [500, 2000] });
  assert.deepEqual(parseSweep('candidateOrder=kep,fifo'), { param: 'candidateOrder', values: ['kep', 'fifo'] });
  assert.throws(() => parseSweep('scanBudget'), SweepError);
  assert.throws(() => parseSweep('colour=1,2'), /unknown parameter "colour"/);
  assert.throws(() => parseSweep('maxWatchers=0'), /integer >= 1/);
  assert.throws(() => parseSweep('candidateOrder=random'), /not one of kep, fifo, position/);
  const v = buildVariants(['alpha', 'beta'], parseSweep('budget=100,200'));
  assert.deepEqual(
    v.map((x) => [x.label, x.mode, x.pass]),
    [
      ['alpha budget=100', 'alpha', { scanBudget: 100, pushBudget: 100 }],
      ['alpha budget=200', 'alpha', { scanBudget: 200, pushBudget: 200 }],
      ['beta budget=100', 'beta', { scanBudget: 100, pushBudget: 100 }],
      ['beta budget=200', 'beta', { scanBudget: 200, pushBudget: 200 }],
    ],
  );
  assert.deepEqual(
    buildVariants(['off'], parseSweep('mode=alpha,beta')).map((x) => x.label),
    ['alpha', 'beta'],
  );
  assert.deepEqual(buildVariants(['alpha'], parseSweep('writeScale=2'))[0]!.writeScale, 2);
  const fixed = buildVariants(['beta'], parseSweep('maxWatchers=64'), parseSettings('scanBudget=1000,busyShare=0.2'));
  assert.deepEqual(
    fixed.map((x) => [x.label, x.pass]),
    [['beta scanBudget=1000 busyShare=0.2 maxWatchers=64', { scanBudget: 1000, busyShare: 0.2, maxWatchers: 64 }]],
  );
  assert.throws(() => parseSettings('mode=off'), /use --modes/);
  assert.throws(() => parseSettings('scanBudget=1,2'), SweepError);
});

test('sweep: variants run in parallel through piscina, same results as in-process', async () => {
  const scenario = smallScenario({ durationS: 2, drainS: 2, halts: [] });
  const jobs = buildVariants(['alpha'], parseSweep('maxWatchers=1,512')).map((variant) => ({ scenario, variant }));
  const pooled = await runJobs(jobs, { threads: 2, progress: false });
  const local = await runJobs(jobs, { inProcess: true, progress: false });
  assert.equal(pooled.length, 2);
  assert.deepEqual(
    pooled.map((r) => r.variant.label),
    ['alpha maxWatchers=1', 'alpha maxWatchers=512'],
  );
  for (let i = 0; i < jobs.length; i++)
    assert.equal(JSON.stringify(deterministicPart(pooled[i]!)), JSON.stringify(deterministicPart(local[i]!)));
  // The member cap shows: with one watcher per pass, some watcher waited longer for its first service.
  assert.ok(pooled[0]!.catchup.passes > 0);
});
