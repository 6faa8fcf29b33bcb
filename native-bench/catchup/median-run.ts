/**
 * The median run of a repeated catch-up (--catchup-repeat N): one run's
 * "time until every watcher resynced" is a single sample, and on a shared
 * 2-vCPU VM the same build's figure swings by a third from run to run (issue
 * 13's A/B rounds: beta W = 1 cold 100-180 ms, W = 100 cold 1.0-1.5 s). The
 * report then shows the run in the middle, never an average of figures that
 * belong to different runs:
 *  1. Runs are ranked by their cold window: all resynced first, by time;
 *     then by how many resynced, most first; a timed-out run after one that
 *     finished with as many.
 *  2. The row is the median run's (for an even N the lower middle one: the
 *     faster of the two), so every figure of it comes from one run.
 *  3. Its `warm` is the median run's by the warm window, ranked the same way
 *     (each run's warm repeat is the same process's second catch-up).
 *  4. `runs` keeps every run's cold and warm figures in run order, so the
 *     spread is in the JSON and the report.
 */
import type { CatchupRow, ResyncSample } from '../lib/types.js';

/** Step 1's order: negative when `a` ranks before (did better than) `b`. */
export function compareResync(a: ResyncSample, b: ResyncSample, watchers: number): number {
  const aAll = a.resynced === watchers;
  const bAll = b.resynced === watchers;
  if (aAll && bAll) return a.allResyncedMs - b.allResyncedMs;
  if (aAll !== bAll) return aAll ? -1 : 1;
  if (a.resynced !== b.resynced) return b.resynced - a.resynced;
  return Number(a.timedOut) - Number(b.timedOut);
}

function sample(f: ResyncSample): ResyncSample {
  return { resynced: f.resynced, allResyncedMs: f.allResyncedMs, expired410: f.expired410, timedOut: f.timedOut };
}

/** The index, in `samples`, of the median one by step 1's order (step 2: the lower middle). */
function medianIndex(samples: ResyncSample[], watchers: number): number {
  const order = samples.map((_, i) => i).sort((i, j) => compareResync(samples[i]!, samples[j]!, watchers) || i - j);
  return order[(order.length - 1) >> 1]!;
}

/** The median run of `runs` (one mode, one W, at least one run), with every run's figures (module doc). */
export function medianRun(runs: CatchupRow[]): CatchupRow {
  if (runs.length === 0) throw new Error('medianRun: no run');
  if (runs.length === 1) return runs[0]!;
  const w = runs[0]!.watchers;
  const cold = runs.map(sample);
  const warm = runs.map((r) => sample(r.warm));
  const row = runs[medianIndex(cold, w)]!;
  return { ...row, warm: runs[medianIndex(warm, w)]!.warm, runs: { cold, warm } };
}
