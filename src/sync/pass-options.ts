/**
 * The bounds and periods of sync passes (KEP-6268 "Initial values"; API.md
 * `pass`). Every value is an option; these are the defaults.
 */
import { BadRequestError } from '../core/errors.js';

/**
 * Candidate order of a pass: 'kep' (free share, then new/drained, then
 * rotation from the cursor: the KEP's order), 'fifo' (the order watchers
 * went unsynced) or 'position' (lowest position first). The last two exist
 * for the simulator to compare against.
 */
export type CandidateOrder = 'kep' | 'fifo' | 'position';

export interface PassOptions {
  candidateOrder: CandidateOrder;
  /** Watchers served per pass (member cap). */
  maxWatchers: number;
  /** Scan units per pass, across all cohorts: 1 per history event read, `intervalOpenCost` per interval open. */
  scanBudget: number;
  /** Pushes per pass across all cohorts (the retry rounds get the same again). */
  pushBudget: number;
  intervalOpenCost: number;
  normalPeriodMs: number;
  idlePeriodMs: number;
  busyMinMs: number;
  busyMaxMs: number;
  /** Share of the host thread passes may take when busy (0.1 = about a tenth). */
  busyShare: number;
  /** Beta: hand a watcher back to the live path when it is within this many events of the resync point. */
  handOffDistance: number;
  /**
   * Beta: the most events the sync worker keeps queued at once for the consumers that read on the main
   * thread and are reading (src/beta/consumer-window.ts); 0: no bound. Alpha and off ignore it.
   */
  consumerWindow: number;
}

/** The numeric pass options' names (every option but `candidateOrder`), for scenario files and sweeps. */
export const NUMERIC_PASS_OPTIONS = [
  'maxWatchers',
  'scanBudget',
  'pushBudget',
  'intervalOpenCost',
  'normalPeriodMs',
  'idlePeriodMs',
  'busyMinMs',
  'busyMaxMs',
  'busyShare',
  'handOffDistance',
  'consumerWindow',
] as const satisfies readonly Exclude<keyof PassOptions, 'candidateOrder'>[];

export const DEFAULT_PASS_OPTIONS: Readonly<PassOptions> = Object.freeze({
  candidateOrder: 'kep',
  maxWatchers: 512,
  scanBudget: 2000,
  pushBudget: 2000,
  intervalOpenCost: 64,
  normalPeriodMs: 10,
  idlePeriodMs: 100,
  busyMinMs: 1,
  busyMaxMs: 10,
  busyShare: 0.1,
  handOffDistance: 16,
  consumerWindow: 0,
});

/**
 * Alpha's defaults differ where the simulator showed it pays (docs/tuning.md):
 * half the scan and push budgets halve the healthy watchers' p99 while passes
 * run on the main thread, and dense catch-up gets faster. Beta keeps the
 * KEP's values (its passes are off the main thread).
 */
const ALPHA_PASS_DEFAULTS: Readonly<Partial<PassOptions>> = Object.freeze({ scanBudget: 1000, pushBudget: 1000 });

/**
 * Beta's passes run in the sync worker thread, not on the main thread: the
 * KEP's bounds exist to keep passes under a tenth of the dispatcher's time,
 * which here is not at stake. Budgets and the busy share let a cohort move
 * at the pace of the hardware and its consumers (issue 13, deliverable 4):
 * 50,000 events behind at 2,000 pushes per 10 ms pass took tens of seconds.
 * The member cap and the one-channel-per-cohort rule still bound a pass.
 */
const BETA_PASS_DEFAULTS: Readonly<Partial<PassOptions>> = Object.freeze({
  maxWatchers: 4096,
  scanBudget: 20_000,
  pushBudget: 100_000,
  busyShare: 0.5,
  // No 1 ms floor between passes: the worker waits for room, and once a consumer made some the next
  // pass keeps only the busy gap (sub-millisecond delays run on setImmediate in the worker thread).
  busyMinMs: 0,
  // What the worker queues for the main thread's consumers at once: 131,072 events, ~40-50 ms of their
  // reading here. Without a bound, 10,000 watchers resuming after a mass stall were fed faster than the
  // main thread read them, and its ingest fell a second behind. 65,536 cost the 1,000-watcher catch-up as
  // much and bounded the ingest lag no better (the resume's first turns, the stall's full channels, set it).
  consumerWindow: 131_072,
});

/** The options a pass runs with: `input` over the mode's defaults (without a mode: the KEP's initial values). */
export function resolvePassOptions(
  input: Partial<PassOptions> | undefined,
  mode: 'off' | 'alpha' | 'beta' = 'off',
): PassOptions {
  const o = {
    ...DEFAULT_PASS_OPTIONS,
    ...(mode === 'alpha' ? ALPHA_PASS_DEFAULTS : mode === 'beta' ? BETA_PASS_DEFAULTS : {}),
    ...(input ?? {}),
  };
  if (!['kep', 'fifo', 'position'].includes(o.candidateOrder))
    throw new BadRequestError(`pass.candidateOrder must be kep, fifo or position, got ${String(o.candidateOrder)}`);
  for (const [k, v] of Object.entries(o)) {
    if (k === 'candidateOrder') continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new BadRequestError(`pass.${k} must be a finite number >= 0, got ${String(v)}`);
  }
  if (o.maxWatchers < 1 || o.scanBudget < 1 || o.pushBudget < 1)
    throw new BadRequestError('pass.maxWatchers, pass.scanBudget and pass.pushBudget must be >= 1');
  if (o.busyMinMs > o.busyMaxMs) throw new BadRequestError('pass.busyMinMs must be <= pass.busyMaxMs');
  if (o.busyShare <= 0 || o.busyShare >= 1) throw new BadRequestError('pass.busyShare must be in (0, 1)');
  return o;
}
