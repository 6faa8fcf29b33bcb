/**
 * SelectionTable: a cache's watch selections, one Selection per distinct
 * request (namespace, name, label selector and field selector, as the client
 * spelled them), shared by every watcher that made it and released when the
 * last of them ends.
 *
 * Sharing is what makes the live path's classification once per (event,
 * distinct selection): a Selection answers `deliveryFor` for the event it saw
 * last from its memo, and the watchers of one dispatch bucket read one object
 * instead of one each (issue 13: at 10,000 watchers selecting the same thing,
 * one cache line per watcher and event less). A Selection is immutable in
 * what it selects, so sharing it changes nothing a watcher receives
 * (invariant 4: the registration-time selection decides).
 */
import type { Indexers } from './field-selector.js';
import { Selection, type SelectionInput } from './selection.js';

interface Entry {
  readonly key: string;
  readonly selection: Selection;
  users: number;
}

export class SelectionTable {
  private readonly byKey = new Map<string, Entry>();
  private readonly bySelection = new Map<Selection, Entry>();
  private readonly indexers: Indexers;
  private readonly triggerField: string | undefined;

  constructor(indexers: Indexers, triggerField: string | undefined) {
    this.indexers = indexers;
    this.triggerField = triggerField;
  }

  /** The Selection for `input`, shared with every other user of the same request (throws on a bad selector). */
  acquire(input: SelectionInput): Selection {
    // The request as given: two spellings of one selection get two Selections (never one for two meanings).
    const key = JSON.stringify([
      input.namespace ?? null,
      input.name ?? null,
      input.labelSelector ?? null,
      input.fieldSelector ?? null,
    ]);
    let e = this.byKey.get(key);
    if (e === undefined) {
      e = { key, selection: new Selection(input, this.indexers, this.triggerField), users: 0 };
      this.byKey.set(key, e);
      this.bySelection.set(e.selection, e);
    }
    e.users++;
    return e.selection;
  }

  /** One user of `selection` is gone; the last one lets it go. */
  release(selection: Selection): void {
    const e = this.bySelection.get(selection);
    if (e === undefined || --e.users > 0) return;
    this.byKey.delete(e.key);
    this.bySelection.delete(selection);
  }
}
