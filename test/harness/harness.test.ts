/**
 * The model-based correctness harness over every mode: many seeded runs,
 * every session checked against the linearized write history. The default
 * run covers at least 10,000 sessions per mode; `npm run soak` runs more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MODES } from '../../src/index.js';
import { makeTrace, runTrace } from './run.js';
import { formatViolation } from './report.js';

const SESSIONS_PER_MODE = Number(process.env.HARNESS_SESSIONS ?? 10_000);

for (const mode of MODES) {
  test(`harness: ${mode} mode, >= ${SESSIONS_PER_MODE} sessions against the write history`, async () => {
    let sessions = 0;
    let events = 0;
    let runs = 0;
    const totals: Record<string, number> = {};
    for (let seed = 1; sessions < SESSIONS_PER_MODE; seed++) {
      const trace = makeTrace(seed * 7919, 120 + (seed % 5) * 40, 40);
      const r = await runTrace(trace, mode);
      runs++;
      sessions += r.sessions;
      events += r.events;
      for (const [k, x] of Object.entries(r.counters)) totals[k] = (totals[k] ?? 0) + x;
      if (r.violations.length > 0)
        assert.fail(`seed ${trace.seed}:\n${r.violations.slice(0, 5).map(formatViolation).join('\n')}`);
    }
    console.log(
      `# harness ${mode}: ${runs} runs, ${sessions} sessions, ${events} events checked; engine counters ${JSON.stringify(totals)}`,
    );
    // The harness must exercise what it guards: stalls and catch-up in alpha/beta, force-closes in off,
    // and broken store watches (re-lists) in every mode.
    assert.ok(totals.storeWatchBreaks! > 0, 'no store watch was ever broken');
    if (mode === 'off') assert.ok(totals.unresponsive! > 0, 'off mode runs never force-closed a watcher');
    else {
      assert.ok(totals.stalls! > 0 && totals.catchups! > 0 && totals.deferred! > 0, 'no stall was caught up');
      assert.ok(totals.expired! + totals.expiredInitial! > 0, 'no watcher ever expired');
      assert.equal(totals.unresponsive, 0, 'alpha/beta never force-close');
    }
    if (mode === 'beta')
      assert.equal(totals.skipped, 0, 'beta resyncs at the last dispatched RV: the live path never skips');
  });
}
