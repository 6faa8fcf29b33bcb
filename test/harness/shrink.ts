/**
 * Shrinking a failing trace to a minimal reproduction: first the fewest
 * writes that still fail (the write stream is prefix-stable for a seed),
 * then greedily drop consumers one at a time while the failure persists.
 */
import type { Mode } from '../../src/index.js';
import type { FaultName } from '../../src/testing/faults.js';
import { runTrace, type Trace } from './run.js';
import type { Violation } from './session.js';

export interface Shrunk {
  trace: Trace;
  violations: Violation[];
  runs: number;
}

export async function shrink(
  trace: Trace,
  mode: Mode,
  fault?: { name: FaultName; skip: number },
  maxRuns = 150,
): Promise<Shrunk> {
  let runs = 0;
  const fails = async (t: Trace): Promise<Violation[] | undefined> => {
    runs++;
    const r = await runTrace(t, mode, fault);
    return r.violations.length > 0 ? r.violations : undefined;
  };
  let best = trace;
  let violations = (await fails(best)) ?? [];
  if (violations.length === 0) return { trace, violations, runs };
  // 1. Fewest writes: binary search over the prefix length (consumers starting later are dropped).
  let lo = 1;
  let hi = best.writes;
  while (lo < hi && runs < maxRuns) {
    const mid = (lo + hi) >> 1;
    const t: Trace = { ...best, writes: mid, consumers: best.consumers.filter((c) => c.at < mid) };
    const v = await fails(t);
    if (v !== undefined) {
      hi = mid;
      violations = v;
    } else lo = mid + 1;
  }
  best = { ...best, writes: hi, consumers: best.consumers.filter((c) => c.at < hi) };
  // 2. Fewest consumers.
  for (let i = best.consumers.length - 1; i >= 0 && runs < maxRuns; i--) {
    const t: Trace = { ...best, consumers: best.consumers.filter((_, j) => j !== i) };
    const v = await fails(t);
    if (v !== undefined) {
      best = t;
      violations = v;
    }
  }
  const final = await fails(best);
  return { trace: best, violations: final ?? violations, runs };
}
