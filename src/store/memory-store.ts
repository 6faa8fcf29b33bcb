/**
 * MemoryStore: the embedded, in-process backing store (API.md "Stores").
 *
 * - One RV per write; an empty store is at RV 0 and the first write gets 1.
 * - create: 409 AlreadyExists for a duplicate name; sets metadata.uid and
 *   creationTimestamp. update keeps them; a given metadata.resourceVersion must
 *   match the stored one (409 Conflict); a missing object is 404.
 * - delete returns the last state with metadata.resourceVersion = the deletion
 *   RV: exactly what the DELETED event carries.
 * - watch(afterRV) replays the kept log after afterRV, then streams live.
 *   Events are delivered asynchronously (one microtask per write burst), in RV
 *   order, like a real store's watch stream. compact(rv) drops the log below rv;
 *   a watch from below the compacted RV fails with StoreCompactedError.
 */
import { randomUUID } from 'node:crypto';
import { realClock, type Clock } from '../core/clock.js';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.js';
import {
  objectKey,
  type KubeObject,
  type Store,
  type StoreEvent,
  type StoreListResult,
  type StoreWatch,
} from '../core/types.js';
import { StoreCompactedError } from './store-errors.js';
import { checkPrecondition, identify } from './write-preconditions.js';

interface Subscriber {
  nextIndex: number; // index into `log` of the next event to deliver
  onEvent: (event: StoreEvent) => void;
  onError: (error: Error) => void;
  stopped: boolean;
}

export interface MemoryStoreOptions {
  clock?: Clock;
  /** Kind used in NotFound messages (default Pod). */
  kind?: string;
}

export class MemoryStore implements Store {
  private readonly objects = new Map<string, KubeObject>();
  /** Change log, oldest first; log[i].resourceVersion === logBase + i + 1 is NOT assumed (compaction). */
  private log: StoreEvent[] = [];
  private rv = 0;
  private compactedRV = 0;
  private readonly subscribers = new Set<Subscriber>();
  private flushScheduled = false;
  private readonly clock: Clock;
  private readonly kind: string;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.kind = options.kind ?? 'Pod';
  }

  /** The RV of the last write (0 for an empty store). */
  get resourceVersion(): number {
    return this.rv;
  }

  async currentResourceVersion(): Promise<number> {
    return this.rv;
  }

  async list(): Promise<StoreListResult> {
    const keys = [...this.objects.keys()].sort();
    return { items: keys.map((k) => this.objects.get(k)!), resourceVersion: this.rv };
  }

  async get(namespace: string, name: string): Promise<KubeObject> {
    const obj = this.objects.get(objectKey(namespace, name));
    if (obj === undefined) throw new NotFoundError(this.kind, name);
    return obj;
  }

  async create(object: KubeObject): Promise<KubeObject> {
    const { namespace, name } = identify(object);
    const key = objectKey(namespace, name);
    if (this.objects.has(key)) {
      throw new ConflictError('AlreadyExists', `${this.kind.toLowerCase()}s "${name}" already exists`, name);
    }
    const rv = this.rv + 1;
    const stored = stamp(object, rv, {
      uid: randomUUID(),
      creationTimestamp: new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    this.commit(key, { type: 'ADDED', object: stored, resourceVersion: rv });
    return stored;
  }

  async update(object: KubeObject): Promise<KubeObject> {
    const { namespace, name } = identify(object);
    const key = objectKey(namespace, name);
    const prev = this.objects.get(key);
    if (prev === undefined) throw new NotFoundError(this.kind, name);
    checkPrecondition(object.metadata.resourceVersion, prev, name, 'update');
    const rv = this.rv + 1;
    const stored = stamp(object, rv, {
      uid: prev.metadata.uid,
      creationTimestamp: prev.metadata.creationTimestamp,
    });
    this.commit(key, { type: 'MODIFIED', object: stored, prevObject: prev, resourceVersion: rv });
    return stored;
  }

  /** Delete; `resourceVersion`, when given, must match the stored object's (409 Conflict). */
  async delete(namespace: string, name: string, options: { resourceVersion?: string } = {}): Promise<KubeObject> {
    const key = objectKey(namespace, name);
    const prev = this.objects.get(key);
    if (prev === undefined) throw new NotFoundError(this.kind, name);
    checkPrecondition(options.resourceVersion, prev, name, 'delete');
    const rv = this.rv + 1;
    const last: KubeObject = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rv) } };
    this.commit(key, { type: 'DELETED', object: last, prevObject: prev, resourceVersion: rv });
    return last;
  }

  /** Drop the change log at and below `rv`: later watches from below it fail as compacted. */
  compact(rv: number): void {
    if (!Number.isSafeInteger(rv) || rv < 0) throw new BadRequestError(`invalid compaction revision ${rv}`);
    const target = Math.min(rv, this.rv);
    if (target <= this.compactedRV) return;
    this.compactedRV = target;
    let drop = 0;
    while (drop < this.log.length && this.log[drop]!.resourceVersion <= target) drop++;
    this.log = this.log.slice(drop);
    for (const sub of this.subscribers) sub.nextIndex = Math.max(0, sub.nextIndex - drop);
  }

  watch(afterRV: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void): StoreWatch {
    const sub: Subscriber = { nextIndex: 0, onEvent, onError, stopped: false };
    if (afterRV < this.compactedRV) {
      queueMicrotask(() => {
        if (!sub.stopped) onError(new StoreCompactedError(afterRV, this.compactedRV));
      });
      return { stop: () => void (sub.stopped = true) };
    }
    // First log entry with RV > afterRV.
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid]!.resourceVersion <= afterRV) lo = mid + 1;
      else hi = mid;
    }
    sub.nextIndex = lo;
    this.subscribers.add(sub);
    if (sub.nextIndex < this.log.length) this.scheduleFlush();
    return {
      stop: () => {
        sub.stopped = true;
        this.subscribers.delete(sub);
      },
    };
  }

  private commit(key: string, event: StoreEvent): void {
    this.rv = event.resourceVersion;
    if (event.type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, event.object);
    this.log.push(event);
    this.trimLog();
    if (this.subscribers.size > 0) this.scheduleFlush();
  }

  /** Keep the log bounded: compact automatically past 1,000,000 entries (like etcd's auto-compaction). */
  private trimLog(): void {
    if (this.log.length > 1_000_000) this.compact(this.log[this.log.length - 500_000]!.resourceVersion);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const sub of this.subscribers) {
      while (!sub.stopped && sub.nextIndex < this.log.length) {
        const event = this.log[sub.nextIndex++]!;
        sub.onEvent(event);
      }
    }
  }
}



function stamp(object: KubeObject, rv: number, keep: { uid: string | undefined; creationTimestamp: string | undefined }): KubeObject {
  const metadata = { ...object.metadata, resourceVersion: String(rv) };
  if (keep.uid !== undefined) metadata.uid = keep.uid;
  if (keep.creationTimestamp !== undefined) metadata.creationTimestamp = keep.creationTimestamp;
  return Object.freeze({ ...object, metadata: Object.freeze(metadata) });
}
