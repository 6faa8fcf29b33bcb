/**
 * MemoryStore: the embedded, in-process backing store (API.md "Stores").
 *
 * - One RV per write; an empty store is at RV 0 and the first write gets 1
 *   (or at `startResourceVersion` and the first write gets one more: a
 *   server restarting on an empty store starts above every RV it handed out
 *   before, see src/cli/resource-version-epoch.ts).
 * - create: 409 AlreadyExists for a duplicate name; sets metadata.uid and
 *   creationTimestamp. update keeps them; a given metadata.resourceVersion must
 *   match the stored one (409 Conflict); a missing object is 404.
 * - delete returns the last state with metadata.resourceVersion = the deletion
 *   RV: exactly what the DELETED event carries.
 * - watch(afterRV) replays the kept log after afterRV, then streams live.
 *   Events are delivered asynchronously (one microtask per write burst), in RV
 *   order, like a real store's watch stream. compact(rv) drops the log below rv;
 *   a watch from below the compacted RV fails with StoreCompactedError.
 * - The log compacts itself by count, bytes and age (memory-compaction.ts;
 *   `compaction: false` turns that off), never dropping an event a running
 *   watch has not been handed yet; `compactedResourceVersion` tells where.
 * - Writes take only objects of the stored shape (stored-shape.ts: types,
 *   null maps dropped, depth and size limits): anything else is a 400/413.
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
import { LogBudget, type CompactionLimits } from './memory-compaction.js';
import { StoreCompactedError } from './store-errors.js';
import { frozenStored, metadataAt, plainCopy } from './stored-copy.js';
import { DEFAULT_OBJECT_LIMITS, markChecked, storableObject, type ObjectLimits } from './stored-shape.js';
import {
  checkDeletePreconditions,
  checkPrecondition,
  identify,
  type DeletePreconditions,
} from './write-preconditions.js';

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
  /** The RV of the empty store (default 0); a watch from below it is compacted. */
  startResourceVersion?: number;
  /** Depth and size limits of stored objects (default DEFAULT_OBJECT_LIMITS). */
  objectLimits?: ObjectLimits;
  /** Automatic compaction bounds (default DEFAULT_COMPACTION), or false for none. */
  compaction?: Partial<CompactionLimits> | false;
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
  private readonly limits: ObjectLimits;
  private readonly budget: LogBudget | undefined;
  /** Estimated JSON size of each stored object, by key (for the byte bound). */
  private readonly sizes = new Map<string, number>();

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.kind = options.kind ?? 'Pod';
    const start = options.startResourceVersion ?? 0;
    if (!Number.isSafeInteger(start) || start < 0)
      throw new BadRequestError(`startResourceVersion must be a safe integer >= 0, got ${start}`);
    // Nothing below the start was ever written here: a watch from there is as if compacted.
    this.rv = start;
    this.compactedRV = start;
    this.limits = options.objectLimits ?? DEFAULT_OBJECT_LIMITS;
    this.budget = options.compaction === false ? undefined : new LogBudget(options.compaction);
  }

  /** The RV the log was last compacted to (0: never): a watch from below it fails as compacted. */
  get compactedResourceVersion(): number {
    return this.compactedRV;
  }

  /** Events in the change log. */
  get logLength(): number {
    return this.log.length;
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

  async create(given: KubeObject): Promise<KubeObject> {
    const { object, bytes } = storableObject(given, this.limits);
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
    this.commit(key, { type: 'ADDED', object: stored, resourceVersion: rv }, bytes);
    return stored;
  }

  async update(given: KubeObject): Promise<KubeObject> {
    const { object, bytes } = storableObject(given, this.limits);
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
    this.commit(key, { type: 'MODIFIED', object: stored, prevObject: prev, resourceVersion: rv }, bytes);
    return stored;
  }

  /** Delete; the preconditions given (uid, resourceVersion) must match the stored object's (409 Conflict). */
  async delete(namespace: string, name: string, options: DeletePreconditions = {}): Promise<KubeObject> {
    const key = objectKey(namespace, name);
    const prev = this.objects.get(key);
    if (prev === undefined) throw new NotFoundError(this.kind, name);
    checkDeletePreconditions(options, prev, name);
    const rv = this.rv + 1;
    const last = plainCopy(prev);
    last.metadata = metadataAt(prev.metadata, rv);
    markChecked(last);
    this.commit(
      key,
      { type: 'DELETED', object: last, prevObject: prev, resourceVersion: rv },
      this.sizes.get(key) ?? 0,
    );
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
    this.budget?.dropped(drop);
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

  private commit(key: string, event: StoreEvent, bytes: number): void {
    this.rv = event.resourceVersion;
    if (event.type === 'DELETED') {
      this.objects.delete(key);
      this.sizes.delete(key);
    } else {
      this.objects.set(key, event.object);
      this.sizes.set(key, bytes);
    }
    this.log.push(event);
    this.budget?.add(this.clock.now(), bytes);
    this.autoCompact();
    if (this.subscribers.size > 0) this.scheduleFlush();
  }

  /** Compact by count, bytes and age, keeping every event a running watch has not been handed yet. */
  private autoCompact(): void {
    if (this.budget === undefined) return;
    let undelivered = this.log.length;
    for (const sub of this.subscribers) if (!sub.stopped) undelivered = Math.min(undelivered, sub.nextIndex);
    const drop = this.budget.excess(this.clock.now(), undelivered);
    if (drop > 0) this.compact(this.log[drop - 1]!.resourceVersion);
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

function stamp(
  object: KubeObject,
  rv: number,
  keep: { uid: string | undefined; creationTimestamp: string | undefined },
): KubeObject {
  const metadata = metadataAt(object.metadata, rv);
  if (keep.uid !== undefined) metadata.uid = keep.uid;
  if (keep.creationTimestamp !== undefined) metadata.creationTimestamp = keep.creationTimestamp;
  return frozenStored(object, metadata);
}
