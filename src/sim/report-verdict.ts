/**
 * Verdicts: for one KEP-6268 measurement at one condition, the figure of
 * every competitor (a mode, or a sweep variant), which one wins, by what
 * ratio (runner-up / winner where lower is better, winner / runner-up where
 * higher is better), and beta against alpha. The simulator's report and the
 * bench's report (native-bench/report/verdict.ts) both open with a table of
 * these (issue 13, deliverable 8); this file holds the one judging rule and
 * the simulator's verdicts.
 *
 * The simulator's verdict per scenario, for the KEP's four measurements:
 *  1. healthy-watcher delivery latency: p99 (virtual ms);
 *  2. serializations per event: JSON encodings per written event (closest to 1);
 *  3. time to resync: p99 of stall end -> synced (off never resyncs: a
 *     force-closed watch that reconnects is a new watch);
 *  4. no starvation: the worst number of passes with room before a newly
 *     unsynced watcher was first served.
 */
import type { Mode } from '../cache/cache-options.js';
import { headline, type SimReport } from './report.js';
import { fmt } from './svg.js';

export interface Verdict {
  measurement: string;
  condition: string;
  /** Formatted figure per competitor key. */
  figures: Record<string, string>;
  winner: string;
  /** Runner-up against the winner, e.g. "2.1x"; '' when there is nothing to compare. */
  by: string;
  /** "beta 1.8x better" / "beta 3.0x worse" / "tie"; '' without both modes. */
  betaVsAlpha: string;
}

export interface Figure {
  /** The competitor: a mode, or a sweep variant's label. */
  key: string;
  mode: Mode;
  value: number;
  text: string;
  /** False: this competitor cannot win this measurement (off has no resync and no passes). */
  eligible: boolean;
}

/**
 * A time figure for "not every watcher resynced": value UNFINISHED - count
 * ranks after every finished time, fewer resynced later. Such figures have
 * no ratio; the verdict compares their counts instead.
 */
export const UNFINISHED = 1e15;

const unfinished = (v: number): boolean => v > UNFINISHED / 2;

function ratio(worse: number, better: number): string {
  if (unfinished(worse) || unfinished(better)) {
    return unfinished(worse) && unfinished(better)
      ? `${fmt(UNFINISHED - better)} vs ${fmt(UNFINISHED - worse)} resynced`
      : 'only it resynced all';
  }
  if (worse === better) return '1.00x';
  if (better === 0) return '∞';
  const r = worse / better;
  return r < 10 ? `${r.toFixed(2)}x` : `${fmt(r)}x`;
}

/** The verdict of `figures`; `lowerWins` says which direction is better. */
export function judge(measurement: string, condition: string, figures: Figure[], lowerWins: boolean): Verdict {
  const out: Verdict = { measurement, condition, figures: {}, winner: '', by: '', betaVsAlpha: '' };
  for (const f of figures) out.figures[f.key] = f.text;
  const better = (a: number, b: number): boolean => (lowerWins ? a < b : a > b);
  const ranked = figures
    .filter((f) => f.eligible)
    .sort((a, b) => (better(a.value, b.value) ? -1 : better(b.value, a.value) ? 1 : 0));
  const first = ranked[0];
  const second = ranked[1];
  if (first !== undefined) {
    const tied = second !== undefined && second.value === first.value;
    out.winner = tied
      ? ranked
          .filter((f) => f.value === first.value)
          .map((f) => f.key)
          .join(' = ')
      : first.key;
    if (second !== undefined && !tied)
      out.by = lowerWins ? ratio(second.value, first.value) : ratio(first.value, second.value);
  }
  const alpha = figures.find((f) => f.mode === 'alpha' && f.eligible);
  const beta = figures.find((f) => f.mode === 'beta' && f.eligible);
  if (alpha !== undefined && beta !== undefined) {
    const ua = unfinished(alpha.value);
    const ub = unfinished(beta.value);
    if (alpha.value === beta.value) out.betaVsAlpha = 'tie';
    else if (ua || ub)
      out.betaVsAlpha =
        ua && ub
          ? `beta ${fmt(UNFINISHED - beta.value)} vs alpha ${fmt(UNFINISHED - alpha.value)} resynced`
          : `only ${ua ? 'beta' : 'alpha'} resynced all`;
    else if (better(beta.value, alpha.value))
      out.betaVsAlpha = `beta ${lowerWins ? ratio(alpha.value, beta.value) : ratio(beta.value, alpha.value)} better`;
    else out.betaVsAlpha = `beta ${lowerWins ? ratio(beta.value, alpha.value) : ratio(alpha.value, beta.value)} worse`;
  }
  return out;
}

const ms = (v: number): string => `${fmt(v)} ms`;

/** The simulator's verdicts: every scenario, the four measurements, every variant of the run. */
export function simVerdicts(report: SimReport): Verdict[] {
  const out: Verdict[] = [];
  for (const run of report.runs) {
    const rows = run.results.map((r) => ({ r, h: headline(r), key: r.variant.label, mode: r.variant.mode }));
    const at = run.name;
    // Virtual-time p99s often tie (at 0): the max decides then.
    const p99Tie = new Set(rows.map(({ h }) => h.healthyP99)).size === 1;
    out.push(
      judge(
        p99Tie ? '1. healthy latency (p99 tie: max)' : '1. healthy p99 latency',
        at,
        rows.map(({ h, key, mode }) => ({
          key,
          mode,
          value: p99Tie ? h.healthyMax : h.healthyP99,
          text: `p99 ${ms(h.healthyP99)}, max ${ms(h.healthyMax)}`,
          eligible: true,
        })),
        true,
      ),
    );
    // Nothing beats one encoding per event: below 1 (events that reached nobody) counts as 1.
    out.push(
      judge(
        '2. JSON serializations per event',
        at,
        rows.map(({ h, key, mode }) => ({
          key,
          mode,
          value: Math.max(1, h.encPerEvent),
          text: h.encPerEvent.toFixed(3),
          eligible: true,
        })),
        true,
      ),
    );
    out.push(
      judge(
        '3. resync p99 (stall end -> synced)',
        at,
        rows.map(({ h, key, mode }) =>
          mode === 'off'
            ? { key, mode, value: 0, text: `none (${h.forceCloses} force-closes)`, eligible: false }
            : {
                key,
                mode,
                value: h.resyncP99 ?? UNFINISHED,
                text:
                  h.resyncP99 === null
                    ? 'no resync'
                    : `${fmt(h.resyncP99)} s${h.expired410 > 0 ? `, ${h.expired410} 410s` : ''}`,
                eligible: true,
              },
        ),
        true,
      ),
    );
    out.push(
      judge(
        '4. no starvation: worst passes with room until first served',
        at,
        rows.map(({ h, key, mode }) =>
          mode === 'off' || h.firstServedMax === null
            ? { key, mode, value: 0, text: mode === 'off' ? 'no passes' : 'none unsynced', eligible: false }
            : { key, mode, value: h.firstServedMax, text: String(h.firstServedMax), eligible: true },
        ),
        true,
      ),
    );
  }
  return out;
}

/** The competitor keys of a set of verdicts, in first-seen order. */
export function verdictKeys(vs: readonly Verdict[]): string[] {
  const keys: string[] = [];
  for (const v of vs) for (const k of Object.keys(v.figures)) if (!keys.includes(k)) keys.push(k);
  return keys;
}

export function verdictHeaders(keys: readonly string[]): string[] {
  return ['KEP measurement', 'condition', ...keys, 'winner', 'by', 'beta vs alpha'];
}

export function verdictCells(v: Verdict, keys: readonly string[]): string[] {
  return [v.measurement, v.condition, ...keys.map((k) => v.figures[k] ?? ''), v.winner, v.by, v.betaVsAlpha];
}
