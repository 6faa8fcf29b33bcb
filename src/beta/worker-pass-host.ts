/**
 * WorkerPassHost: the sync worker's side of beta. It owns the unsynced set
 * and runs the same SyncPass as alpha (one implementation, two hosts), but
 * against the SharedArrayBuffer history ring and pushing straight into the
 * members' shared channels. Nothing it does costs the main thread per
 * unsynced watcher or per event.
 *
 * Per scanned event: the payload (encoded once with msgpackr on the main
 * thread) is decoded once per pass into a WatchCacheEvent and classified
 * with each member's registration-time Selection (invariant 4); indexer
 * values travel in the payload because functions cannot cross threads.
 *
 * Hand-off: a member that accepted everything and is within
 * `handOffDistance` events of the last dispatched RV (the beta resync point)
 * is handed back; the main thread delivers those last few events and marks
 * it synced. Expired members are handed back with their 410.
 *
 * Run slots: an event a member gets as is, right after the last one it got
 * as is, joins that slot while it is unpublished (SpscChannel "Run slots";
 * Offer.PushedInRun), so a dense catch-up fills a channel with up to
 * RUN_MAX (16) events per slot. The KEP's "one channel's capacity per watcher
 * per cohort" counts slots (what the channel holds); the pass's push budget
 * (its work) and the pushes the worker reports (metrics, the observer
 * channels, the hand-back's passPushes) count events.
 */
import { Unpackr } from 'msgpackr';
import {
  decodeRingPayload,
  readRingSelection,
  readSelectionSection,
  SELECTION_LOCATOR_BYTES,
  selectionLength,
  selectionStart,
} from '../protocol/ring-payload.js';
import { SectionInterner } from '../protocol/section-interner.js';
import type { IndexerFunc, KubeObject } from '../core/types.js';
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { WatchCacheEvent } from '../history/watch-cache-event.js';
import { EventTypeCode, eventTypeName, type HistoryRingHandle } from '../ring/ring-layout.js';
import { HistoryRingReader, ReadStatus, TOO_OLD, createRingRecord, type RingRecord } from '../ring/ring-reader.js';
import { hash32, NO_VALUE_HASH } from '../ring/hash32.js';
import { RunPush, SpscChannel } from '../ring/spsc-channel.js';
import { Delivery, Selection } from '../selection/selection.js';
import { Variant, variantOf, WriterOwner } from '../protocol/channel-variants.js';
import type { PassOptions } from '../sync/pass-options.js';
import { PassScheduler } from '../sync/pass-scheduler.js';
import { Offer, SyncPass, type PassCursor, type PassHost, type PassMember, type PassStats } from '../sync/sync-pass.js';
import { SyncCursor } from '../sync/sync-cursor.js';
import { ControlBlock, roomWorthAPass, type ControlSnapshot } from './control-block.js';
import { ConsumerWindow, type WindowMember } from './consumer-window.js';
import type { AdoptRequest, WorkerToMain, WorkerTotals } from './sync-messages.js';
import { openRegion } from './channel-slabs.js';
import type { WakeDoorbell } from './wake-doorbell.js';

/** A 'pushed' notice with the worker's totals only (no ids) at most this often. */
const STATS_EVERY_MS = 100;
/** Entries of the pass's scanned-event cache (a power of two; WorkerPassHost.scannedRefs). */
const SCANNED_SLOTS = 8192;
/** Entries of the RV → next index memo (a power of two; WorkerPassHost.indexAfter). */
const AFTER_SLOTS = 1024;

export class WorkerMember implements PassMember, WindowMember {
  readonly id: number;
  readonly channel: SpscChannel;
  /** Consumed on the main thread (its channel is in a pooled slab region): the consumer window bounds it. */
  readonly local: boolean;
  /**
   * Its consumer's HEAD when adopted, so that it counts as reading only once that moves or the worker feeds
   * it: a mass stall's consumers, which read nothing, never shut the window (nor cost the worker a re-measure).
   */
  headSeen: number;
  activeAt = -Infinity;
  private readonly window: ConsumerWindow;
  readonly selection: Selection;
  /**
   * Over the watcher's shared cell: the position survives this worker if it dies (no duplicate,
   * no gap), and the consumer's drained flag reaches the candidate order (KEP key 2).
   */
  readonly cursor: SyncCursor;
  reachedLive: boolean;
  removed = false;
  /**
   * Batched pushes (SpscChannel.pushBatched): a run is published once a quarter of the channel is
   * pending (besides a full channel and the cohort's end: WorkerPassHost.push)...
   */
  readonly publishEvery: number;
  /**
   * ...and, while its consumer waits for data, only once a whole channel's worth is (the channel is
   * full), or at the end of its run in the cohort (WorkerPassHost.push: one wake-up per run, not two).
   */
  readonly wakeEvery: number;
  /** In the host's list of members with a run open in this cohort (WorkerPassHost.publishAll). */
  listed = false;

  /** It selects everything: the slot's type decides its delivery, no decode needed (issue 13, deliverable 4). */
  readonly everything: boolean;
  /**
   * Its selection reads only name, namespace, labels and indexed fields: the payload's selection
   * section decides it exactly, without decoding the objects (src/protocol/ring-payload.ts).
   */
  readonly bySelectionSection: boolean;
  /** It has a label selector: the section decides it only where its labels were written (LABELS_EXACT). */
  readonly readsLabels: boolean;
  /** Scope hashes: a cheap test before any event is decoded for this member. */
  private readonly nsHash: number;
  private readonly nameHash: number;
  private readonly triggerHash: number;

  constructor(id: number, known: KnownWatcher, position: number, reachedLive: boolean, window: ConsumerWindow) {
    this.id = id;
    this.channel = known.channel;
    this.local = known.local;
    this.window = window;
    this.headSeen = known.channel.consumerHead;
    this.selection = known.selection;
    this.cursor = new SyncCursor(known.cell);
    this.nsHash = known.nsHash;
    this.nameHash = known.nameHash;
    this.triggerHash = known.triggerHash;
    this.everything = known.selection.everything;
    this.bySelectionSection = known.bySelectionSection;
    this.readsLabels = !known.selection.labels.empty;
    this.cursor.startAt(position);
    this.cursor.markUnsynced();
    // Invariant 1 (position) across threads: the cell gets the position only after the channel
    // published the pushes it covers (WorkerPassHost.publish), never ahead of them.
    this.cursor.holdPosition();
    this.reachedLive = reachedLive;
    this.publishEvery = Math.max(1, known.channel.capacity >> 2);
    this.wakeEvery = Math.max(1, known.channel.capacity);
  }

  /**
   * False when the slot's hashes prove this member cannot select the event
   * (another namespace, name or trigger value). A hash collision only costs
   * a decode; the Selection then decides exactly (invariant 4).
   */
  mightSelect(ev: RingEventRef): boolean {
    if (this.nsHash !== NO_VALUE_HASH && this.nsHash !== ev.nsHash) return false;
    if (this.nameHash !== NO_VALUE_HASH && this.nameHash !== ev.nameHash) return false;
    if (
      this.triggerHash !== NO_VALUE_HASH &&
      this.triggerHash !== ev.triggerHash &&
      this.triggerHash !== ev.prevTriggerHash
    )
      return false;
    return true;
  }
  get position(): number {
    return this.cursor.position;
  }
  get capacity(): number {
    return this.channel.capacity;
  }
  /** Room in its channel; none while the consumer window is shut, for a member it bounds (consumer-window.ts step 3). */
  get free(): number {
    return this.local && this.window.shut ? 0 : this.channel.free;
  }
  /** Events and slots the worker pushed to it (its events per slot: queuedEvents). */
  pushedEvents = 0;
  pushedSlots = 0;
  get queuedEvents(): number {
    const slots = this.channel.size;
    // A slot the main thread pushed (before the worker fed it) holds one event, as do those of a member
    // the worker has not fed yet.
    return slots === 0 || this.pushedSlots === 0 ? slots : Math.ceil((slots * this.pushedEvents) / this.pushedSlots);
  }
  get consumerHead(): number {
    return this.channel.consumerHead;
  }
  get accepting(): boolean {
    return !this.removed && !this.channel.cancelled;
  }
}

/**
 * A scanned ring event as the worker first sees it: its RV and the slot's
 * selection hashes, read without touching the payload. The payload is
 * decoded (once per pass) only when some member's hashes say it may select
 * the event: most scanned events are selected by nobody.
 */
export class RingEventRef {
  // Not readonly: refAt() refills an entry of an earlier pass in place (fill) instead of allocating one per
  // event. Every field has an initializer of its type, so the constructor's fill() keeps one shape.
  index = 0;
  rv = 0;
  nsHash = 0;
  nameHash = 0;
  triggerHash = 0;
  prevTriggerHash = 0;
  /**
   * What a select-everything watcher receives (Selection.classify with no
   * scope and no selectors): the event as it is, except a MODIFIED without a
   * previous object, which arrives as ADDED.
   */
  everythingVariant: Variant = Variant.AS_IS;
  /** EventTypeCode and HAS_PREV of the slot. */
  type = 0;
  hasPrev = false;
  decoded: WatchCacheEvent | null | undefined = undefined; // undefined: not yet; null: overwritten
  /** The event rebuilt from the payload's selection section alone (undefined: not yet; null: not exact / overwritten). */
  skeleton: WatchCacheEvent | null | undefined = undefined;
  /** The skeleton's objects carry their labels (the section's LABELS_EXACT). */
  skeletonLabels = false;
  constructor(r: RingRecord) {
    this.fill(r);
  }

  /** The slot `r` describes, nothing decoded yet (a new entry, or one no pass holds any more: refAt). */
  fill(r: RingRecord): void {
    this.index = r.absIndex;
    this.rv = r.rv;
    this.type = r.type;
    this.hasPrev = r.hasPrev;
    this.everythingVariant = r.type === EventTypeCode.MODIFIED && !r.hasPrev ? Variant.ADDED : Variant.AS_IS;
    this.nsHash = r.nsHash;
    this.nameHash = r.nameHash;
    this.triggerHash = r.triggerHash;
    this.prevTriggerHash = r.prevTriggerHash;
    this.decoded = undefined;
    this.skeleton = undefined;
    this.skeletonLabels = false;
  }
}

/**
 * An empty array already of V8's elements kind for objects, not small integers (what `[]` starts as).
 * The warm-up's host fills its arrays with objects before the real host has pushed anything, so the
 * pass code is optimized for the object kind; an array of the real host's still in the integer kind
 * then met it with another map, and its first push threw that code away (issue 13, deliverable 4:
 * `push` and `letGoOfEvents` deoptimized in each fresh worker's first catch-up).
 */
function objectArray<T extends object>(): T[] {
  const a: (T | undefined)[] = [undefined];
  a.length = 0;
  return a as T[];
}

class RingCursor implements PassCursor<RingEventRef> {
  interrupted = false;
  readonly endRV: number;
  private i: number;
  private readonly end: number;
  private readonly host: WorkerPassHost;
  constructor(host: WorkerPassHost, start: number, end: number, endRV: number) {
    this.host = host;
    this.i = start;
    this.end = end;
    this.endRV = endRV;
  }
  next(): RingEventRef | undefined {
    if (this.interrupted || this.i >= this.end) return undefined;
    const ev = this.host.refAt(this.i);
    if (ev === undefined) {
      this.interrupted = true; // overwritten under us: not the end of the history
      return undefined;
    }
    this.i++;
    return ev;
  }
}

/** What the worker keeps of a watcher it has been introduced to. */
export interface KnownWatcher {
  channel: SpscChannel;
  selection: Selection;
  cell: Float64Array;
  /** hash32 of its namespace / name / trigger value scope (NO_VALUE_HASH: any). */
  nsHash: number;
  nameHash: number;
  triggerHash: number;
  /** See WorkerMember.bySelectionSection. */
  bySelectionSection: boolean;
  /** Its channel is in a pooled slab region: its consumer reads on the main thread (WorkerMember.local). */
  local: boolean;
}

/**
 * The indexed values of an object the worker built or decoded (the selection section's, in indexer-field
 * order), as the worker's indexers read them: a property of the worker's own object, which no other thread
 * sees (a WeakMap beside it cost two inserts per scanned event and the collector's ephemeron work).
 */
const INDEXED_VALUES = Symbol('indexed values');
interface Indexed {
  [INDEXED_VALUES]?: (string | undefined)[];
}

export class WorkerPassHost implements PassHost<RingEventRef, WorkerMember> {
  readonly members = new Map<number, WorkerMember>();
  readonly scheduler: PassScheduler;
  /** The worker's pass (public for the simulator's cost model, which interposes on it in-process). */
  readonly pass: SyncPass<RingEventRef, WorkerMember>;
  private readonly reader: HistoryRingReader;
  private readonly control: ControlBlock;
  private readonly snap: ControlSnapshot = { lastDispatchedRV: 0, oldestServableRV: undefined };
  private readonly record = createRingRecord(4096);
  private readonly unpackr = new Unpackr({ useRecords: false });
  private readonly indexers: Record<string, IndexerFunc>;
  /** The indexer fields in the order the payload's selection section lists their values. */
  private readonly indexerFields: string[];
  private readonly triggerField: string | undefined;
  /** Names, indexed values and label maps of the sections skeletonOf reads, each decoded once while held. */
  private readonly interner = new SectionInterner();
  /**
   * The pass's scanned events, direct-mapped by ring index (SCANNED_SLOTS of them): an entry counts
   * only in the pass that made it (`scannedPass`), so nothing is cleared between passes. A collision
   * (two cohorts of one pass SCANNED_SLOTS apart) only reads the slot again. A Map cost a lone
   * catch-up watcher a hash insert per event and its regrowth every pass (issue 13, deliverable 4).
   */
  private readonly scannedRefs: (RingEventRef | undefined)[] = new Array<RingEventRef | undefined>(SCANNED_SLOTS).fill(
    undefined,
  );
  private readonly scannedIn = new Int32Array(SCANNED_SLOTS);
  /**
   * The entries this pass decoded or built a skeleton for, let go at its end (afterPass). An entry's
   * events serve only the pass that made them (a later one refills the entry before reading it: refAt),
   * yet until the refill they stayed reachable: up to SCANNED_SLOTS decoded pods and their previous
   * objects (~120 MB of 2 KiB pods), and V8 let the worker's heap grow to ~4x that before collecting.
   */
  private readonly madeInPass: RingEventRef[] = objectArray();
  /** The current pass's number in scannedIn (from 1: 0 is no pass). */
  private scannedPass = 1;
  /**
   * For the RVs of events scanned lately (direct-mapped by RV): the index right after each, so a
   * position at one of them (where a member stopped) finds its next index with two slot reads, not a
   * binary search (indexAfter).
   */
  private readonly afterRVs = new Float64Array(AFTER_SLOTS).fill(-1);
  private readonly afterIndex = new Float64Array(AFTER_SLOTS);
  private readonly pushedTo = new Set<number>();
  private readonly options: PassOptions;
  private readonly clock: Clock;
  private readonly send: (msg: WorkerToMain) => void;
  private pushes = 0;
  /** When the last 'pushed' notice left (clock ms). */
  private statsAt = -Infinity;
  /** The totals moved since the last 'pushed' notice (a doorbell host sends them on a timer: statsTimer). */
  private statsDirty = false;
  private statsTimer: TimerHandle | undefined;
  /**
   * Wakes waiting main-thread consumers through shared memory (a worker thread's host): their ids, not a
   * message each (wake-doorbell.ts). Undefined (in-process hosts): the ids travel in 'pushed' notices.
   */
  private readonly doorbell: WakeDoorbell | undefined;
  private scannedCount = 0;
  private decodes = 0;

  /**
   * Retry rounds per pass (SyncPass): none in the worker thread, which a consumer's room signal wakes
   * (the rounds would run before any consumer on the main thread could read); the KEP's two in-process.
   */
  readonly retryRounds: number;

  /** Called after a pass that found every member's channel full and served nobody (the thread may park for room). */
  onAllFull: (() => void) | undefined;

  /**
   * `roomSignal`: the thread wakes on ControlBlock room signals (workers/sync-worker.ts), so a pass
   * that found every channel full may wait the idle period. In-process hosts (the simulator) keep
   * the normal period instead.
   */
  constructor(
    ring: HistoryRingHandle,
    control: SharedArrayBuffer,
    options: PassOptions,
    indexerFields: string[],
    triggerField: string | undefined,
    send: (msg: WorkerToMain) => void,
    clock: Clock = realClock,
    roomSignal = false,
    doorbell?: WakeDoorbell,
  ) {
    this.retryRounds = roomSignal ? 0 : 2;
    this.window = new ConsumerWindow(options.consumerWindow);
    this.doorbell = doorbell;
    this.reader = new HistoryRingReader(ring);
    this.control = new ControlBlock(control);
    this.options = options;
    this.clock = clock;
    this.send = send;
    this.triggerField = triggerField;
    this.indexers = {};
    this.indexerFields = indexerFields;
    indexerFields.forEach((f, i) => (this.indexers[f] = (o: KubeObject) => (o as Indexed)[INDEXED_VALUES]?.[i]));
    this.pass = new SyncPass(options, this);
    this.scheduler = new PassScheduler(clock, options, {
      hasWork: () => this.members.size > 0,
      runPass: (done) => {
        this.passAt = this.clock.now();
        this.window.measure(this.members.values(), this.passAt);
        this.pass.run(this.members.values(), (stats) => this.afterPass(stats, done));
      },
      observeDuration: () => {},
      signalsRoom: roomSignal,
      expiryDue: () => this.expiryDue(),
    });
  }

  /** What it keeps queued for the main thread's consumers (consumer-window.ts). */
  readonly window: ConsumerWindow;
  /** When the current (or last) pass started (clock ms): a publication marks its member active then. */
  private passAt = 0;

  /** The control block (the thread parks on its room word). */
  get controlBlock(): ControlBlock {
    return this.control;
  }

  /**
   * The lowest member position when the last pass left every channel full
   * (or owed full): while the worker waits for room, nothing moves a
   * member's position but a pass, so this says when expiry comes due.
   */
  private minPosition = -Infinity;

  /** Waiting for room: has the history left some member's position behind since the last pass? */
  private expiryDue(): boolean {
    const oldest = this.oldestServableRV();
    return oldest === undefined || this.minPosition < oldest - 1;
  }

  /** Some member's channel has room worth a pass (checked after announcing a park for room). */
  anyMemberHasRoom(): boolean {
    // A shut window may have opened since (its members have no room while it is shut). An open one is
    // measured by the next pass: a measure loads every member's channel head (~0.6 µs each at 10,000, one
    // cache miss apiece), too much for each look for room.
    if (this.window.shut) this.window.measure(this.members.values(), this.clock.now());
    for (const m of this.members.values()) if (m.accepting && roomWorthAPass(m.free, m.capacity)) return true;
    return false;
  }

  /** Slab id -> buffer (channel-slabs.ts): each arrives once, before any watcher in it. */
  readonly slabs: SharedArrayBuffer[] = [];

  /** Remember a watcher's shared channel, position cell and selection (before it ever stalls). */
  introduce(a: AdoptRequest, known: Map<number, KnownWatcher>): KnownWatcher {
    const id = a.id;
    const existing = known.get(id);
    if (existing !== undefined) return existing;
    const spec = a.selection;
    let region: { cell: Float64Array; channel: SpscChannel } | undefined;
    if (a.slot !== undefined) {
      const buffer = this.slabs[a.slot.slab];
      if (buffer === undefined)
        throw new Error(`watcher ${id} is in slab ${a.slot.slab}, which the sync worker never got`);
      region = openRegion(buffer, { slab: a.slot.slab, offset: a.slot.offset, capacity: a.capacity });
    } else if (a.channel !== undefined && a.cell !== undefined)
      region = { channel: new SpscChannel(a.channel), cell: new Float64Array(a.cell) };
    if (region === undefined || spec === undefined)
      throw new Error(`watcher ${id} was never introduced to the sync worker`);
    const selection = new Selection(spec, this.indexers, this.triggerField);
    const entry: KnownWatcher = {
      channel: region.channel,
      selection,
      cell: region.cell,
      nsHash: selection.namespace === '' ? NO_VALUE_HASH : hash32(selection.namespace),
      nameHash: selection.name === '' ? NO_VALUE_HASH : hash32(selection.name),
      triggerHash: selection.triggerValue === undefined ? NO_VALUE_HASH : hash32(selection.triggerValue),
      bySelectionSection: selection.fields.requirements.every(
        (r) => r.field === 'metadata.name' || r.field === 'metadata.namespace' || this.indexers[r.field] !== undefined,
      ),
      local: a.slot !== undefined,
    };
    known.set(id, entry);
    return entry;
  }

  adopt(a: AdoptRequest, known: Map<number, KnownWatcher>): void {
    const entry = this.introduce(a, known);
    const m = new WorkerMember(a.id, entry, a.position, a.reachedLive, this.window);
    this.members.set(a.id, m);
    this.scheduler.onStall();
  }

  /**
   * The watcher ended (or its consumer went away): drop it and hand its
   * writer side back, so the main thread may pool its region again.
   */
  forget(id: number): void {
    const m = this.members.get(id);
    if (m !== undefined) this.release(m);
  }

  /** A relist: drop every member and give its channel back to the main thread. */
  reset(): void {
    for (const m of this.members.values()) this.release(m); // deleting the entry being visited is safe
  }

  /** The warm-up's, each round: its next ring read takes the path of a grown index (HistoryRingReader.dropIndexViews). */
  dropRingViews(): void {
    this.reader.dropIndexViews();
  }

  /** This host is done for good (the warm-up's): the totals its timer would still send stay unsent. */
  dispose(): void {
    if (this.statsTimer !== undefined) this.clock.clearTimeout(this.statsTimer);
    this.statsTimer = undefined;
    this.statsDirty = false;
  }

  /** New events were published (the worker's Atomics wake-up). */
  published(): void {
    this.scheduler.afterDispatch();
  }

  // ---- PassHost ----

  oldestServableRV(): number | undefined {
    return this.control.read(this.snap).oldestServableRV;
  }

  resyncPoint(): number {
    return this.control.read(this.snap).lastDispatchedRV;
  }

  open(afterRV: number): RingCursor {
    const start = this.indexAfter(afterRV);
    const last = this.resyncPoint();
    const endIdx = this.indexAfterResyncPoint(last); // events up to the last dispatched RV only
    if (start === TOO_OLD || endIdx === TOO_OLD) {
      const c = new RingCursor(this, 0, 0, last);
      c.interrupted = true;
      return c;
    }
    return new RingCursor(this, start, endIdx, last);
  }

  offer(m: WorkerMember, ref: RingEventRef): Offer {
    if (m.everything) {
      // Invariant 4 (selection): with no scope and no selectors, classify() depends only on the type
      // and on whether a previous object exists, both in the slot: no payload decode for this member.
      // (An event overwritten meanwhile reaches the consumer as OVERWRITTEN: its 410, never wrong data.)
      return this.push(m, ref, ref.everythingVariant);
    }
    if (!m.mightSelect(ref)) return Offer.NotSelected;
    // Invariant 4 (selection): a hash match is only a candidate; classify() decides exactly, on the
    // selection section when it holds everything this selection reads, else on the decoded objects.
    const ev = (m.bySelectionSection ? this.sectionEvent(m, ref) : undefined) ?? this.decode(ref);
    if (ev === undefined) return Offer.Full; // overwritten while scanning: owed; expiry decides next pass
    const d = m.selection.classify(ev);
    if (d === Delivery.None) return Offer.NotSelected;
    return this.push(m, ref, variantOf(d));
  }

  /**
   * Push one reference, batched (SpscChannel.pushBatched): the consumer sees
   * a run at its publication (publish): every quarter of the channel while
   * it reads, when the channel is full, and at the end of the cohort
   * (cohortEnded), so a push costs no Atomics and no write of the shared
   * position cell of its own (issue 13, deliverable 4). A consumer that
   * waits for data is told once per run: when the channel is full or the
   * run ends (a cohort gives a member at most one channel's worth, so that
   * is at most one wake-up per member per cohort). A wake-up is the
   * expensive part of a pass: an Atomics.notify that resolves the main
   * thread's waitAsync (the doorbell) took the worker ~50-70 µs of wall
   * time on this 2-vCPU VM under load, against ~30 µs for the whole pass of
   * 100 pushes without one (catchup9's pass timeline). At the first push the
   * consumer came back for every few events (~12,000 wake-ups for 50,000
   * events at W = 1); at half a channel it still waited twice per pass (the
   * run's second half ended in a second wake-up: ~1,500 per 50,000 events);
   * at the full run it is told about once per channel: 100 events with one
   * event per slot, up to 1,600 (CAPACITY·RUN_MAX) now that as-is stretches
   * travel in run slots.
   */
  private push(m: WorkerMember, ref: RingEventRef, variant: Variant): Offer {
    const channel = m.channel;
    const bounded = m.local && this.window.limit !== 0;
    if (bounded && this.window.shut) {
      // Consumer window step 3: no more events for the main thread's consumers while it is shut. Owed like
      // a full channel: it keeps its last accepted RV and the next pass re-scans from there.
      this.publish(m);
      return Offer.Full;
    }
    // An event delivered as is may join the member's last unpublished slot as a run (SpscChannel "Run
    // slots"): the next scanned event it gets as is, right after the last, takes no slot of its own, so a
    // dense catch-up costs one channel hand-over per run of events, not per event (issue 13, deliverable 4).
    // Anything else (another variant; an event it skipped, which leaves a gap) starts a new slot.
    const pushed =
      variant === Variant.AS_IS
        ? channel.pushBatchedRun(ref.index)
        : channel.pushBatched(ref.index, variant)
          ? RunPush.SLOT
          : RunPush.REFUSED;
    if (pushed === RunPush.REFUSED) {
      this.publish(m); // full (by the HEAD it saw): what it took so far is the consumer's now
      return Offer.Full;
    }
    this.pushes++; // events (the metrics and the observer count events), runs or not
    if (bounded) {
      this.window.take(); // consumer window step 2
      m.pushedEvents++;
      if (pushed === RunPush.SLOT) m.pushedSlots++;
    }
    // Invariant 1 (position): held in the member's cursor; the cell follows at the publication.
    m.cursor.accepted(ref.rv);
    if (pushed === RunPush.GREW) return Offer.PushedInRun; // no new slot: nothing to publish or list
    const pending = channel.pendingPushes;
    if (pending === 1 && !m.listed) {
      m.listed = true;
      this.openRuns.push(m);
    }
    if (pending >= m.publishEvery && (pending >= m.wakeEvery || !channel.consumerWaiting)) this.publish(m);
    return Offer.Pushed;
  }

  /** Members with a run of pushes open in this cohort (published at its end: publishAll). */
  private readonly openRuns: WorkerMember[] = objectArray();

  /**
   * Publish a member's pending pushes, then its position (in that order:
   * the cell never runs ahead of the channel). The consumer is told only
   * when it waits for data: it announced that in the channel (DATA_WAITING),
   * and this publication cleared it (a wake-up of the channel). A consumer
   * that is still reading finds the events without being told (issue 13,
   * deliverable 4: no main-thread wake-up per fed watcher).
   */
  private publish(m: WorkerMember): void {
    const channel = m.channel;
    if (channel.pendingPushes !== 0) {
      m.activeAt = this.passAt; // fed: its consumer counts as reading (consumer-window.ts step 1)
      const wakes = channel.wakeups;
      channel.publishPushes();
      if (channel.wakeups !== wakes) this.tell(m.id);
    }
    m.cursor.publishPosition();
  }

  /**
   * Tell the main thread to wake waiting consumer `id` (its channel's
   * DATA_WAITING was just cleared: nobody else will). Through the doorbell
   * at once (the main thread reads while the worker pushes the rest). In a
   * 'pushed' notice without one, or when it is full (so no wake is lost):
   * the first waiting consumer of a cohort at once, the others of the
   * cohort at its end, in one notice.
   */
  private tell(id: number): void {
    if (this.doorbell?.ring(id) === true) return;
    this.pushedTo.add(id);
    if (!this.toldInCohort) {
      this.toldInCohort = true;
      this.notifyPushed();
    }
  }

  /** Publish every run left open (the end of a cohort, of a retry round, of the pass). */
  private publishAll(): void {
    const open = this.openRuns;
    for (let i = 0; i < open.length; i++) {
      const m = open[i]!;
      m.listed = false;
      this.publish(m);
    }
    open.length = 0;
  }

  /** A consumer of the current cohort was told at its push already (push). */
  private toldInCohort = false;

  expire(m: WorkerMember, oldest: number): void {
    this.endedInPass = true;
    this.release(m);
    this.send({ op: 'expire', id: m.id, position: m.position, oldest, totals: this.totals() });
  }

  resync(m: WorkerMember): void {
    this.handBack(m);
  }

  drop(m: WorkerMember): void {
    this.forget(m.id);
  }

  defer(fn: () => void): void {
    // The retry rounds wait for consumers to drain: wake the ones this pass fed first (issue 13,
    // deliverable 4), or the rounds find the channels as full as they left them.
    this.publishAll();
    this.notifyPushed();
    this.clock.setTimeout(fn, 0);
  }

  /** A cohort pushed: wake its consumers now (issue 13, deliverable 4), not after the other cohorts. */
  cohortEnded(): void {
    this.publishAll();
    this.notifyPushed();
    this.toldInCohort = false;
  }

  /**
   * Tell the main thread which waiting consumers were pushed to since the
   * last notice (it wakes them: tell), with the worker's totals. Without any
   * only every STATS_EVERY_MS (the totals), or at once after a hand-back or
   * expiry (`flush`: the totals are then complete when the watcher is back),
   * so passes that fed only reading consumers, or none, post nothing. With a
   * doorbell (ids almost never travel here) totals left over by the last
   * passes follow STATS_EVERY_MS after the previous notice (statsTimer):
   * every consumer of the totals (metrics, the `pass` observer channel, the
   * bench) gets them complete within that, however the passes ended.
   */
  private notifyPushed(force = false, flush = false): void {
    if (force) this.statsDirty = true;
    if (this.pushedTo.size === 0 && !flush && !(force && this.clock.now() - this.statsAt >= STATS_EVERY_MS)) {
      if (force && this.doorbell !== undefined && this.statsTimer === undefined) {
        this.statsTimer = this.clock.setTimeout(
          () => {
            this.statsTimer = undefined;
            if (this.statsDirty) this.notifyPushed(false, true);
          },
          Math.max(1, STATS_EVERY_MS - (this.clock.now() - this.statsAt)),
        );
      }
      return;
    }
    this.statsDirty = false;
    this.statsAt = this.clock.now();
    this.send({ op: 'pushed', ids: [...this.pushedTo], ...this.totals() });
    this.pushedTo.clear();
  }

  /**
   * The worker's totals now. A hand-back or expiry carries them: the main thread reads complete totals
   * once the watcher is back (the pass's own passes and workMs follow in the pass end's notice).
   */
  private totals(): WorkerTotals {
    return {
      pushes: this.pushes,
      scanned: this.scannedCount,
      decodes: this.decodes,
      workMs: this.scheduler.workMs,
      passes: this.scheduler.passes,
    };
  }

  served(m: WorkerMember): void {
    this.publish(m); // its position moved to the end of the scan (pushed to or not)
    this.servedInPass.add(m);
  }

  private readonly servedInPass = new Set<WorkerMember>();

  /** The first ring index with an RV above `rv` (reader.indexAfterRV), hinted from the memo of scanned RVs. */
  private indexAfter(rv: number): number {
    const slot = rv & (AFTER_SLOTS - 1);
    return this.reader.indexAfterRV(rv, this.afterRVs[slot] === rv ? this.afterIndex[slot]! : -1);
  }

  /** indexAfterRV of the last dispatched RV: mostly the end of what is published (the hint). */
  private indexAfterResyncPoint(rv: number): number {
    return this.reader.indexAfterRV(rv, this.reader.publishedIndex);
  }

  /** The scanned event at ring index `abs` (metadata only; cached for the pass), undefined if overwritten. */
  refAt(abs: number): RingEventRef | undefined {
    const slot = abs & (SCANNED_SLOTS - 1);
    if (this.scannedIn[slot] === this.scannedPass) {
      const cached = this.scannedRefs[slot]!;
      if (cached.index === abs) return cached;
    }
    if (this.reader.readMeta(abs, this.record) !== ReadStatus.OK) return undefined;
    this.scannedCount++;
    const after = this.record.rv & (AFTER_SLOTS - 1);
    this.afterRVs[after] = this.record.rv;
    this.afterIndex[after] = abs + 1;
    const stamp = this.scannedIn[slot]!;
    this.scannedIn[slot] = this.scannedPass;
    const old = this.scannedRefs[slot];
    // An entry of an earlier pass is no pass's any more (that pass, its retry rounds included, ended before
    // scannedPass moved on): refilled in place, no allocation per scanned event. One of this pass (a
    // collision SCANNED_SLOTS apart) may still be in an earlier cohort's owed events: a new one then.
    if (old !== undefined && stamp !== this.scannedPass) {
      old.fill(this.record);
      return old;
    }
    const ref = new RingEventRef(this.record);
    this.scannedRefs[slot] = ref;
    return ref;
  }

  /** The skeleton when it holds everything `m`'s selection reads (its labels, for a label selector). */
  private sectionEvent(m: WorkerMember, ref: RingEventRef): WatchCacheEvent | undefined {
    const ev = this.skeletonOf(ref);
    return ev !== undefined && (!m.readsLabels || ref.skeletonLabels) ? ev : undefined;
  }

  /**
   * The event as far as a selection on name, namespace, labels and indexed fields can see it, built
   * from the payload's selection section without decoding any msgpack (once per pass); undefined
   * when the section is not exact for it (then the payload is decoded) or overwritten. Its objects
   * carry labels only where the section has them (skeletonLabels).
   */
  private skeletonOf(ref: RingEventRef): WatchCacheEvent | undefined {
    if (ref.skeleton !== undefined) return ref.skeleton ?? undefined;
    ref.skeleton = null;
    if (ref.decoded !== undefined) return undefined; // decoded already: use that
    // The selection section is all it needs: its location, then the section alone, copied out of the
    // ring (not the frame before it: a 2 KiB pod's whole payload cost this ~2x the rest of the skeleton).
    // One read of both was no faster (issue 13: label catch-up W = 1, 3 interleaved runs).
    const rec = this.record;
    if (this.reader.readPayloadBytes(ref.index, rec, 0, SELECTION_LOCATOR_BYTES) !== ReadStatus.OK) return undefined;
    const start = selectionStart(rec.payload);
    if (this.reader.readPayloadBytes(ref.index, rec, start, selectionLength(rec.payload)) !== ReadStatus.OK)
      return undefined;
    const sel = readSelectionSection(rec.payload, 0, this.indexerFields.length, this.interner);
    if (!sel.exact) return undefined;
    const object: KubeObject = { metadata: { namespace: sel.namespace, name: sel.name, labels: sel.labels } };
    (object as Indexed)[INDEXED_VALUES] = sel.values;
    let prevObject: KubeObject | undefined;
    if (ref.hasPrev) {
      prevObject = { metadata: { namespace: sel.namespace, name: sel.name, labels: sel.prevLabels } };
      (prevObject as Indexed)[INDEXED_VALUES] = sel.prevValues;
    }
    ref.skeletonLabels = sel.labelsExact;
    const trigger = this.triggerField === undefined ? undefined : this.indexers[this.triggerField];
    const ev = new WatchCacheEvent(eventTypeName(ref.type), object, prevObject, ref.rv, 0, trigger);
    ev.index = ref.index;
    ref.skeleton = ev;
    this.madeInPass.push(ref);
    return ev;
  }

  /** Decode a scanned event's payload once (per pass); undefined if it was overwritten meanwhile. */
  private decode(ref: RingEventRef): WatchCacheEvent | undefined {
    if (ref.decoded !== undefined) return ref.decoded ?? undefined;
    if (this.reader.read(ref.index, this.record) !== ReadStatus.OK) {
      ref.decoded = null;
      return undefined;
    }
    const bytes = this.record.payload.subarray(0, this.record.length);
    const rec = this.record;
    // The previous object: its frame as the slot's PREV words locate it (maybe in the payload that carried it).
    const { frame, prevObject } = decodeRingPayload(this.unpackr, rec.payload, rec.prevStart, rec.prevLength);
    if (this.indexerFields.length > 0) {
      const sel = readRingSelection(bytes, this.indexerFields.length);
      (frame.object as Indexed)[INDEXED_VALUES] = sel.values;
      if (prevObject !== undefined) (prevObject as Indexed)[INDEXED_VALUES] = sel.prevValues;
    }
    const trigger = this.triggerField === undefined ? undefined : this.indexers[this.triggerField];
    const ev = new WatchCacheEvent(frame.type, frame.object, prevObject, ref.rv, 0, trigger);
    ev.index = ref.index;
    this.decodes++;
    ref.decoded = ev;
    this.madeInPass.push(ref);
    return ev;
  }

  /** The last pass pushed something (its consumers are reading: room may come any moment). */
  lastPassPushed = false;

  private afterPass(stats: PassStats, done: (stats: PassStats) => void): void {
    this.publishAll(); // the last retry round's runs (in-process hosts)
    this.letGoOfEvents();
    // Entries of this pass no longer count (wrapping to 1 would meet stale stamps: clear them then).
    if (++this.scannedPass === 0x7fffffff) {
      this.scannedIn.fill(0);
      this.scannedPass = 1;
    }
    this.toldInCohort = false;
    this.lastPassPushed = stats.pushes > 0;
    // Hand back the members this pass served that are within the hand-off distance of the last
    // dispatched RV (only those: a pass costs nothing per member it did not serve).
    const last = this.resyncPoint();
    const endIdx = this.indexAfterResyncPoint(last);
    const h = this.options.handOffDistance;
    for (const m of this.servedInPass) {
      if (!m.accepting || !this.members.has(m.id)) continue;
      // RVs grow by at least one per event: an RV distance <= h bounds the event distance.
      const rvDistance = last - m.position;
      let remaining: number;
      if (rvDistance <= h) remaining = Math.max(0, rvDistance);
      else {
        const from = this.indexAfter(m.position);
        if (from === TOO_OLD || endIdx === TOO_OLD) continue;
        remaining = endIdx - from;
      }
      // Hand back only when the last few events fit in its channel, else it would bounce straight back.
      if (remaining <= h && m.free > 0 && m.free >= Math.min(remaining, m.capacity)) this.handBack(m);
    }
    this.servedInPass.clear();
    this.notifyPushed(true, this.endedInPass);
    this.endedInPass = false;
    done(stats);
    if (this.scheduler.allFull) {
      let min = Infinity;
      for (const m of this.members.values()) if (m.position < min) min = m.position;
      this.minPosition = min;
      this.onAllFull?.();
    }
  }

  /**
   * The pass (its retry rounds included) is over: nothing reads its decoded events or skeletons again
   * (the next pass refills an entry before using it), so none stays reachable from scannedRefs.
   */
  private letGoOfEvents(): void {
    const made = this.madeInPass;
    for (let i = 0; i < made.length; i++) {
      const ref = made[i]!;
      ref.decoded = undefined;
      ref.skeleton = undefined;
    }
    made.length = 0;
  }

  /** Entries holding a decoded event or skeleton now (tests: none once a pass has ended). */
  get eventsHeld(): number {
    let n = 0;
    for (const ref of this.scannedRefs) if (ref !== undefined && (ref.decoded || ref.skeleton)) n++;
    return n;
  }

  /** A member was handed back or expired since the last pass ended (its totals go out at the pass end). */
  private endedInPass = false;

  private handBack(m: WorkerMember): void {
    this.endedInPass = true;
    this.release(m);
    this.send({
      op: 'handback',
      id: m.id,
      position: m.position,
      passPushes: m.cursor.passPushes,
      totals: this.totals(),
    });
  }

  /** Give the channel back to the main thread (it is the only writer from now on). */
  private release(m: WorkerMember): void {
    this.members.delete(m.id);
    m.removed = true;
    this.publish(m); // its pushes, then its position, before the role goes (and before the message names it)
    m.channel.handOff(WriterOwner.SYNC_WORKER, WriterOwner.MAIN);
  }
}
