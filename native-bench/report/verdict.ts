/**
 * The verdict that opens the bench report (issue 13, deliverable 8): for each
 * KEP-6268 measurement, at each condition this run measured, the figure of
 * every mode, which mode wins, by what ratio (runner-up / winner for a figure
 * where lower is better, winner / runner-up where higher is better), and beta
 * against alpha. Everything comes from this run's rows; a measurement whose
 * suite did not run is left out.
 *
 * The KEP's four measurements ("How we measure success"), as this bench
 * takes them:
 *  1. healthy delivery latency with N stalled watchers: stall-phase p99;
 *  2. serializations per event: JSON encodings per written event;
 *  3. time to resync: the time until every slow watcher resynced (KEP suite,
 *     after the resume; catchup suite, from the open), and how many did;
 *  4. no starvation: the share of slow watchers resynced on their own stream
 *     (a watcher never served never resyncs; the simulator measures passes
 *     until served directly).
 * Off resyncs nobody: a force-closed stream that reconnects and replays is a
 * new watch, not a resync (KepRow.resync counts same-stream resyncs only).
 */
import type { Mode } from '../../src/index.js';
import { fmt } from '../lib/table.js';
import type { BenchReport, CatchupRow, KepRow, ThroughputRow } from '../lib/types.js';

export interface Verdict {
  measurement: string;
  condition: string;
  /** Figure per mode, formatted ('' when the mode did not run, '-' when it has no such figure). */
  figures: Partial<Record<Mode, string>>;
  winner: string;
  /** e.g. "2.1x" or "" when there is nothing to compare. */
  by: string;
  /** beta against alpha on the same figure: "beta 1.8x better" / "beta 3.0x worse" / "tie". */
  betaVsAlpha: string;
}

const MODES: Mode[] = ['off', 'alpha', 'beta'];
/** A time figure for "not every watcher resynced": after any finished time, fewer resynced = later. */
const UNFINISHED = 1e15;

interface Figure {
  mode: Mode;
  value: number;
  /** Shown instead of the bare value. */
  text: string;
  /** False: this mode cannot win this measurement (e.g. off has no resync). */
  eligible: boolean;
}

function ratioText(a: number, b: number): string {
  const ua = a > UNFINISHED / 2;
  const ub = b > UNFINISHED / 2;
  // "Not every watcher resynced" figures have no ratio: say which finished, or compare the counts.
  if (ua || ub) return ua && ub ? `${fmt(UNFINISHED - Math.min(a, b))} vs ${fmt(UNFINISHED - Math.max(a, b))} resynced` : 'only it resynced all';
  if (a === b) return '1.0x';
  if (b === 0) return a === 0 ? '1.0x' : '∞';
  return `${fmt(a / b)}x`;
}

/** A verdict row from per-mode figures; `lowerWins` says which direction is better. */
function judge(measurement: string, condition: string, figures: Figure[], lowerWins: boolean): Verdict {
  const out: Verdict = { measurement, condition, figures: {}, winner: '', by: '', betaVsAlpha: '' };
  for (const f of figures) out.figures[f.mode] = f.text;
  const better = (a: number, b: number): boolean => (lowerWins ? a < b : a > b);
  const ranked = figures.filter((f) => f.eligible).sort((a, b) => (better(a.value, b.value) ? -1 : better(b.value, a.value) ? 1 : 0));
  const first = ranked[0];
  const second = ranked[1];
  if (first !== undefined) {
    const tied = second !== undefined && second.value === first.value;
    out.winner = tied ? ranked.filter((f) => f.value === first.value).map((f) => f.mode).join(' = ') : first.mode;
    if (second !== undefined && !tied) out.by = lowerWins ? ratioText(second.value, first.value) : ratioText(first.value, second.value);
  }
  const alpha = figures.find((f) => f.mode === 'alpha' && f.eligible);
  const beta = figures.find((f) => f.mode === 'beta' && f.eligible);
  if (alpha !== undefined && beta !== undefined) {
    const ua = alpha.value > UNFINISHED / 2;
    const ub = beta.value > UNFINISHED / 2;
    if (alpha.value === beta.value) out.betaVsAlpha = 'tie';
    else if (ua || ub) out.betaVsAlpha = ua && ub ? `beta ${fmt(UNFINISHED - beta.value)} vs alpha ${fmt(UNFINISHED - alpha.value)} resynced` : `only ${ua ? 'beta' : 'alpha'} resynced all`;
    else if (better(beta.value, alpha.value)) out.betaVsAlpha = `beta ${lowerWins ? ratioText(alpha.value, beta.value) : ratioText(beta.value, alpha.value)} better`;
    else out.betaVsAlpha = `beta ${lowerWins ? ratioText(beta.value, alpha.value) : ratioText(alpha.value, beta.value)} worse`;
  }
  return out;
}

const us = (v: number): string => (v >= 10_000 ? `${fmt(v / 1000)} ms` : `${fmt(v)} µs`);

function kepVerdicts(rows: KepRow[], out: Verdict[]): void {
  const stalled = rows.filter((r) => r.variant === 'stalled');
  const counts = [...new Set(stalled.map((r) => r.slow))].sort((a, b) => a - b);
  const at = (mode: Mode, n: number): KepRow | undefined => stalled.find((r) => r.mode === mode && r.slow === n);
  for (const n of counts) {
    const figs = MODES.flatMap((mode) => {
      const r = at(mode, n);
      if (r === undefined) return [];
      const base = at(mode, 0);
      const vsNone = n > 0 && base !== undefined && base.latencyStall.p99Us > 0 ? ` (${fmt(r.latencyStall.p99Us / base.latencyStall.p99Us)}x its N=0)` : '';
      const closes = r.forceCloses > 0 ? `, ${fmt(r.forceCloses)} force-closes` : '';
      return [{ mode, value: r.latencyStall.p99Us, text: `${us(r.latencyStall.p99Us)}${vsNone}${closes}`, eligible: true }];
    });
    if (figs.length > 0) out.push(judge('1. healthy p99 latency (stall phase)', `${n.toLocaleString('en-US')} stalled`, figs, true));
  }
  const biggest = counts[counts.length - 1];
  if (biggest !== undefined && biggest > 0) {
    const figs = MODES.flatMap((mode) => {
      const r = at(mode, biggest);
      // The goal is one per event: fewer means some events reached no watcher (off's closed streams), more is waste.
      return r === undefined ? [] : [{ mode, value: Math.abs(r.encodingsPerEvent - 1), text: fmt(r.encodingsPerEvent), eligible: true }];
    });
    out.push(judge('2. JSON serializations per event (closest to 1 wins)', `${biggest.toLocaleString('en-US')} stalled`, figs, true));
  }
  for (const n of counts.filter((c) => c > 0)) {
    const figs = MODES.flatMap((mode): Figure[] => {
      const r = at(mode, n);
      if (r === undefined) return [];
      if (mode === 'off') return [{ mode, value: 0, text: `none (${fmt(r.reconnects)} reconnects)`, eligible: false }];
      const all = r.resync.resynced === r.resync.slow;
      // Every slow watcher resynced: ranked by the last one's time; otherwise after those, by how many did.
      const text = all ? `all in ${fmt(r.resync.maxMs / 1000)} s` : `${r.resync.resynced}/${r.resync.slow} by the end`;
      return [{ mode, value: all ? r.resync.maxMs : UNFINISHED - r.resync.resynced, text, eligible: true }];
    });
    out.push(judge('3. time until every slow watcher resynced (after resume)', `${n.toLocaleString('en-US')} stalled`, figs, true));
  }
  for (const n of counts.filter((c) => c > 0)) {
    const figs = MODES.flatMap((mode): Figure[] => {
      const r = at(mode, n);
      if (r === undefined) return [];
      const share = r.resync.slow > 0 ? r.resync.resynced / r.resync.slow : 0;
      return [{ mode, value: share, text: `${fmt(share * 100)} % on their own stream`, eligible: mode !== 'off' }];
    });
    out.push(judge('4. no starvation: slow watchers served to resync', `${n.toLocaleString('en-US')} stalled`, figs, false));
  }
}

function catchupVerdicts(rows: CatchupRow[], out: Verdict[]): void {
  const ws = [...new Set(rows.map((r) => r.watchers))].sort((a, b) => a - b);
  for (const w of ws) {
    const figs = MODES.flatMap((mode): Figure[] => {
      const r = rows.find((x) => x.mode === mode && x.watchers === w);
      if (r === undefined) return [];
      const all = r.resynced === r.watchers;
      const text = all ? `all in ${fmt(r.allResyncedMs / 1000)} s` : `${r.resynced}/${r.watchers}${r.timedOut ? ` in ${fmt(r.maxS)} s` : ''}${r.expired410 > 0 ? `, ${fmt(r.expired410)} 410s` : ''}`;
      // Ranked by time when all resynced; otherwise after every mode that did, by how many did.
      return [{ mode, value: all ? r.allResyncedMs : UNFINISHED - r.resynced, text, eligible: true }];
    });
    out.push(judge('3. catch-up: time until every watcher resynced', `${w.toLocaleString('en-US')} watcher${w === 1 ? '' : 's'}, ${rows[0]!.historyEvents.toLocaleString('en-US')} events behind`, figs, true));
    const lat = MODES.flatMap((mode): Figure[] => {
      const r = rows.find((x) => x.mode === mode && x.watchers === w);
      return r === undefined ? [] : [{ mode, value: r.healthyDuring.p99Us, text: `${us(r.healthyDuring.p99Us)} (${fmt(r.healthyP99Ratio)}x without)`, eligible: true }];
    });
    out.push(judge('1. healthy p99 during catch-up', `${w.toLocaleString('en-US')} watcher${w === 1 ? '' : 's'} catching up`, lat, true));
  }
}

function ingestVerdicts(rows: ThroughputRow[], out: Verdict[]): void {
  for (const scenario of ['trigger-1k', 'all-100k'] as const) {
    const figs = MODES.flatMap((mode): Figure[] => {
      const r = rows.find((x) => x.mode === mode && x.scenario === scenario);
      return r === undefined ? [] : [{ mode, value: r.eventsPerSec, text: `${fmt(r.eventsPerSec)} ev/s`, eligible: true }];
    });
    if (figs.length > 0) out.push(judge('ingest (max sustained, 2 KiB pods)', scenario, figs, false));
  }
}

/** The verdict rows of a report, in the order of the KEP's measurements per suite. */
export function verdicts(report: BenchReport): Verdict[] {
  const out: Verdict[] = [];
  kepVerdicts(report.kep, out);
  catchupVerdicts(report.catchup, out);
  ingestVerdicts(report.throughput, out);
  return out;
}

export const VERDICT_HEADERS = ['KEP measurement', 'condition', 'off', 'alpha', 'beta', 'winner', 'by', 'beta vs alpha'];

export function verdictCells(v: Verdict): string[] {
  return [v.measurement, v.condition, v.figures.off ?? '', v.figures.alpha ?? '', v.figures.beta ?? '', v.winner, v.by, v.betaVsAlpha];
}
