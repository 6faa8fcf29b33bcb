/**
 * WorkerSelectionSpecs: the selections the sync worker knows, each by a number
 * (issue 13, deliverable 1). Indexer functions cannot cross threads, so the
 * worker rebuilds a watcher's selection from its spec (namespace, name and
 * the two selectors as strings). Sent once per distinct spec instead of once
 * per watcher, a watcher's introduction is a row of numbers: 10,000 watchers
 * that select the same thing cost one spec and no string per watcher.
 *
 * Not src/selection/selection-table.ts (the main thread's shared Selection
 * objects, one per distinct request, for the live path): this table names
 * specs for the worker, one per distinct Selection that table handed out. Counted: a spec stays in the table (and in the
 * worker's copy) while some introduced watcher uses it; the last one's
 * forget drops it, so watchers that each select one name leave nothing
 * behind. Ids are never reused, so a drop can never hit a newer spec that
 * got the same number.
 */
import type { Selection } from '../selection/selection.js';
import type { SelectionSpec } from './sync-messages.js';

/** The spec of a selection that picks everything (no scope, no selectors). */
const EVERYTHING: SelectionSpec = { namespace: '', name: '', labelSelector: '', fieldSelector: '' };

export class WorkerSelectionSpecs {
  /**
   * Keyed on the Selection object: the cache's SelectionTable gives every watcher of one request the
   * same Selection, so a registration looks up one pointer and builds no string (a spec is built only
   * for a selection the worker has not been sent).
   */
  private readonly bySelection = new Map<Selection, number>();
  private readonly byId = new Map<number, { selection: Selection; users: number }>();
  private next = 1;
  /** Specs the worker has not been sent yet, in the order they were added. */
  private added: { id: number; spec: SelectionSpec }[] = [];
  /** Ids whose last user went away since the last `takeDropped`. */
  private dropped: number[] = [];

  /** Distinct specs in use (tests). */
  get size(): number {
    return this.byId.size;
  }

  /** One more introduced watcher uses `selection`: its spec's id (a new spec is queued for the worker). */
  use(selection: Selection): number {
    const known = this.bySelection.get(selection);
    if (known !== undefined) {
      this.byId.get(known)!.users++;
      return known;
    }
    const id = this.next++;
    this.bySelection.set(selection, id);
    this.byId.set(id, { selection, users: 1 });
    this.added.push({ id, spec: specOf(selection) });
    return id;
  }

  /** A watcher that used `id` was forgotten: the spec is dropped with its last user. */
  release(id: number): void {
    const entry = this.byId.get(id);
    if (entry === undefined || --entry.users > 0) return;
    this.byId.delete(id);
    this.bySelection.delete(entry.selection);
    this.dropped.push(id);
  }

  /** Specs to send before the introductions that refer to them (empty: nothing new). */
  takeAdded(): { id: number; spec: SelectionSpec }[] {
    const a = this.added;
    if (a.length > 0) this.added = [];
    return a;
  }

  /** Ids to drop, after the forgets that released them. */
  takeDropped(): number[] {
    const d = this.dropped;
    if (d.length > 0) this.dropped = [];
    return d;
  }

  /** A new worker knows no spec: start over (ids keep counting up). */
  clear(): void {
    this.bySelection.clear();
    this.byId.clear();
    this.added = [];
    this.dropped = [];
  }
}

/** What the worker needs to rebuild `selection` (the selectors as their canonical strings). */
export function specOf(selection: Selection): SelectionSpec {
  if (selection.everything) return EVERYTHING;
  return {
    namespace: selection.namespace,
    name: selection.name,
    labelSelector: selection.labels.toString(),
    fieldSelector: selection.fields.toString(),
  };
}
