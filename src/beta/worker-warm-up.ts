/**
 * WorkerWarmUp: a new sync worker thread rehearses catch-up passes on a
 * private ring (src/beta/warm-up-ring.ts) before any real watcher needs one,
 * so the first real catch-up does not run on code V8 has not optimized yet
 * (issue 13, deliverable 4: that first catch-up cost the worker 2-4x the
 * pass time of a later one with the same work).
 *
 * Steps:
 *  1. A pass host of its own over the warm-up ring, built as the real one
 *     (room-signalled: no retry rounds; the real indexer fields; a wake
 *     doorbell, its own, which only this rehearsal reads); its messages come
 *     back here (SyncWorkerEndpoint.hostSend): nothing of the rehearsal
 *     reaches the main thread but its closing `warmed-up` totals.
 *  2. WATCHERS members in a slab of its own, their selections cycling over
 *     the ones the ring names (every path of WorkerPassHost.offer), adopted
 *     at the ring's start as a mass stall would hand them over (every other
 *     round apart).
 *  3. The passes run on the host's scheduler, as for real members. The
 *     rehearsal's consumer, in this thread, reads every channel once per
 *     turn of the event loop, at speeds that differ by member (so channels
 *     fill and members are owed), and signals the room it made. A reader
 *     that emptied its channel announces that it waits, as the main
 *     thread's consumers do, so the passes publish to waiting consumers and
 *     ring the doorbell here first; the consumer empties the doorbell each turn.
 *  4. Once every member was handed back, a round ends; the next adopts them
 *     at the start again. After ROUNDS rounds the rehearsal ends.
 *  5. It yields to real work: the first real adopt (or a stop)
 *     ends it at once (abort), before that message is handled. Its host's
 *     scheduler stops, every member is released, and its host sends nothing
 *     more (dispose: a totals notice still due would reach the main thread).
 */
import { type Clock, type TimerHandle } from '../core/clock.js';
import { CELL_BYTES } from '../protocol/cursor-cell.js';
import { POP_CLOSED, POP_EMPTY, SpscChannel } from '../ring/spsc-channel.js';
import { WriterOwner } from '../protocol/channel-variants.js';
import { openRegion, regionBytes } from './channel-slabs.js';
import { ADOPT_ROW, INTRO_ROW, type MainToWorker, type WarmUpTotals, type WorkerToMain } from './sync-messages.js';
import { adoptRows, introduceRows } from './member-rows.js';
import { WakeDoorbell } from './wake-doorbell.js';
import { WorkerPassHost, type KnownWatcher } from './worker-pass-host.js';

/** Members of the rehearsal. */
const WATCHERS = 30;
/** Their channels' capacity (the default watcher channel's). */
const CAPACITY = 100;
/** Events each member's reader takes per turn of the event loop (by member, cycling). */
const READS_PER_TURN = [50, 400, 1600, 100_000];
/**
 * The reader's turn comes this often: the next turn of the worker's event loop (the worker thread runs a
 * sub-millisecond delay on setImmediate), and under a virtual clock a step of time (at 0 it would never
 * let time move on to the passes' timers).
 */
const TURN_MS = 0.5;
/** Rounds of catch-up over the whole warm-up ring. */
const ROUNDS = 4;
/** Ids the rehearsal's doorbell holds (it is emptied every turn; a full one falls back to a notice, heard here). */
const DOORBELL_IDS = 64;

export class WorkerWarmUp {
  private readonly host: WorkerPassHost;
  private readonly channels: SpscChannel[] = [];
  private readonly known = new Map<number, KnownWatcher>();
  /** The host's wake doorbell, read by this rehearsal's consumer only (step 3). */
  private readonly doorbell = new WakeDoorbell(DOORBELL_IDS);
  private readonly rung: number[] = [];
  private readonly clock: Clock;
  private readonly done: (totals: WarmUpTotals) => void;
  private readonly startedAt: number;
  private back = 0;
  private rounds = 0;
  private pushes = 0;
  private ended = false;
  private turn: TimerHandle | undefined;

  /**
   * `msg`: the main thread's ring; `init`: the real host's (pass options, indexer and trigger fields);
   * `hostSend`: the endpoint's. `done` gets the totals once, when the rehearsal ends (all rounds, or an abort).
   */
  constructor(
    msg: Extract<MainToWorker, { op: 'warm-up' }>,
    init: Extract<MainToWorker, { op: 'init' }>,
    hostSend: (msg: WorkerToMain) => void,
    clock: Clock,
    done: (totals: WarmUpTotals) => void,
  ) {
    this.clock = clock;
    this.done = done;
    this.startedAt = clock.now();
    // Step 1: a host like the real one. `hostSend` is the endpoint's, the real host's too: it brings
    // this host's messages back here (heard) while the rehearsal runs.
    this.host = new WorkerPassHost(
      msg.ring,
      msg.control,
      init.pass,
      init.indexerFields,
      init.triggerField,
      hostSend,
      clock,
      true,
      this.doorbell,
    );
    // Step 2: the members, pooled in one slab as the main thread pools real watchers.
    const bytes = regionBytes(CAPACITY);
    const slab = new SharedArrayBuffer(bytes * WATCHERS);
    this.host.slabs[0] = slab;
    // Introduced as the main thread introduces pooled watchers: rows of numbers (member-rows.ts).
    const specs = new Map(msg.selections.map((spec, i) => [i, spec]));
    const rows = new Float64Array(WATCHERS * INTRO_ROW);
    for (let id = 0; id < WATCHERS; id++) {
      const offset = id * bytes;
      // The region as the main thread makes a pooled watcher's (shared-watcher-channel.ts), adopted at once.
      SpscChannel.initRegion(slab, offset + CELL_BYTES, CAPACITY, WriterOwner.SYNC_WORKER);
      this.channels.push(openRegion(slab, { slab: 0, offset, capacity: CAPACITY }).channel);
      rows.set([id, 0, offset, CAPACITY, id % msg.selections.length], id * INTRO_ROW);
    }
    introduceRows(this.host, rows, specs, this.known);
    this.adoptAll();
    this.schedule();
  }

  /** Real work arrived (or the worker stops): end the rehearsal now. */
  abort(): void {
    this.finish(true);
  }

  /** Step 2 (and each round's start): every member adopted at the ring's start. */
  private adoptAll(): void {
    this.back = 0;
    // Each round's first read remakes the reader's views, as after the writer grew a real ring's index.
    this.host.dropRingViews();
    const rows = new Float64Array(WATCHERS * ADOPT_ROW);
    for (let id = 0; id < WATCHERS; id++) {
      const channel = this.channels[id]!;
      if (channel.writerOwner !== WriterOwner.SYNC_WORKER) {
        while (channel.pop() !== POP_EMPTY); // what the last round left (nothing reads it)
        channel.handOff(WriterOwner.MAIN, WriterOwner.SYNC_WORKER);
      }
      // Odd rounds start the members apart (followers join a cohort as its scan passes them).
      const position = this.rounds % 2 === 0 ? 0 : (id % 4) * 300;
      rows.set([id, position, CAPACITY, 0], id * ADOPT_ROW);
    }
    // As a mass stall hands watchers over: rows of numbers (member-rows.ts).
    adoptRows(this.host, rows, this.known);
  }

  /** Step 3: the consumer, once per turn of the event loop. */
  private schedule(): void {
    this.turn = this.clock.setTimeout(() => this.consume(), TURN_MS);
  }

  private consume(): void {
    this.turn = undefined;
    if (this.ended) return;
    let popped = 0;
    for (let id = 0; id < WATCHERS; id++) {
      const channel = this.channels[id]!;
      // Readers of different speeds, as real ones: full channels, owed members and members apart, so the
      // passes take those paths here first (a path first taken in a real catch-up cost a recompile there).
      let left = READS_PER_TURN[id % READS_PER_TURN.length]!;
      let r = channel.pop();
      for (; r !== POP_EMPTY && r !== POP_CLOSED; r = --left > 0 ? channel.pop() : POP_CLOSED) popped++;
      // Emptied (not stopped by its speed): it waits, announced as a main-thread consumer announces it.
      if (r === POP_EMPTY && channel.writerOwner === WriterOwner.SYNC_WORKER) channel.announceWait();
    }
    this.doorbell.take(this.rung); // the wakes: this consumer reads every channel each turn anyway
    this.rung.length = 0;
    if (popped > 0) this.host.scheduler.onRoom();
    this.schedule();
  }

  /** The host's messages: hand-backs end a round (step 4); the rest (pushed notices) go nowhere. */
  heard(msg: WorkerToMain): void {
    if (msg.op === 'expire') this.finish(true); // not expected: the ring never moves; end rather than spin
    if (msg.op !== 'handback') return;
    this.pushes = msg.totals.pushes;
    if (++this.back < WATCHERS) return;
    if (++this.rounds >= ROUNDS) {
      // Not inside the pass that handed the last one back: end after it.
      this.clock.setTimeout(() => this.finish(false), 0);
      return;
    }
    this.clock.setTimeout(() => !this.ended && this.adoptAll(), 0);
  }

  private finish(aborted: boolean): void {
    if (this.ended) return;
    this.ended = true;
    if (this.turn !== undefined) this.clock.clearTimeout(this.turn);
    this.host.scheduler.stop();
    this.host.reset();
    this.host.dispose();
    this.done({
      rounds: this.rounds,
      passes: this.host.scheduler.passes,
      pushes: this.pushes,
      ms: this.clock.now() - this.startedAt,
      aborted,
    });
  }
}
