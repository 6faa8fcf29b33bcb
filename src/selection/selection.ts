/**
 * A watcher's (or list's) selection, computed once at registration and never
 * changed afterwards: namespace and name scope, label and field selectors, and
 * the trigger value when the field selector pins the trigger index.
 *
 * Invariant 4 (Selection) of KEP-6268: the live path and the sync pass both
 * decide what a watcher receives with `classify` on this one immutable copy,
 * so a pass offers exactly what live dispatch would have offered.
 */
import type { KubeObject } from '../core/types.js';
import { type FieldSelector, parseFieldSelector, type Indexers } from './field-selector.js';
import { type LabelSelector, parseLabelSelector } from './label-selector.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { WatchEvent } from '../wire/watch-event.js';

/** What a watcher receives for one event (see `Selection.classify`). */
export const enum Delivery {
  /** Nothing: the watcher does not select the event. */
  None = 0,
  /** The event as it is (ADDED, MODIFIED or DELETED). */
  AsIs = 1,
  /** The object entered the selection: ADDED carrying the new object. */
  Added = 2,
  /** The object left the selection: DELETED carrying the previous object at the event's RV. */
  Deleted = 3,
}

export interface SelectionInput {
  namespace?: string | undefined;
  name?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

export class Selection {
  /** Namespace scope ('' = all namespaces). */
  readonly namespace: string;
  /** Name scope ('' = all names). */
  readonly name: string;
  readonly labels: LabelSelector;
  readonly fields: FieldSelector;
  /** The trigger index value the field selector pins, when the cache has a trigger index. */
  readonly triggerValue: string | undefined;
  private readonly indexers: Indexers;
  /**
   * The selectors' emptiness and `everything`, read once here: the live path asks for every watcher and
   * event, and these fields sit in this object (the selectors' own answer is two objects away each).
   */
  private readonly labelsEmpty: boolean;
  private readonly fieldsEmpty: boolean;
  private readonly all: boolean;
  /** `deliveryFor`'s and `formFor`'s memo: the last event they answered, and the answers. */
  private lastEvent: WatchCacheEvent | undefined = undefined;
  private lastDelivery: Delivery = Delivery.None;
  private lastForm: WatchEvent | undefined = undefined;

  constructor(input: SelectionInput, indexers: Indexers, triggerField: string | undefined) {
    this.labels = parseLabelSelector(input.labelSelector);
    this.fields = parseFieldSelector(input.fieldSelector);
    this.indexers = indexers;
    this.namespace = input.namespace ?? this.fields.exactValue('metadata.namespace') ?? '';
    this.name = input.name ?? this.fields.exactValue('metadata.name') ?? '';
    this.triggerValue = triggerField === undefined ? undefined : this.fields.exactValue(triggerField);
    this.labelsEmpty = this.labels.empty;
    this.fieldsEmpty = this.fields.empty;
    this.all = this.namespace === '' && this.name === '' && this.labelsEmpty && this.fieldsEmpty;
  }

  /** True when the selection picks out everything (no scope, no selectors). */
  get everything(): boolean {
    return this.all;
  }

  matches(object: KubeObject): boolean {
    if (this.all) return true;
    const meta = object.metadata;
    if (this.namespace !== '' && (meta.namespace ?? '') !== this.namespace) return false;
    if (this.name !== '' && meta.name !== this.name) return false;
    if (!this.labelsEmpty && !this.labels.matches(meta.labels)) return false;
    return this.fieldsEmpty || this.fields.matches(object, this.indexers);
  }

  /**
   * `classify(event)` for a history event on the main thread (an immutable WatchCacheEvent, one object per
   * event), remembered for the last event: the watchers sharing this Selection (SelectionTable) are
   * classified once per event. Not for events whose object is reused (the sync worker's decoded
   * skeletons): those call `classify`.
   */
  deliveryFor(event: WatchCacheEvent): Delivery {
    // One return, after the miss branch: a selection with one watcher misses on every event, so a return
    // of its own on the hit path would have no type feedback when many watchers come to share the
    // selection, and its first hit would deoptimize the whole dispatch loop mid-event (issue 13).
    if (event !== this.lastEvent) this.remember(event);
    return this.lastDelivery;
  }

  /**
   * What this selection receives for `event` as the form it is pushed in, `event.deliver(deliveryFor(event))`
   * (undefined: nothing), remembered with `deliveryFor`'s answer: the live path's offer asks for every
   * watcher, and the form then costs one load from this object (shared by the watchers: in cache) rather
   * than a call of `deliver` per watcher (it is too big for V8 to inline into the dispatch loop once the
   * consumers' pops have optimized it on its own; issue 13). Same events as `deliveryFor`.
   */
  formFor(event: WatchCacheEvent): WatchEvent | undefined {
    if (event !== this.lastEvent) this.remember(event);
    return this.lastForm;
  }

  /** The memo's miss: classify `event` once, for every watcher sharing this selection. */
  private remember(event: WatchCacheEvent): void {
    const d = this.classify(event);
    this.lastDelivery = d;
    this.lastForm = d === Delivery.None ? undefined : event.deliver(d);
    this.lastEvent = event;
  }

  /**
   * What this selection receives for `event`, as the Kubernetes cacher decides
   * it per watcher: new matches and old does not -> ADDED; both -> as is;
   * old only -> DELETED with the previous object; neither -> nothing.
   */
  classify(event: WatchCacheEvent): Delivery {
    if (event.type === 'DELETED') {
      return this.matches(event.prevObject ?? event.object) ? Delivery.AsIs : Delivery.None;
    }
    const now = this.matches(event.object);
    if (event.type === 'ADDED' || event.prevObject === undefined) {
      return now ? (event.type === 'ADDED' ? Delivery.AsIs : Delivery.Added) : Delivery.None;
    }
    const before = this.matches(event.prevObject);
    if (now) return before ? Delivery.AsIs : Delivery.Added;
    return before ? Delivery.Deleted : Delivery.None;
  }
}

export { parseFieldSelector, parseLabelSelector };
