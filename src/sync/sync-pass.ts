/**
 * SyncPass: one bounded, shared catch-up pass over the unsynced watchers
 * (KEP-6268 "Sync pass"), host-agnostic: alpha runs it on the main thread
 * against EventHistory; the simulator drives the same code under virtual time.
 *
 * Steps (numbered as in the KEP):
 * 1. Read the oldest servable RV by the rule the resume path uses. Drop
 *    stopped watchers; mark expired every unsynced watcher whose position is
 *    below oldest - 1 (all of them, candidate or not). Candidates are the
 *    rest with room in their channel, ordered by (a) free share of the
 *    channel, (b) new to the unsynced set or drained since last service,
 *    (c) rotation from the persistent cursor (positions at or above it
 *    first); the member cap keeps the first ones.
 * 2. Form cohorts: the lead is the first unserved candidate; one history
 *    interval is opened from its position and scanned up to the remaining
 *    budget; followers join as the scan passes their position. A candidate
 *    below the lead never joins.
 * 3. For each scanned event, selection uses what the event computed once
 *    (namespace, name, trigger values); the shared form is made by the first
 *    member that selects it and reused by the rest (one wrap per event).
 * 4. Push in order with non-blocking adds; a failure ends the offering to
 *    that member for this cohort and records what it is owed. Owed events are
 *    re-offered after the other cohorts, in up to two rounds, to members whose
 *    channel has room again.
 * 5. A member that accepted everything moves to the last scanned RV.
 * 6. A member that accepted everything and whose cohort scan reached the
 *    resync point becomes synced. Deferred stops (expiry drains) are released
 *    at the end of the pass. The cursor becomes the last scanned RV of the
 *    last cohort served.
 */
import type { PassOptions } from './pass-options.js';
import type { FaultPoints } from '../watch/fault-points.js';
import { channels } from '../observe/channels.js';
import { PassReport } from './pass-report.js';
import type { SyncCursor } from './sync-cursor.js';

/** A history event as a pass sees it. */
export interface PassEvent {
  readonly rv: number;
}

/** What offering one event to one member did. */
export const enum Offer {
  NotSelected = 0,
  Pushed = 1,
  Full = 2,
  /** At or below the watcher's position: it has it already (invariant 2). */
  AlreadyHas = 3,
  /**
   * Pushed, but into the member's last slot, which now stands for a run of consecutive events
   * (src/ring/spsc-channel.ts "Run slots"): an event delivered like Pushed that took no slot, so the
   * channel-capacity cap per cohort, which counts slots, does not move; the push budget (the pass's work)
   * counts it as a push.
   */
  PushedInRun = 4,
}

/** What a pass reads of a member; its KEP per-watcher state is the cursor (moved only through its methods). */
export interface PassMember {
  /** Its watcher's id (observers of watchcache:pass-start key by it). */
  readonly id: number | string;
  readonly cursor: SyncCursor;
  readonly reachedLive: boolean;
  readonly capacity: number;
  readonly free: number;
  /** Still accepting events (not stopped or draining). */
  readonly accepting: boolean;
}

export interface PassCursor<E extends PassEvent> {
  next(): E | undefined;
  /** Set when the cursor stopped because the history was overwritten under it (not its end). */
  readonly interrupted?: boolean;
  /** The RV its end stands for (the resync point when it was opened); default: the host's resync point. */
  readonly endRV?: number;
}

/** What the host provides: history access, delivery, and the effects of a pass. */
export interface PassHost<E extends PassEvent, M extends PassMember> {
  oldestServableRV(): number | undefined;
  /** alpha: the end of the history; beta: the last dispatched RV. */
  resyncPoint(): number;
  /** Open an interval over the events with RV > afterRV. */
  open(afterRV: number): PassCursor<E>;
  /** Selection + shared wrap + non-blocking push of `event` to `member`. */
  offer(member: M, event: E): Offer;
  /** The member's position aged out of the history (deferred to the end of the pass). */
  expire(member: M, oldest: number): void;
  /** The member rejoins the live path. */
  resync(member: M): void;
  /** Remove a member that stopped from the unsynced set. */
  drop(member: M): void;
  /** Run `fn` later, after consumers had a chance to drain (retry rounds). */
  defer(fn: () => void): void;
  /** Optional: the member accepted everything it was offered and moved to the end of its scan. */
  served?(member: M): void;
  /**
   * Optional: a cohort finished its pushes (before the next cohort scans). A
   * host whose consumers run elsewhere wakes the ones this cohort fed now,
   * not after the whole pass and its retry rounds (beta's sync worker).
   */
  cohortEnded?(): void;
  /**
   * Optional: how many retry rounds re-offer owed events at the end of a
   * pass (default 2, the KEP's). A host whose consumers run on another
   * thread and that is woken when one makes room (beta's worker thread)
   * sets 0: rounds run right after the pass and rarely find room there, and
   * the scan ahead they need cost that worker up to two channels' worth of
   * ring reads per pass for nothing. Owed members keep their position (the
   * last accepted RV) and the next pass re-scans from there.
   */
  readonly retryRounds?: number;
}

export interface PassStats {
  candidates: number;
  cohorts: number;
  scanned: number;
  pushes: number;
  expired: number;
  resynced: number;
  /** Members served: advanced or pushed to. */
  served: number;
  /** A member was left owed with a full channel (a draining client). */
  leftOwedFull: boolean;
  pushBudgetSpent: boolean;
  /** The scan budget ran out (a cohort was cut short, or candidates were left for a later pass). */
  scanBudgetSpent: boolean;
  /** Unsynced watchers skipped only because their channel was full (their clients may be reading). */
  fullSkipped: number;
  /** Watchers with room the pass did not reach: cut by the member cap, or left when the scan budget ran out. */
  unserved: number;
  /** A member was left owed while its channel had room (the retry budget ran out): more can move now. */
  leftOwedWithRoom: boolean;
}

interface Owed<E> {
  member: number; // candidate index
  events: E[];
  lastScanned: number;
}

/** What a pass is set up with besides its options and host. */
export interface SyncPassSetup {
  /** The `cache` its observer messages name (default: the host; the sync worker has no cache). */
  source?: object;
  /** Test-only fault points (the harness); absent everywhere else. */
  faults?: FaultPoints;
}

export class SyncPass<E extends PassEvent, M extends PassMember> {
  /** Rotation cursor: persists across passes. */
  cursor = 0;
  private readonly options: PassOptions;
  private readonly host: PassHost<E, M>;
  /** Test-only fault points (the harness); undefined everywhere else. */
  private readonly faults: FaultPoints | undefined;
  private readonly source: object;

  constructor(options: PassOptions, host: PassHost<E, M>, setup: SyncPassSetup = {}) {
    this.options = options;
    this.host = host;
    this.faults = setup.faults;
    this.source = setup.source ?? host;
  }

  /**
   * Run one pass over `unsynced`. `done` is called with the stats after the
   * retry rounds (which run deferred through host.defer).
   *
   * Three methods, not one: step 1 (candidatesOf), steps 2-6 (serveCohorts: the hot loop, with no
   * closure, so its locals stay in registers, not in a heap context) and the end of the pass
   * (endPass: expiry, retry rounds). V8 compiled the one function in ~100 ms, and a path the pass
   * had not taken yet (a full channel, a spent budget, an owed member) threw the optimized code away
   * and compiled it again: 6-8 times in a fresh sync worker's first catch-up, ~600-700 ms of compile
   * on a 2-core machine (issue 13, deliverable 4: beta's cold catch-up). A first path of step 1 or
   * of the end of the pass now costs the recompile of a small function only, and the cohort loop
   * meets its first paths in the sync worker's warm-up (src/beta/worker-warm-up.ts): in a cold
   * catch-up after it, `--trace-deopt` showed serveCohorts compiled twice (once, and once on stack)
   * and never thrown away.
   */
  run(unsynced: Iterable<M>, done: (stats: PassStats) => void): void {
    const stats: PassStats = {
      candidates: 0,
      cohorts: 0,
      scanned: 0,
      pushes: 0,
      expired: 0,
      resynced: 0,
      served: 0,
      leftOwedFull: false,
      pushBudgetSpent: false,
      scanBudgetSpent: false,
      fullSkipped: 0,
      unserved: 0,
      leftOwedWithRoom: false,
    };
    // Observed (watchcache:pass-start, :pass-work, :pass-resync) only while someone subscribes.
    const report =
      channels.passStart.hasSubscribers || channels.passWork.hasSubscribers || channels.passResync.hasSubscribers
        ? new PassReport(this.source, stats)
        : undefined;
    const oldest = this.host.oldestServableRV();
    if (report !== undefined) unsynced = report.started([...unsynced], oldest);
    const expired: M[] = [];
    const candidates = this.candidatesOf(unsynced, oldest, expired, stats);
    const owed: Owed<E>[] = [];
    // Not with none: an empty list has another map than a full one, which threw serveCohorts' code away.
    if (candidates.length > 0) this.serveCohorts(candidates, owed, stats, report);
    this.endPass(candidates, expired, owed, oldest ?? 0, stats, report, done);
  }

  /** Step 1: drop the stopped, set the expired aside, and order and cap the candidates. */
  private candidatesOf(unsynced: Iterable<M>, oldest: number | undefined, expired: M[], stats: PassStats): M[] {
    const host = this.host;
    const o = this.options;
    let candidates: M[] = [];
    // Each candidate's free share, read once here: `free` may cost shared-memory loads (beta's channels
    // live in a SharedArrayBuffer the consumers write), so the sort compares these, not live reads.
    const shares: number[] = [];
    for (const m of unsynced) {
      if (!m.accepting) {
        host.drop(m); // stopped by its client between stall and pass: simply dropped
        continue;
      }
      if (oldest === undefined || m.cursor.position < oldest - 1) {
        expired.push(m); // evaluated for every unsynced watcher, candidate or not
        continue;
      }
      const free = m.free;
      if (free > 0) {
        candidates.push(m);
        shares.push(free / m.capacity);
      } else stats.fullSkipped++;
    }
    const cursor = this.cursor;
    if (o.candidateOrder === 'position') candidates.sort((a, b) => a.cursor.position - b.cursor.position);
    else if (o.candidateOrder === 'kep') candidates = kepOrder(candidates, shares, cursor);
    // ('fifo' keeps the unsynced set's insertion order: the order watchers stalled.)
    if (candidates.length > o.maxWatchers) {
      stats.unserved = candidates.length - o.maxWatchers;
      candidates.length = o.maxWatchers; // member cap
    }
    stats.candidates = candidates.length;
    return candidates;
  }

  /** Steps 2-6: the cohorts, their scans and pushes; members left owed go to `owed`. */
  private serveCohorts(candidates: M[], owed: Owed<E>[], stats: PassStats, report: PassReport | undefined): void {
    const host = this.host;
    const o = this.options;
    const n = candidates.length;
    const served = new Uint8Array(n);
    const ended = new Uint8Array(n); // offering ended for the current cohort
    const pushedInCohort = new Uint32Array(n);
    const rounds = host.retryRounds ?? 2;
    let scanBudget = o.scanBudget;
    let pushBudget = o.pushBudget;
    let lastCohortScanned = -1;
    // Candidates by position (ties in candidate order), sorted once per pass: a cohort's followers are
    // a slice of it, not a sort per cohort (10,000 members at many positions made that quadratic).
    // Unserved candidates have not moved since, so the order stays right for them.
    // A typed array: positions read from a shared cell are doubles and from a local cursor small integers,
    // and a plain array's elements kind followed them (a deoptimization of the whole pass when it changed).
    const positions = new Float64Array(n);
    for (let i = 0; i < n; i++) positions[i] = candidates[i]!.cursor.position;
    const byPosition = positionOrder(positions);

    // ---- Step 2: cohorts ----
    for (let next = 0; next < n && scanBudget > 0 && pushBudget > 0;) {
      while (next < n && served[next]) next++;
      if (next >= n) break;
      const leadIdx = next;
      const lead = candidates[leadIdx]!;
      // Followers: unserved candidates at or above the lead, by position (never one below the lead).
      const followers: number[] = [];
      const leadPosition = lead.cursor.position;
      let lo = 0;
      for (let hi = n; lo < hi;) {
        const mid = (lo + hi) >>> 1;
        if (positions[byPosition[mid]!]! < leadPosition) lo = mid + 1;
        else hi = mid;
      }
      for (let j = lo; j < n; j++) {
        const i = byPosition[j]!;
        if (!served[i] && i !== leadIdx) followers.push(i);
      }
      const members: number[] = [leadIdx];
      served[leadIdx] = 1;
      ended[leadIdx] = 0;
      pushedInCohort[leadIdx] = 0;
      let offering = 1; // members whose offering has not ended in this cohort
      let f = 0;
      scanBudget -= o.intervalOpenCost;
      stats.cohorts++;
      const interval = host.open(lead.cursor.position);
      const scannedEvents: E[] = [];
      let lastScanned = lead.cursor.position;
      let reachedEnd = false;
      let aheadLimit = -1;
      for (;;) {
        if (scanBudget <= 0 || pushBudget <= 0) break;
        const ev = interval.next();
        if (ev === undefined) {
          reachedEnd = interval.interrupted !== true;
          break;
        }
        scanBudget--;
        stats.scanned++;
        // Followers join as the scan passes their position.
        while (f < followers.length && candidates[followers[f]!]!.cursor.position < ev.rv) {
          const idx = followers[f++]!;
          served[idx] = 1;
          ended[idx] = 0;
          pushedInCohort[idx] = 0;
          members.push(idx);
          offering++;
        }
        // Kept only for the retry rounds (their re-offer): without rounds nothing reads it, and the
        // push per scanned event was a lone catch-up watcher's largest line in the pass (issue 13, deliverable 4).
        if (rounds > 0) scannedEvents.push(ev);
        // ---- Steps 3 and 4: one shared form per selected event, pushes in order ----
        for (let k = 0; k < members.length; k++) {
          const idx = members[k]!;
          if (ended[idx]) continue;
          const m = candidates[idx]!;
          // Invariant 2: nothing at or below the position is offered again.
          if (ev.rv <= m.cursor.position) continue;
          // One store and one cursor update per outcome, not one per branch: a site the pass had not reached
          // yet when V8 optimized it (say the first full channel) threw the optimized loop away (run's note).
          let end: boolean;
          if (pushBudget <= 0)
            end = true; // the push budget is a total for the pass: the rest is owed, not skipped
          else if (pushedInCohort[idx]! >= m.capacity)
            end = true; // at most one channel's capacity per watcher per cohort
          else {
            const r = host.offer(m, ev);
            if (r === Offer.Pushed || r === Offer.PushedInRun) {
              m.cursor.accepted(ev.rv); // Invariant 1: the position follows every accepted event
              m.cursor.pushedByPass();
              // The channel cap counts slots (what the channel holds) and a push into a run took none; the
              // push budget bounds the pass's work, so it counts every event pushed, in a run or not.
              if (r === Offer.Pushed) pushedInCohort[idx]!++;
              stats.pushes++;
              pushBudget--;
            }
            end = r === Offer.Full; // keeps its last accepted RV; owed the rest of this scan
          }
          if (end) {
            ended[idx] = 1;
            offering--;
          }
        }
        lastScanned = ev.rv;
        // Nobody left to offer anything to and nobody left to join: scan on only as far as the
        // retry rounds could deliver (a channel's worth each), not to the end of the budget.
        if (f >= followers.length && offering === 0) {
          if (rounds === 0) break;
          if (aheadLimit < 0) {
            let maxCap = 0;
            for (const idx of members) maxCap = Math.max(maxCap, candidates[idx]!.capacity);
            aheadLimit = rounds * maxCap;
          }
          if (--aheadLimit <= 0) break;
        }
      }
      // A cohort that stopped exactly at the end of the history reached it too; past
      // the last event nothing is left up to the resync point, so the scan covers it.
      // Only up to what this cursor covered: the resync point may have moved on since it was opened.
      const resyncPoint = host.resyncPoint();
      const covered = Math.min(interval.endRV ?? resyncPoint, resyncPoint);
      if (!reachedEnd && lastScanned >= resyncPoint) reachedEnd = true;
      if (reachedEnd && covered > lastScanned) lastScanned = covered;
      // Stored on every cohort until set, not only when spent: a store first reached once a budget ran out
      // threw the optimized loop away then (run's note).
      stats.pushBudgetSpent ||= pushBudget <= 0;
      stats.scanBudgetSpent ||= scanBudget <= 0 && !reachedEnd;
      for (const idx of members) {
        const m = candidates[idx]!;
        if (ended[idx]) {
          owed.push({ member: idx, events: scannedEvents, lastScanned });
          continue;
        }
        // ---- Step 5: accepted everything offered: advance to the last scanned RV ----
        m.cursor.raiseTo(lastScanned);
        stats.served++;
        host.served?.(m);
        m.cursor.served();
        // ---- Step 6: resync when the cohort scan reached the resync point ----
        if (
          (reachedEnd && m.cursor.position >= resyncPoint) ||
          (this.faults !== undefined && !reachedEnd && this.faults.resyncEarly())
        ) {
          report?.resyncing(m);
          host.resync(m);
          stats.resynced++;
        }
      }
      lastCohortScanned = lastScanned;
      host.cohortEnded?.();
    }
    if (lastCohortScanned >= 0) this.cursor = lastCohortScanned;
    for (let i = 0; i < n; i++) if (!served[i]) stats.unserved++; // the budgets ran out before them
  }

  /** The end of the pass: deferred stops (expiry), then the retry rounds for the owed (step 4), then `done`. */
  private endPass(
    candidates: M[],
    expired: M[],
    owed: Owed<E>[],
    oldest: number,
    stats: PassStats,
    report: PassReport | undefined,
    done: (stats: PassStats) => void,
  ): void {
    const host = this.host;
    const o = this.options;
    const rounds = host.retryRounds ?? 2;
    // Run `fn` later through the host; an observed pass reports each retry round's work at its end.
    const later = (fn: () => void): void => host.defer(report === undefined ? fn : () => report.stretch(fn));
    // Deferred stops: expired watchers drain their backlog, then get one 410.
    for (const m of expired) host.expire(m, oldest);
    stats.expired = expired.length;
    for (const ow of owed) if (candidates[ow.member]!.free === 0) stats.leftOwedFull = true;
    const owedWithRoom = (): boolean =>
      owed.some((ow) => {
        const m = candidates[ow.member]!;
        return m.free > 0 && m.accepting && m.cursor.unsynced;
      });

    if (owed.length === 0 || rounds === 0) {
      // Without retry rounds the owed stay owed: each keeps its last accepted RV (invariant 1), and
      // the next pass offers the rest from there (nothing at or below it again: invariant 2).
      stats.leftOwedWithRoom = owedWithRoom();
      report?.ended();
      done(stats);
      report?.stretchEnded();
      return;
    }
    // ---- Step 4 (end of pass): owed events re-offered in up to two rounds ----
    let retryBudget = o.pushBudget;
    const round = (left: number): void => {
      const still: Owed<E>[] = [];
      for (const ow of owed.splice(0)) {
        const m = candidates[ow.member]!;
        if (!m.accepting || !m.cursor.unsynced) continue;
        if (m.free === 0 || retryBudget <= 0) {
          still.push(ow);
          continue;
        }
        let complete = true;
        for (const ev of ow.events) {
          if (ev.rv <= m.cursor.position) continue;
          if (retryBudget <= 0) {
            complete = false;
            break;
          }
          const r = host.offer(m, ev);
          if (r === Offer.Pushed || r === Offer.PushedInRun) {
            m.cursor.accepted(ev.rv); // Invariant 1
            m.cursor.pushedByPass();
            stats.pushes++;
            retryBudget--; // events, as the pass's push budget
          } else if (r === Offer.Full) {
            complete = false;
            break;
          }
        }
        if (!complete) {
          still.push(ow);
          continue;
        }
        m.cursor.raiseTo(ow.lastScanned);
        stats.served++;
        host.served?.(m);
        m.cursor.served();
        // Resync only if nothing was dispatched past the scan meanwhile.
        if (m.cursor.position >= host.resyncPoint()) {
          report?.resyncing(m);
          host.resync(m);
          stats.resynced++;
        }
      }
      owed.push(...still);
      if (left > 1 && owed.length > 0) later(() => round(left - 1));
      else {
        stats.leftOwedFull ||= owed.some((ow) => candidates[ow.member]!.free === 0);
        stats.leftOwedWithRoom = owedWithRoom();
        report?.ended();
        done(stats);
      }
    };
    later(() => round(rounds));
    report?.stretchEnded();
  }
}

/** Indexes into `positions` by position, ties by index (a function of its own: no closure in serveCohorts). */
function positionOrder(positions: Float64Array): number[] {
  const order = Array.from({ length: positions.length }, (_, i) => i);
  return order.sort((a, b) => positions[a]! - positions[b]! || a - b);
}

/**
 * The KEP's candidate order (step 1): (a) larger free share first, (b) new to
 * the unsynced set or drained since last service first, (c) rotation: at or
 * above the cursor first, then by position. The keys are read once per
 * candidate (a sort reads them O(n log n) times, and beta's are shared-memory
 * loads), so the order is also consistent while consumers drain meanwhile.
 */
function kepOrder<M extends PassMember>(candidates: M[], shares: number[], cursor: number): M[] {
  const n = candidates.length;
  // (b) and (c) as one key: bit 1 "not new nor drained" (the more significant), bit 0 "below the cursor".
  const flags = new Uint8Array(n);
  const positions = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = candidates[i]!.cursor;
    const p = c.position;
    positions[i] = p;
    flags[i] = (c.newUnsynced || c.drainedSinceService ? 0 : 2) | (p >= cursor ? 0 : 1);
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const fa = shares[a]!;
    const fb = shares[b]!;
    if (fa !== fb) return fb - fa; // (a) larger free share first
    const ka = flags[a]!;
    const kb = flags[b]!;
    if (ka !== kb) return ka - kb; // (b) new or drained first, then (c) rotation: at or above the cursor first
    return positions[a]! - positions[b]!;
  });
  // Pushed into a new array, not order.map(): the pass's candidate list then always has the elements kind
  // of one grown by push, and code optimized for one list is never thrown away for another's (run's note).
  const out: M[] = [];
  for (let i = 0; i < n; i++) out.push(candidates[order[i]!]!);
  return out;
}
