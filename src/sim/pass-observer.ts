/**
 * PassObserver: the simulator's window into sync passes, for alpha (passes
 * on the main thread, StallPolicy) and beta (the sync worker's passes, run
 * in-process under virtual time). It subscribes to the engine's pass
 * channels (watchcache:pass-start, :pass-work, :pass-resync;
 * docs/observability.md) to:
 *  - count interval opens, scanned events and pushes, and turn them into a
 *    modelled cost; passes on the main thread (alpha) charge it to the
 *    thread in virtual time, so a pass delays live dispatch by its duration
 *    and the busy period scales from it as on a real dispatcher; passes off
 *    the main thread (beta) only account it;
 *  - measure fairness (KEP measurement 4): for each watcher that goes
 *    unsynced, the passes in which it had room until a pass first served it,
 *    and between later services; separately for watchers that stalled while
 *    long-standing laggards were unsynced;
 *  - tell the simulated client when its watch goes unsynced and resyncs.
 * The mode-specific hooks (which call unsynced/resynced/ended) are in
 * engine-sites.ts.
 */
import type { Clock } from '../core/clock.js';
import { observeTool, type PassWorkMessage } from '../observe/channels.js';
import type { PassMember } from '../sync/sync-pass.js';
import type { Consumer } from './consumer.js';
import type { FairnessSummary } from './result.js';
import type { CostSpec } from './scenario.js';

interface Track {
  since: number;
  waited: number;
  served: boolean;
  nextToLaggards: boolean;
  hadRoom: boolean;
}

interface Eligible {
  id: number;
  position: number;
  pushes: number;
  member: PassMember;
}

export interface ObserverEnv {
  clock: Clock;
  spend(ms: number): void;
  cost: CostSpec;
  intervalOpenCost: number;
  /** The member cap: the candidates a pass orders beyond it are not formed into cohorts. */
  maxWatchers: number;
  /** Watcher id -> its simulated client. */
  clients: Map<number, Consumer>;
  /** A watcher unsynced at least this long is a long-standing laggard. */
  laggardAgeMs: number;
}

/** The passes of one mode, as the engine's pass channels name them. */
export interface FollowedPasses {
  /** The `cache` of their messages: alpha, the cache; beta, the in-process worker's pass host. */
  source: object;
  /** The passes run on the main thread (alpha): their modelled cost is charged to it. */
  onMainThread: boolean;
  /** Off the main thread: how the pass thread spends its modelled time (beta: its own clock view). */
  spendOffThread?: (ms: number) => void;
}

export class PassObserver {
  passes = 0;
  opens = 0;
  scanned = 0;
  pushes = 0;
  /** Modelled pass cost charged to the main thread (virtual ms). */
  modelledMs = 0;
  /** Modelled pass cost spent off the main thread (beta's worker). */
  offThreadModelledMs = 0;
  peakUnsynced = 0;
  /** Real ms spent inside passes (their synchronous parts and retry rounds), as watchcache:pass-work reports them. */
  realMs = 0;
  private neverServed = 0;
  private readonly env: ObserverEnv;
  private readonly tracks = new Map<number, Track>();
  private readonly first = new Map<number, number>();
  private readonly firstNextToLaggards = new Map<number, number>();
  private readonly gaps = new Map<number, number>();
  private pendingUnits = 0;
  private pendingPushes = 0;
  /** Modelled µs of the pass's walk of the unsynced set and its candidate ordering. */
  private pendingFixedUs = 0;
  private onMainThread = true;
  private spendOffThread: ((ms: number) => void) | undefined;
  /** The candidates of the pass running now, as it started. */
  private eligible: Eligible[] = [];

  constructor(env: ObserverEnv) {
    this.env = env;
  }

  // ---- what the mode-specific hooks report ----

  /** Watcher `id` went unsynced (`unsyncedNow`: the size of the unsynced set). */
  unsynced(id: number, unsyncedNow: number): void {
    const now = this.env.clock.now();
    let nextToLaggards = false;
    for (const t of this.tracks.values()) {
      if (now - t.since >= this.env.laggardAgeMs) {
        nextToLaggards = true;
        break;
      }
    }
    this.tracks.set(id, { since: now, waited: 0, served: false, nextToLaggards, hadRoom: false });
    if (unsyncedNow > this.peakUnsynced) this.peakUnsynced = unsyncedNow;
    this.env.clients.get(id)?.onUnsynced();
  }

  /** Watcher `id` is synced again. */
  resynced(id: number): void {
    this.forget(id, true);
    this.env.clients.get(id)?.onResync();
  }

  /** Watcher `id` ended (stopped, expired). */
  ended(id: number): void {
    this.forget(id, false);
  }

  fairness(): FairnessSummary {
    const pairs = (m: Map<number, number>): [number, number][] => [...m.entries()].sort((a, b) => a[0] - b[0]);
    const max = (m: Map<number, number>): number => Math.max(0, ...m.keys());
    let neverServed = this.neverServed;
    for (const t of this.tracks.values()) if (!t.served && t.hadRoom) neverServed++;
    return {
      passes: this.passes,
      firstService: pairs(this.first),
      firstServiceNextToLaggards: pairs(this.firstNextToLaggards),
      serviceGap: pairs(this.gaps),
      maxFirstService: max(this.first),
      maxFirstServiceNextToLaggards: max(this.firstNextToLaggards),
      maxServiceGap: max(this.gaps),
      neverServed,
    };
  }

  // ---- the engine's pass channels ----

  /**
   * Follow the passes whose observer messages name `site.source` (alpha: the
   * cache; beta: the in-process worker's pass host). Returns the unsubscribe.
   */
  follow(site: FollowedPasses): () => void {
    this.onMainThread = site.onMainThread;
    this.spendOffThread = site.spendOffThread;
    const offs = [
      observeTool(site.source, 'passStart', (m) => this.passStarted(m.members, m.oldestServableRV)),
      observeTool(site.source, 'passWork', (m) => this.passWorked(m)),
      observeTool(site.source, 'passResync', (m) => {
        const t = this.tracks.get(idOf(m.member));
        if (t !== undefined) this.noteService(t); // the pass served it up to the resync point
      }),
    ];
    return () => offs.forEach((off) => off());
  }

  private passStarted(members: readonly PassMember[], oldest: number | undefined): void {
    this.passes++;
    const eligible = this.beforePass(members, oldest);
    const c = this.env.cost;
    this.pendingFixedUs +=
      members.length * c.passUsPerWatcher + Math.min(eligible.length, this.env.maxWatchers) * c.passUsPerCandidate;
    this.eligible = eligible;
  }

  private passWorked(m: PassWorkMessage): void {
    this.opens += m.opens;
    this.scanned += m.scanned;
    this.pushes += m.pushes;
    this.pendingUnits += m.opens * this.env.intervalOpenCost + m.scanned;
    this.pendingPushes += m.pushes;
    if (m.ended === undefined) this.realMs += m.durationMs; // the end of a synchronous stretch
    this.charge(); // at an end: before the scheduler reads the pass duration
    if (m.ended !== undefined) {
      this.afterPass(this.eligible);
      this.eligible = [];
    }
  }

  /** Turn the pass work done since the last charge into modelled time. */
  private charge(): void {
    if (this.pendingUnits === 0 && this.pendingPushes === 0 && this.pendingFixedUs === 0) return;
    const c = this.env.cost;
    const perUnit = this.onMainThread ? c.passUsPerScanUnit : c.workerUsPerScanUnit;
    const ms = (this.pendingUnits * perUnit + this.pendingPushes * c.passUsPerPush + this.pendingFixedUs) / 1000;
    this.pendingUnits = 0;
    this.pendingPushes = 0;
    this.pendingFixedUs = 0;
    if (this.onMainThread) {
      this.modelledMs += ms;
      this.env.spend(ms);
    } else {
      this.offThreadModelledMs += ms;
      this.spendOffThread?.(ms);
    }
  }

  private forget(id: number, resynced: boolean): void {
    const t = this.tracks.get(id);
    if (t === undefined) return;
    this.tracks.delete(id);
    if (!resynced && !t.served && t.hadRoom) this.neverServed++;
  }

  private beforePass(members: readonly PassMember[], oldest: number | undefined): Eligible[] {
    const out: Eligible[] = [];
    if (members.length > this.peakUnsynced) this.peakUnsynced = members.length;
    for (const m of members) {
      // A candidate: accepting, not about to expire, with room in its channel.
      if (!m.accepting || m.free === 0 || oldest === undefined || m.cursor.position < oldest - 1) continue;
      const id = idOf(m);
      out.push({ id, position: m.cursor.position, pushes: m.cursor.passPushes, member: m });
      const t = this.tracks.get(id);
      if (t !== undefined) {
        t.waited++;
        t.hadRoom = true;
      }
    }
    return out;
  }

  private afterPass(eligible: Eligible[]): void {
    for (const e of eligible) {
      const t = this.tracks.get(e.id);
      if (t === undefined || t.waited === 0 || !e.member.accepting) continue;
      if (e.member.cursor.position !== e.position || e.member.cursor.passPushes !== e.pushes) this.noteService(t);
    }
  }

  private noteService(t: Track): void {
    const waited = Math.max(1, t.waited);
    if (!t.served) {
      bump(this.first, waited);
      if (t.nextToLaggards) bump(this.firstNextToLaggards, waited);
      t.served = true;
    } else bump(this.gaps, waited);
    t.waited = 0;
  }
}

/** A member's watcher id (the engine's watchers are numbered). */
function idOf(m: PassMember): number {
  return Number(m.id);
}

function bump(m: Map<number, number>, k: number): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}
