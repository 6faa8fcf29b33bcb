/**
 * The model: the linearized write history as the store committed it, and
 * what a watch session must receive according to it (Kubernetes semantics:
 * selector transitions become ADDED / DELETED, DELETED carries the previous
 * object at the event's RV).
 */
import type { KubeObject, StoreEvent } from '../../src/index.js';
import { Selection } from '../../src/selection/selection.js';
import type { IndexerFunc } from '../../src/core/types.js';

export interface Expected {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  /** metadata.resourceVersion of the delivered object. */
  rv: number;
  /** The RV this event stands at in the stream (initial ADDED: the snapshot RV). */
  streamRV: number;
}

export function keyOf(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

export class WriteHistory {
  readonly log: StoreEvent[] = [];
  private readonly indexers: Record<string, IndexerFunc>;
  private readonly trigger: string | undefined;
  constructor(indexers: Record<string, IndexerFunc>) {
    this.indexers = indexers;
    this.trigger = Object.keys(indexers)[0];
  }

  record(event: StoreEvent): void {
    const last = this.log[this.log.length - 1];
    if (last !== undefined && event.resourceVersion <= last.resourceVersion)
      throw new Error(`store history not increasing at ${event.resourceVersion}`);
    this.log.push(event);
  }

  get lastRV(): number {
    return this.log.length === 0 ? 0 : this.log[this.log.length - 1]!.resourceVersion;
  }

  selection(input: { namespace?: string; labelSelector?: string; fieldSelector?: string }): Selection {
    return new Selection(input, this.indexers, this.trigger);
  }

  /** Objects at `rv`, in key order. */
  stateAt(rv: number): KubeObject[] {
    const state = new Map<string, KubeObject>();
    for (const ev of this.log) {
      if (ev.resourceVersion > rv) break;
      if (ev.type === 'DELETED') state.delete(keyOf(ev.object));
      else state.set(keyOf(ev.object), ev.object);
    }
    return [...state.keys()].sort().map((k) => state.get(k)!);
  }

  /** Live events after `rv` that `sel` receives. */
  liveAfter(rv: number, sel: Selection): Expected[] {
    const out: Expected[] = [];
    for (const ev of this.log) {
      if (ev.resourceVersion <= rv) continue;
      const now = ev.type === 'DELETED' ? false : sel.matches(ev.object);
      const before = ev.prevObject !== undefined && sel.matches(ev.prevObject);
      const key = keyOf(ev.object);
      const r = ev.resourceVersion;
      if (ev.type === 'DELETED') {
        if (before) out.push({ type: 'DELETED', key, rv: r, streamRV: r });
      } else if (now && before) out.push({ type: ev.type === 'ADDED' ? 'ADDED' : 'MODIFIED', key, rv: r, streamRV: r });
      else if (now) out.push({ type: 'ADDED', key, rv: r, streamRV: r });
      else if (before) out.push({ type: 'DELETED', key, rv: r, streamRV: r });
    }
    return out;
  }

  /** The initial ADDED events of a state start at snapshot `s`. */
  initialAt(s: number, sel: Selection): Expected[] {
    return this.stateAt(s)
      .filter((o) => sel.matches(o))
      .map((o) => ({ type: 'ADDED' as const, key: keyOf(o), rv: Number(o.metadata.resourceVersion), streamRV: s }));
  }
}
