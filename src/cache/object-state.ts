/**
 * ObjectState: the cache's current objects (key -> object), the source of
 * lists, gets and the initial ADDED events of a watch.
 *
 * Keys are `namespace/name`; lists come out in key order (a sorted key array,
 * rebuilt lazily only after an add or a delete). Objects are immutable once
 * stored, so the initial ADDED event of an object is made once and shared by
 * every watch that starts while it is current (encode once, also for replays).
 */
import { objectKey, objectRV, type KubeObject } from '../core/types.js';
import { WatchEvent } from '../wire/watch-event.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import { PendingFrame, type FrameSource } from '../wire/frame-source.js';

interface Entry {
  object: KubeObject;
  added: WatchEvent | undefined;
  /**
   * The msgpack wire frame `{type, object}` that carried this object (beta reuses it as the next event's
   * previous object), or the frame beta's deferred mirror will make (src/wire/frame-source.ts).
   */
  frame: FrameSource | undefined;
}

export class ObjectState {
  private readonly entries = new Map<string, Entry>();
  private sorted: string[] | undefined = [];

  get size(): number {
    return this.entries.size;
  }

  replace(items: readonly KubeObject[]): void {
    this.entries.clear();
    for (const object of items) {
      this.entries.set(objectKey(object.metadata.namespace ?? '', object.metadata.name ?? ''), {
        object,
        added: undefined,
        frame: undefined,
      });
    }
    this.sorted = undefined;
  }

  /** Apply an event; `frame` is its msgpack wire frame when one was made or will be (beta). */
  apply(event: WatchCacheEvent, frame?: FrameSource): void {
    const key = objectKey(event.namespace, event.name);
    if (event.type === 'DELETED') {
      if (this.entries.delete(key)) this.sorted = undefined;
      return;
    }
    const existing = this.entries.get(key);
    if (existing === undefined) {
      this.entries.set(key, { object: event.object, added: undefined, frame });
      this.sorted = undefined;
    } else {
      existing.object = event.object;
      existing.added = undefined;
      existing.frame = frame;
    }
  }

  /**
   * A msgpack frame `{type, object}` of the current object under `key`,
   * made once (by `encode` when no event has carried it yet) and kept: its
   * bytes, or the pending frame that will hold them (beta's deferred mirror).
   */
  frameOf(namespace: string, name: string, encode: (object: KubeObject) => FrameSource): FrameSource | undefined {
    const entry = this.entries.get(objectKey(namespace, name));
    if (entry === undefined) return undefined;
    const f = entry.frame;
    if (f instanceof PendingFrame && f.bytes !== undefined) return (entry.frame = f.bytes); // made since: keep the bytes only
    return (entry.frame = f ?? encode(entry.object));
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.entries.get(objectKey(namespace, name))?.object;
  }

  /** Keys in list order. */
  keys(): readonly string[] {
    if (this.sorted === undefined) this.sorted = [...this.entries.keys()].sort();
    return this.sorted;
  }

  /** Objects in key order. */
  *objects(): IterableIterator<KubeObject> {
    for (const key of this.keys()) yield this.entries.get(key)!.object;
  }

  /** The shared initial ADDED event for the current object under `key`. */
  addedEvent(key: string): WatchEvent | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    return (entry.added ??= new WatchEvent('ADDED', entry.object, objectRV(entry.object)));
  }

  /**
   * The objects as they were at `rv`, from the current state and the history
   * events after `rv` (undone newest first). The caller guarantees that every
   * event after `rv` is still in `eventsAfter`.
   */
  stateAt(eventsAfter: readonly WatchCacheEvent[]): Map<string, KubeObject> {
    const state = new Map<string, KubeObject>();
    for (const [key, entry] of this.entries) state.set(key, entry.object);
    for (let i = eventsAfter.length - 1; i >= 0; i--) {
      const ev = eventsAfter[i]!;
      const key = objectKey(ev.namespace, ev.name);
      if (ev.type === 'ADDED') state.delete(key);
      else if (ev.prevObject !== undefined) state.set(key, ev.prevObject);
    }
    return state;
  }
}

/** A state key `namespace/name` back into its two parts. */
export function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}
