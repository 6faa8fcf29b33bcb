/**
 * WatchCacheEvent: one change as the history keeps it. Immutable once built.
 *
 * Everything selection needs is computed once here, on the history object
 * (KEP "Sync pass" step 3): the scope keys used by dispatch routing and the
 * trigger values of the new and the previous object. The three forms a watcher
 * may receive (as is, ADDED on entering a selection, DELETED on leaving it)
 * are made on first use and shared by every watcher: one wrap per event.
 */
import type { ChangeType, IndexerFunc, KubeObject } from '../core/types.js';
import { WatchEvent } from '../wire/watch-event.js';
import { Delivery } from '../selection/selection.js';

export class WatchCacheEvent {
  readonly type: ChangeType;
  /** New state (DELETED: the last state, carrying the deletion RV). */
  readonly object: KubeObject;
  readonly prevObject: KubeObject | undefined;
  readonly rv: number;
  /** Clock time the cache recorded the event (drives history resizing). */
  readonly recordTime: number;
  readonly namespace: string;
  readonly name: string;
  /** Trigger index values of the new and previous object ('' when absent or no trigger index). */
  readonly triggerValue: string;
  readonly prevTriggerValue: string;
  /** Absolute index in the history (set once when appended; -1 before). */
  index = -1;
  #asIs: WatchEvent | undefined;
  #added: WatchEvent | undefined;
  #deleted: WatchEvent | undefined;

  constructor(
    type: ChangeType,
    object: KubeObject,
    prevObject: KubeObject | undefined,
    rv: number,
    recordTime: number,
    trigger: IndexerFunc | undefined,
  ) {
    this.type = type;
    this.object = object;
    this.prevObject = prevObject;
    this.rv = rv;
    this.recordTime = recordTime;
    this.namespace = object.metadata.namespace ?? '';
    this.name = object.metadata.name ?? '';
    this.triggerValue = trigger === undefined ? '' : (trigger(object) ?? '');
    this.prevTriggerValue = trigger === undefined || prevObject === undefined ? '' : (trigger(prevObject) ?? '');
  }

  /** The shared event a watcher receives for `delivery` (never Delivery.None). */
  deliver(delivery: Delivery): WatchEvent {
    // The live path asks for every watcher: the form already made is a few bytecodes that V8 inlines into
    // the dispatch loop; making one (once per event and form) is `make`, kept out of line so that its
    // constructor does not spend the loop's inlining budget (the channel's push then stayed a call).
    const made = delivery === Delivery.Added ? this.#added : delivery === Delivery.Deleted ? this.#deleted : this.#asIs;
    return made ?? this.make(delivery);
  }

  /** The shared form for `delivery`, made on first use (deliver). */
  private make(delivery: Delivery): WatchEvent {
    switch (delivery) {
      case Delivery.Added:
        return (this.#added ??= new WatchEvent('ADDED', this.object, this.rv, this.index, Delivery.Added));
      case Delivery.Deleted:
        return (this.#deleted ??= new WatchEvent(
          'DELETED',
          withRV(this.prevObject ?? this.object, this.rv),
          this.rv,
          this.index,
          Delivery.Deleted,
        ));
      default:
        return (this.#asIs ??= new WatchEvent(this.type, this.object, this.rv, this.index, Delivery.AsIs));
    }
  }

  /** How many shared forms have been made so far (the "one wrap per selected event" check). */
  get wraps(): number {
    return (this.#asIs ? 1 : 0) + (this.#added ? 1 : 0) + (this.#deleted ? 1 : 0);
  }
}

/** A shallow copy of `object` with metadata.resourceVersion = rv. */
function withRV(object: KubeObject, rv: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } };
}
