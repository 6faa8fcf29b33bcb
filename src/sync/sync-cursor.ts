/**
 * SyncCursor: one watcher's KEP "Per-watcher state" (position, start
 * position, the unsynced flags, pushes by passes), touched only through
 * these methods. The live path, the passes and the hand-back all move a
 * watcher through its cursor; nothing else writes it.
 *
 * The position and the consumer's "drained since its last service" flag live
 * in the cursor cell, `cell` (layout: src/protocol/cursor-cell.ts): a plain
 * array in off and alpha, the watcher's shared cell in beta, so the main
 * thread and the sync worker read and write the one copy.
 *
 * The other flags are per thread: each side keeps its own view of its
 * membership (the worker's member is new on every adopt).
 *
 * The main thread's watcher cursor (`keepsPosition`) holds the position in a
 * field of its own while the watcher is synced: then the main thread is the
 * position's only writer (the channel's writer side is its own; it hands that
 * to the sync worker only after markUnsynced), so the live path reads and
 * writes one field of this object and never touches the cell (issue 13: at
 * 10,000 watchers the cell's cache line was the dispatch loop's largest
 * cost). markUnsynced publishes the position into the cell before any other
 * side may read it; markSynced, called once this thread owns the writer side
 * again, takes it back from the cell.
 *
 * The sync worker's member cursor holds the position the same way
 * (holdPosition): its pushes become visible to the consumer only when the
 * channel publishes them (SpscChannel.publishPushes), so the cell, which
 * outlives the worker, must not run ahead of what the channel published.
 * The worker writes the cell once per publication (publishPosition), after
 * it, not once per push.
 *
 * A Watcher is its own main-thread cursor (it extends this class, so these
 * fields are the first of the watcher object: the live path reads the
 * watcher's state and its position in one object, not through a second one;
 * issue 13). The five flags share one small-integer word (`flags`), so the
 * live path's "unsynced?" and "local position?" tests are one load and a
 * bit test each, not a boolean's truthiness check per field.
 */
import { CELL_DRAINED, CELL_POSITION, CELL_SLOTS } from '../protocol/cursor-cell.js';

// The bits of `flags` (a Smi: one load, a bit test; see the module doc).
/** keepsPosition and synced, or held (holdPosition): the position is `pos`, not the cell's. */
const LOCAL = 1;
const UNSYNCED = 2;
const NEW_UNSYNCED = 4;
const JOIN_PENDING = 8;
/** The main thread's cursor of a watcher (constructor's `keepsPosition`). */
const KEEPS_POSITION = 16;

export class SyncCursor {
  // Field order is layout: what the live path reads and writes per event comes first.
  /** LOCAL | UNSYNCED | NEW_UNSYNCED | JOIN_PENDING | KEEPS_POSITION. */
  private flags = 0;
  /** The position while LOCAL (the cell's slot 0 is then stale). */
  private pos = 0;
  /** Slot 0: position; slot 1: drained flag (shared with the sync worker in beta). */
  readonly cell: Float64Array;
  #start = 0;
  #passPushes = 0;

  /**
   * `keepsPosition`: this is the main thread's cursor of a watcher (see the module doc); every other
   * side (the sync worker's member, a remote consumer) reads and writes the cell.
   */
  constructor(cell: Float64Array = new Float64Array(CELL_SLOTS), keepsPosition = false) {
    if (cell.length < CELL_SLOTS) throw new RangeError(`a cursor cell needs ${CELL_SLOTS} slots, got ${cell.length}`);
    this.cell = cell;
    this.flags = keepsPosition ? KEEPS_POSITION | LOCAL : 0;
    this.pos = cell[CELL_POSITION]!;
  }

  /** Invariant 1: every event it must see with RV <= position is in its channel or initial replay. */
  get position(): number {
    // Small enough for V8 to inline wherever it is read (the live path reads it for every watcher and event):
    // a truthiness test of the bit and slot 0 (CELL_POSITION) as a literal, not a module binding's load.
    return this.flags & LOCAL ? this.pos : this.cell[0]!;
  }
  /** Where it started: live events at or below it are the normal start overlap, not skips. */
  get startPosition(): number {
    return this.#start;
  }
  get unsynced(): boolean {
    return (this.flags & UNSYNCED) !== 0;
  }
  /** New to the unsynced set since its last service (candidate order key 2). */
  get newUnsynced(): boolean {
    return (this.flags & NEW_UNSYNCED) !== 0;
  }
  /** The consumer emptied its channel since the last service (candidate order key 2). */
  get drainedSinceService(): boolean {
    return this.cell[CELL_DRAINED] === 1;
  }
  /** Unsynced, and not yet a member of its set: beta's chunked stall hand-over (src/beta/stall-hand-over.ts). */
  get joinPending(): boolean {
    return (this.flags & JOIN_PENDING) !== 0;
  }
  /** Events pushed by passes since it went unsynced. */
  get passPushes(): number {
    return this.#passPushes;
  }

  /** The watch starts here (activation). */
  startAt(position: number): void {
    this.accepted(position);
    this.#start = position;
  }
  /** Invariant 1: an accepted event (or bookmark) at `rv` moves the position to it. */
  accepted(rv: number): void {
    if ((this.flags & LOCAL) !== 0) this.pos = rv;
    else this.cell[CELL_POSITION] = rv;
  }
  /** The position reaches at least `rv` (never goes back). */
  raiseTo(rv: number): void {
    if (rv > this.position) this.accepted(rv);
  }
  /** Invariant 1: a failed push of `rv` leaves the position at most rv - 1, never lower than before. */
  missed(rv: number): void {
    this.raiseTo(rv - 1);
  }
  /** Enter the unsynced set; false when it already was unsynced. */
  markUnsynced(): boolean {
    const f = this.flags;
    if ((f & UNSYNCED) !== 0) return false;
    if ((f & LOCAL) !== 0) {
      // Invariant 1 (position): published before the writer side (and with it the position) may move on.
      this.cell[CELL_POSITION] = this.pos;
    }
    this.flags = (f & ~LOCAL) | UNSYNCED | NEW_UNSYNCED;
    this.#passPushes = 0;
    return true;
  }
  /**
   * Failed live pushes of `rv` (X) in beta's mass stall, for the cursors of `full[0..count)` in one call:
   * each position at X - 1 at most (as `missed`), unsynced, waiting to join its set (as `markUnsynced`,
   * plus JOIN_PENDING; UnsyncedSet.markStalled). Each one that was synced is appended to `into`; one
   * already unsynced keeps its flags (only its position moves). Returns how many were appended.
   *
   * One flat loop with no call per cursor (the array store of the append aside): it runs when 10,000
   * channels fill on one event, and that is its first run, in the interpreter, where each call of the
   * per-watcher methods (missed, raiseTo, position, accepted, markUnsynced) cost more than all its
   * stores (issue 13). Beta passes the main thread's cursors (`keepsPosition`); any other cursor moves
   * as `missed` and `markUnsynced` would move it.
   */
  static stallAll<C extends SyncCursor>(
    full: readonly (C | undefined)[],
    count: number,
    rv: number,
    into: (C | undefined)[],
  ): number {
    const missed = rv - 1;
    let n = into.length;
    const from = n;
    for (let i = 0; i < count; i++) {
      const c = full[i]!;
      const f = c.flags;
      if ((f & LOCAL) !== 0) {
        // Invariant 1 (position): at most X - 1, never lower (as `missed`)...
        const pos = missed > c.pos ? missed : c.pos;
        if ((f & UNSYNCED) !== 0) {
          c.pos = pos; // a held position (not a synced watcher's main-thread cursor)
          continue;
        }
        // ...published to the cell before the writer side (and with it the position) may move on (as markUnsynced).
        c.cell[0] = pos;
      } else {
        const cell = c.cell;
        if (missed > cell[0]!) cell[0] = missed; // invariant 1 (position), as `missed`
        if ((f & UNSYNCED) !== 0) continue;
      }
      c.flags = (f & ~LOCAL) | UNSYNCED | NEW_UNSYNCED | JOIN_PENDING;
      c.#passPushes = 0;
      into[n++] = c;
    }
    return n - from;
  }
  /** Set while it waits to join its unsynced set (UnsyncedSet only). */
  setJoinPending(pending: boolean): void {
    this.flags = pending ? this.flags | JOIN_PENDING : this.flags & ~JOIN_PENDING;
  }
  /** Back on the live path. */
  markSynced(): void {
    const f = this.flags & ~UNSYNCED;
    if ((f & KEEPS_POSITION) !== 0 && (f & LOCAL) === 0) {
      this.pos = this.cell[CELL_POSITION]!; // this thread owns the writer side again: the last position is the cell's
      this.flags = f | LOCAL;
    } else this.flags = f;
  }
  /**
   * Keep the position in this object from now on; the cell keeps the last
   * published one (see the module doc: the sync worker's member). Not for
   * the main thread's cursor (`keepsPosition`), which holds it while synced.
   */
  holdPosition(): void {
    const f = this.flags;
    if ((f & KEEPS_POSITION) !== 0) throw new Error('sync cursor: the main thread keeps its position while synced');
    if ((f & LOCAL) !== 0) return;
    this.pos = this.cell[CELL_POSITION]!;
    this.flags = f | LOCAL;
  }
  /**
   * Invariant 1 (position) across threads: write the held position to the
   * cell, after the channel published every push it covers (never before:
   * the cell outlives the worker, and a position past the published pushes
   * would be a gap after a restart).
   */
  publishPosition(): void {
    if ((this.flags & (LOCAL | KEEPS_POSITION)) === LOCAL) this.cell[CELL_POSITION] = this.pos;
  }
  /** A pass pushed one event. */
  pushedByPass(): void {
    this.#passPushes++;
  }
  /** The worker counted `n` pass pushes for this episode (hand-back). */
  setPassPushes(n: number): void {
    this.#passPushes = n;
  }
  /** A pass served it: both "new" and "drained" are spent. */
  served(): void {
    this.flags &= ~NEW_UNSYNCED;
    this.cell[CELL_DRAINED] = 0;
  }
  /** The consumer emptied its channel. */
  drained(): void {
    this.cell[CELL_DRAINED] = 1;
  }
}
