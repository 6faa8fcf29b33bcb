/**
 * PassScheduler: when passes run (KEP "When passes run").
 *
 * A pass runs after a dispatched event when the unsynced set is non-empty and
 * the current period has elapsed since the last pass, and on a timer so an
 * idle cache still drains. Periods: normal (10 ms); busy after a pass that
 * left a draining member owed events or spent its push budget, scaled from
 * the measured pass duration so passes take about `busyShare` of the thread,
 * clamped to [busyMin, busyMax]; idle (100 ms) after a pass that served and
 * expired nothing. A new stall resets the period to normal.
 *
 * With a room signal (beta's worker thread: a consumer's pop from a channel
 * the worker owns wakes it, ControlBlock.signalRoom), a pass after which
 * nothing can move until a consumer reads waits for room instead of a timer
 * (kind 'room', issue 13 deliverables 4 and 6): every member it left owed
 * has a full channel and no budget ran out, or every channel was full. The
 * first room signal then brings the next pass forward to the busy gap after
 * the last one (a draining cohort moves at its consumers' pace, with no
 * fixed period in between); without one only the idle period's timer runs
 * (it still evaluates expiry).
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { PassOptions } from './pass-options.js';
import type { PassStats } from './sync-pass.js';

export type PeriodKind = 'normal' | 'busy' | 'idle' | 'room';

/**
 * The clock a scheduler runs on. `busyForMs` (optional): how long its thread
 * is still busy; a pass asked for meanwhile starts when it is free. Only the
 * simulator's view of beta's in-process worker has it (a real thread is busy
 * while a pass runs; under virtual time a pass takes no time).
 */
export interface SchedulingClock extends Clock {
  busyForMs?(): number;
}

export interface PassRunner {
  /** True while there is anything to serve. */
  hasWork(): boolean;
  /** Run one pass; call `done` once its retry rounds finished. */
  runPass(done: (stats: PassStats) => void): void;
  /** Observe the duration of the synchronous part of a pass (seconds). */
  observeDuration(seconds: number): void;
  /** Optional: a pass ended (after its retry rounds) with its stats and the work time of its synchronous part. */
  passEnded?(stats: PassStats, workMs: number): void;
  /**
   * True when something calls onRoom() as soon as a consumer makes room in
   * any member's channel (beta's worker thread: ControlBlock.signalRoom).
   * Then a pass that found every member's channel full and served nobody
   * waits the idle period: nothing can move until a consumer reads.
   */
  readonly signalsRoom?: boolean;
  /**
   * Optional, with a room signal: while the scheduler waits for room, could
   * a pass now do anything the room signal would not announce? Only expiry:
   * a watcher whose position the history left behind (KEP step 1). False
   * lets the idle-period timer re-arm instead of running a pass over
   * channels that are all as full as the last pass left them (issue 13,
   * deliverable 6: 10,000 full channels cost a pass 10 times a second).
   */
  expiryDue?(): boolean;
}

export class PassScheduler {
  period: number;
  periodKind: PeriodKind = 'normal';
  /** Passes run so far. */
  passes = 0;
  /** Real milliseconds spent in passes on this thread (synchronous parts and retry rounds' starts). */
  workMs = 0;
  private clock: SchedulingClock;
  private readonly options: PassOptions;
  private readonly runner: PassRunner;
  private lastPassAt = -Infinity;
  /** Kind 'room': when the idle-period timer last found nothing to expire (no pass ran). */
  private roomCheckAt = -Infinity;
  private running = false;
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private stopped = false;

  constructor(clock: Clock, options: PassOptions, runner: PassRunner) {
    this.clock = clock;
    this.options = options;
    this.runner = runner;
    this.period = options.normalPeriodMs;
  }

  /** After each dispatched event (and progress notification). */
  afterDispatch(): void {
    if (this.running || this.stopped || !this.runner.hasWork()) return;
    if (this.clock.now() - this.lastPassAt >= this.period) this.run();
    else this.arm();
  }

  /** A watcher just went unsynced. */
  onStall(): void {
    if (this.stopped) return;
    if (this.periodKind !== 'normal') {
      this.periodKind = 'normal';
      this.period = this.options.normalPeriodMs;
      this.disarm();
    }
    this.arm();
  }

  /**
   * The last pass left nothing that can move until a consumer reads (kind
   * 'room'): the worker thread may park on the room signal.
   */
  allFull = false;
  /** In kind 'room': the busy gap the next pass keeps from the last one once room appears. */
  private roomGap = 0;

  /** The next pass is due in this many ms (0: now or running; Infinity: none scheduled). */
  get msUntilNextPass(): number {
    if (this.running) return 0;
    if (this.timer === undefined) return Infinity;
    return Math.max(0, this.timerAt - this.clock.now());
  }

  /** A consumer made room in an unsynced watcher's channel: do not leave it waiting an idle period. */
  onRoom(): void {
    this.allFull = false;
    if (this.stopped) return;
    if (this.periodKind === 'room') {
      // A draining consumer made room: the next pass comes after the busy gap, not the idle period.
      this.periodKind = 'busy';
      this.period = this.roomGap;
    } else if (this.periodKind === 'idle') {
      this.periodKind = 'normal';
      this.period = this.options.normalPeriodMs;
    } else return;
    this.disarm();
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  /**
   * Run on another view of time from now on. The simulator's seam: under
   * virtual time it gives beta's in-process worker a clock that stays busy
   * for the modelled duration of its passes (src/sim/engine-sites.ts).
   */
  useClock(clock: SchedulingClock): void {
    this.clock = clock;
  }

  /** The clock it schedules on. */
  get schedulingClock(): SchedulingClock {
    return this.clock;
  }

  private run(): void {
    this.disarm();
    this.running = true;
    const t0 = this.clock.now();
    const w0 = this.clock.workNow();
    this.lastPassAt = t0;
    this.passes++;
    let syncMs = -1;
    let work = -1;
    let ended: PassStats | undefined;
    const busy = this.clock.busyForMs?.() ?? 0;
    const runPass = (done: (stats: PassStats) => void): void => {
      if (busy > 0)
        this.clock.setTimeout(() => this.runner.runPass(done), 0); // starts when the thread is free
      else this.runner.runPass(done);
    };
    runPass((stats) => {
      this.running = false;
      this.allFull = false;
      if (work >= 0) this.runner.passEnded?.(stats, work);
      else ended = stats;
      const ms = syncMs >= 0 ? syncMs : this.clock.now() - t0;
      const o = this.options;
      const busyGap = Math.min(o.busyMaxMs, Math.max(o.busyMinMs, (ms * (1 - o.busyShare)) / o.busyShare));
      const room = this.runner.signalsRoom === true;
      // The KEP's busy triggers; off the dispatcher's thread (a room signal: the worker) also a pass
      // cut by its scan budget, or that left watchers with room unreached (member cap) or owed with room.
      const moreNow =
        stats.pushBudgetSpent || (room && (stats.scanBudgetSpent || stats.unserved > 0 || stats.leftOwedWithRoom));
      if (room && !moreNow && (stats.leftOwedFull || stats.pushes > 0 || stats.fullSkipped > 0)) {
        // No budget stopped the pass: what is left waits for its consumers (owed or skipped with full
        // channels, or fed and still behind). The room signal says when one read; the thread checks
        // for room before it parks, so a member that already has some brings the next pass at once
        // (one busy gap after this one). No pass every period over full channels.
        this.waitForRoom(busyGap);
      } else if (stats.leftOwedFull || moreNow) {
        this.periodKind = 'busy';
        this.period = busyGap;
      } else if (stats.served === 0 && stats.expired === 0 && (stats.fullSkipped === 0 || room)) {
        // Idle only when nobody is waiting: a watcher skipped for a full channel may be draining it.
        this.periodKind = 'idle';
        this.period = o.idlePeriodMs;
      } else {
        this.periodKind = 'normal';
        this.period = this.options.normalPeriodMs;
      }
      this.arm();
    });
    syncMs = this.clock.now() - t0;
    work = this.clock.workNow() - w0;
    this.workMs += work;
    this.runner.observeDuration(work / 1000);
    if (ended !== undefined) this.runner.passEnded?.(ended, work);
  }

  /** Kind 'room': the idle period's timer only (expiry), the room signal brings the next pass forward. */
  private waitForRoom(gap: number): void {
    this.periodKind = 'room';
    this.period = this.options.idlePeriodMs;
    this.roomGap = gap;
    this.allFull = true;
  }

  private arm(): void {
    if (this.stopped || this.running || !this.runner.hasWork()) return;
    // Waiting for room, the idle period counts from the last expiry check (a skipped pass) too.
    const at =
      (this.periodKind === 'room' ? Math.max(this.lastPassAt, this.roomCheckAt) : this.lastPassAt) + this.period;
    if (this.timer !== undefined) {
      if (this.timerAt <= at) return;
      this.disarm();
    }
    this.timerAt = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        if (this.running || this.stopped || !this.runner.hasWork()) return;
        if (this.periodKind === 'room' && this.runner.expiryDue?.() === false) {
          this.roomCheckAt = this.clock.now(); // nothing to expire: wait on for room, one idle period more
          this.arm();
          return;
        }
        this.run();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }
}
