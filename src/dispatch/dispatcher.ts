/**
 * Dispatcher: the live path. Every event reaches it after it was appended to
 * the history (invariant 1 depends on that order), and it offers the event to
 * the watchers that can select it, in one allocation-free loop:
 *
 * 1. Route through the WatcherIndex (scope and trigger buckets).
 * 2. Skip watchers that are unsynced or not accepting.
 * 3. offer() (src/watch/offer.ts): position check (invariant 2), selection
 *    (invariant 4), non-blocking push of the shared form moving the position
 *    (invariant 1); a full channel is recorded.
 * 4. After the last candidate: the full channels go to the mode's
 *    FullChannelPolicy in one call, in offer order.
 * 5. Let the policy decide whether dispatch pauses (off mode only).
 *
 * While paused, later events and progress notifications queue in arrival
 * order and are dispatched on resume.
 *
 * Live first (alpha and beta: `FullChannelPolicy.liveFirst`). The walk of
 * steps 1-5 touches every candidate, ~30 ns each in memory at 10,000
 * watchers, and a consumer in this thread runs only once the walk is done:
 * in a mass stall's fill, a healthy watcher waited 0.3-0.9 ms per event for
 * the pushes into 10,000 channels nobody read (issue 13, goal 1). So when
 * the last walk found at least `liveFirstMinWatchers` candidates whose
 * consumer did not wait in next(), and some consumers wait
 * (ParkedWatchers), an event is dispatched in two parts, a batch:
 *
 * 0. Ahead: the offers of steps 2-4 to the watchers whose consumer waited
 *    when the batch began (marked `liveBatch`), without the walk; their
 *    consumers are woken now and run first.
 * 1-5. The walk, for every event of the batch in order, skipping the
 *    watchers offered ahead, in the turn's setImmediate (LiveFirstOptions
 *    .clock, NextTurn): after those consumers and the events they read next.
 *
 * Invariant 2 (order and single delivery), as the batch keeps it: a watcher
 * is offered ahead only if it was marked when the batch began, so it got
 * every event of the batch ahead and the walk skips it for all of them (or,
 * in a walk that stopped for a turn, when it joined late having got every
 * earlier one: `joinLate`); any other watcher gets the batch's events only
 * from the walk, in event order. A watcher that parks during a batch waits
 * for the walk, or for the walk's next turn. Whatever reads
 * the positions of watchers that were not offered ahead walks the batch
 * first (`settle`): a progress notification, a bookmark and a pass (they
 * ask the last dispatched RV or the resync point, the cache settles there),
 * beta's hand-back (the last dispatched RV), a relist; and a batch holds at
 * most MAX_BATCH_EVENTS events. `lastDispatchedRV` moves at the walk; beta's
 * control block publishes it as walked so far, without settling (the
 * deferred mirror publishes mid-burst: BetaSyncInit.walkedRV). Every event, batch or not, is walked by walkPending,
 * so the walk a mass stall's first batch runs is the code every earlier
 * event ran and optimized.
 *
 * A batch's walk goes a chunk per turn (LiveFirstOptions.walkChunk
 * candidates, CandidateWalk): at 100,000 watchers one event's walk is
 * ~7 ms, and a fill of 100 such events held the main thread for most of a
 * second, so a writer fell behind and wrote in bursts whose first events
 * waited for the whole burst (issue 13, goal 1). Between chunks the batch
 * goes on: later events are offered ahead to the same marked watchers and
 * queue behind the walk; no new batch begins (a watcher marked then would
 * get a later event ahead of the earlier ones still to be walked: invariant
 * 2); a consumer that parks meanwhile joins the batch at the walk's next
 * turn (`joinLate`: the batch's events above its position first, in order;
 * then it is marked). The channels a stopped chunk found full go to the policy before the
 * turn ends (the position they keep is below the event, invariant 1).
 * `settle`, a batch at MAX_BATCH_EVENTS and a dispatch outside a batch
 * walk everything that is due at once.
 */
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import type { Watcher } from '../watch/watcher.js';
import type { FullChannelPolicy } from './full-channel-policy.js';
import type { WatcherIndex } from './watcher-index.js';
import { realClock, type Clock } from '../core/clock.js';
import { NextTurn } from '../core/next-turn.js';
import { Offer, offer } from '../watch/offer.js';
import { CandidateWalk, UNBOUNDED } from './candidate-walk.js';
import { ParkedWatchers } from './parked-watchers.js';

export interface LiveFirstOptions {
  /** Engage only when the last walk found this many candidates not waiting (default LIVE_FIRST_MIN_WATCHERS). */
  minWatchers?: number;
  /** A batch's walk runs on this clock's next turn (NextTurn: its setImmediate, after the turn's consumers). */
  clock: Clock;
  /** Batch numbers wrap after this one (default MAX_BATCH_NUMBER; the tests wrap within a few events). */
  maxBatchNumber?: number;
  /** Candidates a batch's walk visits per turn (default WALK_CHUNK; the harness: a few). */
  walkChunk?: number;
}

/** Live first engages only when the last walk found this many candidates not waiting (fewer cost it a few µs). */
const LIVE_FIRST_MIN_WATCHERS = 256;
/**
 * Events one live-first batch holds at most; the next one walks them first, before the consumers offered them
 * ahead have run. A batch is one synchronous run of dispatches (a writer's burst, a store's batch): 64 cut a
 * burst of 72 in two (test/beta/deferred-mirror.test.ts) and put 64 walks ahead of the consumers; a walk in
 * chunks lets the events of a mass stall's fill queue behind it (100,000 watchers: ~750). Two lists of 4,096
 * slots.
 */
const MAX_BATCH_EVENTS = 4096;
/**
 * Candidates a batch's walk visits per turn: ~0.4 ms at 10,000 watchers (one event or a few), 1.5-1.9 ms at
 * 100,000 (a watcher's fields, its channel and its position are cache misses there, ~100 ns a visit; the
 * turns timed in the KEP bench). 8,192 made no difference there that 3 rounds could see.
 */
const WALK_CHUNK = 16384;
/** Batch numbers (one per walk) wrap here, within V8's small integers (wrapBatches). */
const MAX_BATCH_NUMBER = 0x3fffffff;

/**
 * offer(), as a module-private const: V8 folds a module's own initialized const into the dispatch loop,
 * while an imported function is loaded from its binding and checked (the hole, then its identity) at
 * every offer. The same function, not a second one.
 */
const offerOne = offer;

export class Dispatcher {
  /** The last RV the live path processed (events and store progress). */
  lastDispatchedRV = 0;
  private readonly index: WatcherIndex;
  private readonly policy: FullChannelPolicy;
  private readonly metrics: CacheMetrics;
  private paused = false;
  /** Events (or progress RVs, as numbers) waiting while dispatch is paused. */
  private queue: (WatchCacheEvent | number)[] = [];
  private queueHead = 0;
  /**
   * The candidates of the current event whose channel was full, in offer order: slots [0, fullCount).
   * Recorded without a branch of its own (see `offer`) and handed to the policy after the offers.
   */
  private full: (Watcher | undefined)[] = fullList(0);
  private fullCount = 0;
  /**
   * The walk's visit, one closure for every walk (a second one made the loop's call site polymorphic: the
   * first batch's walk at a mass stall then ran deoptimized, 5-10 ms per event at 10,000 watchers). Outside
   * a batch no watcher carries the current batch, so it offers to every candidate.
   */
  private readonly offerFn = (w: Watcher): void => {
    if (w.liveBatch === this.batch) return;
    this.walkedBusy += w.waiting ? 0 : 1; // read before the offer wakes it
    this.offer(w, this.walkEvent!);
  };
  /** The event being walked (its walk may have stopped for the turn: `candidates` is where). */
  private walkEvent: WatchCacheEvent | undefined;
  private readonly candidates = new CandidateWalk();
  /** Candidates a scheduled walk visits per turn. */
  private readonly walkChunk: number;
  /** Candidates of the event being walked whose consumer was not waiting (for the next beginBatch). */
  private walkedBusy = 0;
  /** The same count for the last event walked. */
  private lastBusy = 0;
  /** The index's size when the last event's walk ended (watchers registered since then are counted busy). */
  private lastIndexSize = 0;
  private readonly resumeFn = (): void => this.resume();
  /** Live first: the fewest candidates not waiting, in the last walk, it engages at (Infinity: never, e.g. off). */
  private readonly liveFirstMin: number;
  private readonly parked = new ParkedWatchers();
  /** The current live-first batch (watchers offered ahead in it carry it as `liveBatch`). */
  private batch = 1;
  /** Events of the batch offered ahead, whose walk is still due (in order). */
  private pending = eventList(MAX_BATCH_EVENTS);
  private pendingCount = 0;
  /** The other buffer (walkPending swaps them: no array per walk, and a dispatch during a walk is safe). */
  private walking = eventList(MAX_BATCH_EVENTS);
  /** The events of `walking` still to walk: [walkingHead, walkingCount). */
  private walkingHead = 0;
  private walkingCount = 0;
  /** A batch's walk, a chunk a turn, after the turn's consumers (at most one turn pending). */
  private readonly walkTurn: NextTurn;
  private stopped = false;
  /** The last batch number before they wrap to 1. */
  private readonly maxBatchNumber: number;

  /** `liveFirst`: see the module doc (undefined, or a policy without `liveFirst`: every event walks at once). */
  constructor(index: WatcherIndex, policy: FullChannelPolicy, metrics: CacheMetrics, liveFirst?: LiveFirstOptions) {
    this.index = index;
    this.policy = policy;
    this.metrics = metrics;
    this.liveFirstMin =
      policy.liveFirst === true && liveFirst !== undefined
        ? (liveFirst.minWatchers ?? LIVE_FIRST_MIN_WATCHERS)
        : Infinity;
    this.walkTurn = new NextTurn(liveFirst?.clock ?? realClock, () => {
      // A walk that stopped in an earlier turn: its batch has lasted turns, and may last many more.
      if (this.walkEvent !== undefined) this.joinLate();
      this.walkPending(this.walkChunk);
    });
    this.maxBatchNumber = liveFirst?.maxBatchNumber ?? MAX_BATCH_NUMBER;
    this.walkChunk = liveFirst?.walkChunk ?? WALK_CHUNK;
    this.lastIndexSize = index.size;
    // Room to record every candidate as full, grown when the index grows (at registration). Growing it
    // here in dispatchOne instead, in a branch that had not run since the loop was optimized, threw the
    // whole loop back to the interpreter for the first event after 10,000 watchers registered (~12 ms),
    // and the new array's elements kind did the same again a few events later (issue 13).
    index.onGrow((size) => {
      if (this.full.length >= size) return;
      const grown = fullList(size);
      // A watcher registered during an event's offers keeps the full ones recorded so far.
      for (let i = 0; i < this.fullCount; i++) grown[i] = this.full[i];
      this.full = grown;
    });
  }

  /** True while off mode waits on full channels. */
  get isPaused(): boolean {
    return this.paused;
  }
  /** Events waiting behind a paused dispatch. */
  get backlog(): number {
    return this.queue.length - this.queueHead;
  }

  dispatch(event: WatchCacheEvent): void {
    if (this.paused) this.queue.push(event);
    else this.dispatchOne(event);
  }

  /** The store reported progress to `rv` with no event (drives bookmark RVs). */
  progress(rv: number): void {
    this.settle();
    if (this.paused) this.queue.push(rv);
    else this.progressOne(rv);
  }

  /**
   * Walk the live-first batch now (events offered ahead whose walk is due): before anything that reads
   * or moves the positions of watchers not offered ahead, e.g. a bookmark or a relist.
   */
  settle(): void {
    if (this.walkDue()) this.walkPending(UNBOUNDED);
  }

  /** A consumer waits in next() (Watcher.next): listed for the live-first offers. */
  watcherParked(w: Watcher): void {
    if (this.liveFirstMin === Infinity)
      w.parkedListed = true; // never listed: nothing reads the list
    // Only a watcher the live path offers to: an unsynced one (its consumers park on a pass's or the sync
    // worker's pushes: 10,000 of them in a resume) would only churn the list. It is listed once it parks synced.
    else if (!w.unsynced && w.indexBucket !== undefined) this.parked.add(w, this.batch);
  }

  /** The cache stopped: a batch still due is dropped (its watchers ended), and nothing is listed. */
  stop(): void {
    this.stopped = true;
    this.pending.fill(undefined);
    this.pendingCount = 0;
    this.walking.fill(undefined);
    this.walkingHead = this.walkingCount = 0;
    this.walkEvent = undefined;
    this.candidates.abandon();
    this.walkTurn.close();
    this.parked.clear();
  }

  /** Reset after a relist: nothing queued survives it. */
  reset(rv: number): void {
    this.settle();
    this.queue = [];
    this.queueHead = 0;
    this.lastDispatchedRV = rv;
  }

  private dispatchOne(event: WatchCacheEvent): void {
    if (this.liveFirstMin !== Infinity) {
      if (this.pendingCount >= MAX_BATCH_EVENTS) this.walkPending(UNBOUNDED);
      // A batch whose walk is still due goes on: no new batch (and no new marks) begins before it is walked.
      if (this.walkDue() || this.beginBatch()) {
        this.offerAhead(event);
        return;
      }
    }
    // The same steps as a batch's walk, so that the walk the first batch runs (at a mass stall, over every
    // watcher) is the code every event before it ran and optimized: a separate call site ran deoptimized
    // there, 5-10 ms per event at 10,000 watchers.
    this.pending[this.pendingCount++] = event;
    this.walkPending(UNBOUNDED);
  }

  /** Events offered ahead wait for their walk (pending, being walked, or one walk stopped for the turn). */
  private walkDue(): boolean {
    return this.pendingCount !== 0 || this.walkingHead < this.walkingCount || this.walkEvent !== undefined;
  }

  /**
   * Steps 1-3 for the events due, in order, skipping the watchers offered ahead, visiting at most `budget`
   * candidates (UNBOUNDED: all); then, once every event is walked, a new batch and the policy's afterDispatch.
   * A walk that stops for the turn hands the full channels found so far to the policy and goes on next turn.
   */
  private walkPending(budget: number): void {
    if (this.stopped || !this.walkDue()) return;
    for (;;) {
      const event = this.walkEvent;
      if (event !== undefined) {
        budget = this.candidates.run(budget, this.offerFn);
        if (this.candidates.active) {
          this.fullChannels(event);
          this.walkTurn.schedule();
          return;
        }
        this.walkEvent = undefined;
        this.walked(event);
      } else if (this.walkingHead < this.walkingCount) {
        const next = this.walking[this.walkingHead]!;
        this.walking[this.walkingHead++] = undefined;
        this.walkEvent = next;
        this.walkedBusy = 0;
        this.candidates.begin(this.index, next);
      } else if (this.pendingCount !== 0) {
        const events = this.pending;
        this.pending = this.walking;
        this.walking = events;
        this.walkingCount = this.pendingCount;
        this.walkingHead = 0;
        this.pendingCount = 0;
      } else break;
    }
    this.walkingHead = this.walkingCount = 0;
    // A new batch number per walk, batch or not: marks of past batches never match again (and the field
    // changes from the first event on, so code that reads it is not optimized for one value).
    this.batch = this.batch === this.maxBatchNumber ? this.wrapBatches() : this.batch + 1;
    // Once for the batch: a pass it may start (alpha) resyncs at the cache's RV, which the walk has reached now.
    this.policy.afterDispatch();
  }

  /** Steps 4-5 for `event`, once every candidate was visited (the caller then tells the policy: afterDispatch). */
  private walked(event: WatchCacheEvent): void {
    this.lastBusy = this.walkedBusy;
    this.lastIndexSize = this.index.size;
    this.fullChannels(event);
    this.lastDispatchedRV = event.rv;
    this.metrics.eventsDispatched.inc();
    if (this.policy.afterEvent(this.resumeFn)) this.paused = true;
  }

  /**
   * A batch begins when the walk is large and few wait: the waiting consumers' watchers are marked to be
   * offered ahead for the whole batch (module doc). False: walk as usual.
   */
  private beginBatch(): boolean {
    const parked = this.parked;
    // The last walk counted the candidates whose consumer did not wait: the walk that live first would take
    // off the waiting consumers' way. The parked list's own count may hold stale entries; compacted below.
    // Watchers registered since that walk count as not waiting: the first event after 100,000 registered was
    // otherwise walked at once (lastBusy counted the one healthy watcher), ~30 ms of first pushes in one turn.
    const busy = this.lastBusy + Math.max(0, this.index.size - this.lastIndexSize);
    if (busy < this.liveFirstMin || parked.count === 0) return false;
    parked.compact();
    const batch = this.batch;
    let marked = 0;
    for (let i = 0; i < parked.count; i++) {
      const w = parked.at(i);
      // Only an indexed, synced watcher gets live offers (the walk would offer it the event too).
      if (w.unsynced || w.indexBucket === undefined) continue;
      w.liveBatch = batch;
      marked++;
    }
    return marked !== 0;
  }

  /** Step 0 for `event`: the batch's marked watchers now, the walk later in the turn. */
  private offerAhead(event: WatchCacheEvent): void {
    const parked = this.parked;
    const batch = this.batch;
    // Invariant 2 (order and single delivery): only the watchers marked when the batch began (module doc).
    for (let i = 0; i < parked.count; i++) {
      const w = parked.at(i);
      if (w.liveBatch === batch) this.offer(w, event);
    }
    this.fullChannels(event);
    this.walkTurn.schedule(); // after the consumers just woken, and what they read next
    this.pending[this.pendingCount++] = event;
  }

  /**
   * Before each later turn of a walk that stopped (a batch over ~100,000 candidates lasts a mass stall's whole
   * fill, ~1 s): the consumers that parked since the batch began get its events above their position, in
   * order (the one being walked, the rest of its list, then the pending ones), and are marked, so the walk
   * skips them and later events reach them ahead, as if they had been marked when it began. Invariant 2:
   * each event once and in order (below its position the walk offered it already). Only for a walk that
   * stopped: done for every batch (at the next dispatch or the walk's turn) it held the KEP rate variant's
   * waiting consumers back (1,000 slow consumers that park between reads: healthy p50 55-77 -> 76-127 µs).
   */
  private joinLate(): void {
    const parked = this.parked;
    const batch = this.batch;
    for (let i = 0; i < parked.count; i++) {
      const w = parked.at(i);
      if (w.liveBatch === batch || !w.waiting || w.unsynced || w.indexBucket === undefined) continue;
      this.offerBehind(w, this.walkEvent!);
      for (let k = this.walkingHead; k < this.walkingCount; k++) this.offerBehind(w, this.walking[k]!);
      for (let k = 0; k < this.pendingCount; k++) this.offerBehind(w, this.pending[k]!);
      if (!w.unsynced) w.liveBatch = batch; // a full channel on the way made it unsynced: the walk skips it
    }
  }

  /** One event of the batch to a consumer joining it late; a full channel goes to the policy with it. */
  private offerBehind(w: Watcher, event: WatchCacheEvent): void {
    if (event.rv <= w.cursor.position) return; // the walk offered it (no "skipped" count)
    this.offer(w, event);
    this.fullChannels(event);
  }

  /**
   * Batch numbers start again at 1: no watcher may carry an old number then. A watcher enters the index
   * unmarked (WatcherIndex.add), so the indexed ones and the parked list's are all that can carry one.
   */
  private wrapBatches(): number {
    for (const w of this.index.all()) w.liveBatch = 0;
    this.parked.unmarkAll();
    return 1;
  }

  private progressOne(rv: number): void {
    if (rv > this.lastDispatchedRV) this.lastDispatchedRV = rv;
    this.policy.afterDispatch();
  }

  private offer(w: Watcher, event: WatchCacheEvent): void {
    // Unsynced watchers are served by passes only; the live path offers them nothing.
    if (w.unsynced || !w.accepting) return;
    const r = offerOne(w, event);
    // A full channel is recorded with operations every offer runs (the store, the add) and a choice between
    // two values, not a branch of its own: TurboFan compiles a branch that never ran (no type feedback) as
    // a deoptimization, so the first mass stall used to throw this whole loop back to the interpreter for
    // the rest of the event (10,000 offers at interpreter speed: tens of ms, issue 13). The policy gets
    // the full ones after the loop (`fullChannels`). Invariant 1 (position) is the policy's there: the
    // failed push left the position below X.
    const n = this.fullCount;
    const next = n + 1;
    this.full[n] = w;
    this.fullCount = r === Offer.Full ? next : n;
    if (r === Offer.AlreadyHas && event.rv > w.startPosition) this.metrics.skippedEvents.inc();
  }

  /** After the offers of `event` (or a stopped walk's chunk of them): the full ones go to the policy, in offer order, in one call. */
  private fullChannels(event: WatchCacheEvent): void {
    const full = this.full;
    const n = this.fullCount;
    full[n] = undefined; // the slot past the full ones holds the last candidate offered: let it go
    if (n === 0) return;
    this.fullCount = 0;
    this.policy.onFull(full, n, event);
    full.fill(undefined, 0, n); // let them go
  }

  private resume(): void {
    this.paused = false;
    while (!this.paused && this.queueHead < this.queue.length) {
      const next = this.queue[this.queueHead]!;
      this.queue[this.queueHead++] = 0;
      if (typeof next === 'number') this.progressOne(next);
      else this.dispatchOne(next);
    }
    if (this.queueHead === this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    }
  }
}

/**
 * An empty full list of `size` slots. Every list the dispatcher uses is made here, so all have one elements
 * kind (holey, object values): a fresh `new Array(n)` holds small integers as far as V8 knows, and the
 * first watcher stored into one would change its map under the optimized loop (a deoptimization).
 */
function fullList(size: number): (Watcher | undefined)[] {
  return new Array<Watcher | undefined>(size).fill(undefined);
}

/** A batch's event list: `size` slots, holey object elements from the start (as fullList, for the same reason). */
function eventList(size: number): (WatchCacheEvent | undefined)[] {
  return new Array<WatchCacheEvent | undefined>(size).fill(undefined);
}
