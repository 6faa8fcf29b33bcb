/**
 * EtcdStore: a real etcd (v3 API, tested against 3.4.23) as the backing store (API.md "Stores").
 * This file is the Store implementation: list, get, create, update, delete, compact, watch and
 * progress. docs/etcd.md says how it maps Kubernetes semantics onto etcd and which etcd3 client
 * behaviours it works around. The parts:
 * - etcd-codec.ts: key layout, value encoding and decoding (RV = etcd mod revision, never stored).
 * - etcd-connection.ts: the client, request deadlines, failures mapped to store errors, health.
 * - etcd-watch-stream.ts: one watch over a raw gRPC Watch stream (resume, reconnect, compaction).
 *
 * Write semantics mirror MemoryStore exactly (docs/etcd.md "Writes"):
 * - create = txn(create_revision == 0), else 409 AlreadyExists; it sets metadata.uid and
 *   creationTimestamp.
 * - update and delete read the key and check the given metadata.resourceVersion (string equality
 *   with the stored RV, else 409 Conflict; missing: 404). Then txn(mod_revision == the revision
 *   read); on a race they retry from the state the failed txn read.
 * - delete returns the last state with RV = the deletion revision.
 * Every request has a deadline (requestTimeoutMs, default 5 s): an unreachable etcd makes calls
 * reject with StoreUnavailableError, nothing waits forever.
 */
import { randomUUID } from 'node:crypto';
import {
  CompareResult,
  CompareTarget,
  type IKeyValue,
  type IRangeRequest,
  type IRequestOp,
  type IResponseHeader,
  type KVClient,
} from 'etcd3';
import { realClock, type Clock } from '../core/clock.js';
import { BadRequestError, ConflictError, NotFoundError } from '../core/errors.js';
import type { KubeObject, Store, StoreEvent, StoreListResult, StoreWatch } from '../core/types.js';
import { EtcdCodec, withRevision } from './etcd-codec.js';
import { EtcdConnection } from './etcd-connection.js';
import { EtcdWatchStream, type EtcdWatchBackend } from './etcd-watch-stream.js';
import { StoreCompactedError, StoreUnavailableError } from './store-errors.js';
import type { StoreHealth } from './store-health.js';
import { DEFAULT_OBJECT_LIMITS, storableObject, type ObjectLimits } from './stored-shape.js';
import {
  checkDeletePreconditions,
  checkPrecondition,
  identify,
  type DeletePreconditions,
} from './write-preconditions.js';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. ['http://127.0.0.1:2379']. */
  endpoints: string[];
  /** Key prefix of this resource, e.g. '/registry/pods/' (a trailing '/' is added when missing). */
  prefix: string;
  /** Time source for creationTimestamp and the store's timers (gRPC deadlines use wall time). */
  clock?: Clock;
  /** Kind used in NotFound/AlreadyExists messages (default Pod). */
  kind?: string;
  /** Deadline of every etcd request or write operation, in ms (default 5000). */
  requestTimeoutMs?: number;
  /** Items per range request when listing (default 500). */
  pageSize?: number;
  /** How long a broken watch keeps trying to resume before onError(StoreUnavailableError) (default 30000). */
  watchReconnectTimeoutMs?: number;
  /** Depth and size limits of objects written and read (default DEFAULT_OBJECT_LIMITS). */
  objectLimits?: ObjectLimits;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
const DEFAULT_PAGE_SIZE = 500;
const DEFAULT_WATCH_RECONNECT_TIMEOUT_MS = 30_000;
const MAX_WRITE_ATTEMPTS = 16;

export class EtcdStore implements Store {
  readonly prefix: string;
  readonly endpoints: readonly string[];
  /** Reachability as requests and watches see it (store-health.ts): /readyz and the logs read it. */
  readonly health: StoreHealth;
  private readonly codec: EtcdCodec;
  private readonly connection: EtcdConnection;
  private readonly kv: KVClient;
  private readonly clock: Clock;
  private readonly kind: string;
  private readonly pageSize: number;
  private readonly watches = new Set<EtcdWatchStream>();
  private readonly backend: EtcdWatchBackend;

  constructor(options: EtcdStoreOptions) {
    if (!Array.isArray(options.endpoints) || options.endpoints.length === 0) {
      throw new BadRequestError('EtcdStore needs at least one endpoint');
    }
    if (typeof options.prefix !== 'string' || options.prefix === '') {
      throw new BadRequestError('EtcdStore needs a non-empty key prefix');
    }
    this.codec = new EtcdCodec(options.prefix, options.objectLimits ?? DEFAULT_OBJECT_LIMITS);
    this.prefix = this.codec.prefix;
    this.endpoints = Object.freeze([...options.endpoints]);
    this.clock = options.clock ?? realClock;
    this.kind = options.kind ?? 'Pod';
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!(this.pageSize >= 1)) throw new BadRequestError('pageSize must be >= 1');
    const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.connection = new EtcdConnection({
      endpoints: this.endpoints,
      requestTimeoutMs,
      probeKey: this.codec.prefixKey,
    });
    this.health = this.connection.health;
    this.kv = this.connection.client.kv;
    const { prefixKey, prefixEndKey } = this.codec;
    this.backend = {
      health: this.health,
      prefix: this.prefix,
      clock: this.clock,
      requestTimeoutMs,
      watchReconnectTimeoutMs: options.watchReconnectTimeoutMs ?? DEFAULT_WATCH_RECONNECT_TIMEOUT_MS,
      openStream: () =>
        this.connection.closed
          ? Promise.reject(new StoreUnavailableError('EtcdStore is closed'))
          : this.connection.client.watchClient.watch(),
      createRequest: (startRevision) => ({
        create_request: {
          key: prefixKey,
          range_end: prefixEndKey,
          start_revision: startRevision,
          prev_kv: true,
          progress_notify: true,
        },
      }),
      decodeEvent: (ev) => this.codec.decodeEvent(ev),
      proveNoChangesSince: (after) => this.proveNoChangesSince(after),
      forget: (w) => void this.watches.delete(w),
    };
  }

  // ---------------------------------------------------------------- reads

  /** The current etcd revision: one linearizable single-key read (the prefix key itself), O(log n). */
  async currentResourceVersion(): Promise<number> {
    const res = await this.connection.call('currentResourceVersion', (deadline) =>
      this.kv.range({ key: this.codec.prefixKey, keys_only: true, limit: 1 }, { deadline }),
    );
    return Number(res.header.revision);
  }

  /**
   * A consistent snapshot: the first page fixes the revision R, later pages are pinned to R
   * (`revision: R`) and continue after the last key. A compaction of R between pages restarts the list.
   */
  async list(): Promise<StoreListResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.listOnce();
      } catch (err) {
        if (err instanceof StoreCompactedError && attempt < 2) continue;
        throw err;
      }
    }
  }

  private async listOnce(): Promise<StoreListResult> {
    const items: KubeObject[] = [];
    let revision = 0;
    let from = this.codec.prefixKey;
    for (;;) {
      const req: IRangeRequest = { key: from, range_end: this.codec.prefixEndKey, limit: this.pageSize };
      if (revision > 0) req.revision = revision;
      const res = await this.connection.call('list', (deadline) => this.kv.range(req, { deadline }), revision);
      if (revision === 0) revision = Number(res.header.revision);
      for (const kv of res.kvs) {
        const obj = this.codec.decode(kv.value, Number(kv.mod_revision));
        if (obj !== undefined) items.push(obj);
      }
      if (!res.more || res.kvs.length === 0) break;
      from = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
    return { items, resourceVersion: revision };
  }

  async get(namespace: string, name: string): Promise<KubeObject> {
    const key = this.codec.keyOf(namespace, name);
    const kv = await this.readKey(key, 'get', this.connection.deadline());
    const obj = kv === undefined ? undefined : this.codec.decode(kv.value, Number(kv.mod_revision));
    if (obj === undefined) throw new NotFoundError(this.kind, name);
    return obj;
  }

  // ---------------------------------------------------------------- writes

  async create(given: KubeObject): Promise<KubeObject> {
    const { object } = storableObject(given, this.codec.limits);
    const { namespace, name } = identify(object);
    const key = this.codec.keyOf(namespace, name);
    const metadata = { ...object.metadata };
    metadata.uid = randomUUID();
    metadata.creationTimestamp = new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const value = this.codec.encode(object, metadata);
    const res = await this.connection.call('create', (deadline) =>
      this.kv.txn(
        {
          compare: [{ key, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 }],
          success: [{ request_put: { key, value } }],
        },
        { deadline },
      ),
    );
    if (!res.succeeded) {
      throw new ConflictError('AlreadyExists', `${this.kind.toLowerCase()}s "${name}" already exists`, name);
    }
    // One put in the txn: its mod_revision is the txn's header revision.
    return withRevision(object, metadata, Number(res.header.revision));
  }

  async update(given: KubeObject): Promise<KubeObject> {
    const { object } = storableObject(given, this.codec.limits);
    const { namespace, name } = identify(object);
    const key = this.codec.keyOf(namespace, name);
    const deadline = this.connection.deadline();
    let current = await this.readKey(key, 'update', deadline);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const prev = current === undefined ? undefined : this.codec.decode(current.value, Number(current.mod_revision));
      if (current === undefined || prev === undefined) throw new NotFoundError(this.kind, name);
      checkPrecondition(object.metadata.resourceVersion, prev, name, 'update');
      const metadata = { ...object.metadata };
      if (prev.metadata.uid !== undefined) metadata.uid = prev.metadata.uid;
      if (prev.metadata.creationTimestamp !== undefined) metadata.creationTimestamp = prev.metadata.creationTimestamp;
      const res = await this.swap(
        'update',
        key,
        current,
        { request_put: { key, value: this.codec.encode(object, metadata) } },
        deadline,
      );
      if (res.succeeded) return withRevision(object, metadata, Number(res.header.revision));
      // Raced with another writer: re-check against the state the failed txn read.
      current = res.current;
    }
    throw contention(name);
  }

  /**
   * Delete; the preconditions given (uid, resourceVersion) must match the stored object's (409
   * Conflict). A value that is there but unreadable (not the stored shape) can be deleted without
   * preconditions; the answer then carries only its namespace and name.
   */
  async delete(namespace: string, name: string, options: DeletePreconditions = {}): Promise<KubeObject> {
    const key = this.codec.keyOf(namespace, name);
    const deadline = this.connection.deadline();
    let current = await this.readKey(key, 'delete', deadline);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      if (current === undefined) throw new NotFoundError(this.kind, name);
      const decoded = this.codec.decode(current.value, Number(current.mod_revision));
      if (decoded === undefined && (options.uid !== undefined || (options.resourceVersion ?? '') !== '')) {
        throw new NotFoundError(this.kind, name);
      }
      const prev = decoded ?? this.codec.objectFromKey(key)!;
      checkDeletePreconditions(options, prev, name);
      const res = await this.swap('delete', key, current, { request_delete_range: { key } }, deadline);
      if (res.succeeded) {
        return { ...prev, metadata: { ...prev.metadata, resourceVersion: res.header.revision } };
      }
      current = res.current;
    }
    throw contention(name);
  }

  /**
   * Compact etcd's history up to `rv` (physical: resolves once applied). Watches from below it fail
   * with StoreCompactedError. Note: this compacts the WHOLE etcd keyspace, not only this prefix.
   */
  async compact(rv: number): Promise<void> {
    if (!Number.isSafeInteger(rv) || rv < 1) throw new BadRequestError(`invalid compaction revision ${rv}`);
    await this.connection.call('compact', (deadline) =>
      this.kv.compact({ revision: rv, physical: true }, { deadline }),
    );
  }

  // ---------------------------------------------------------------- watch and progress

  watch(
    afterRV: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (resourceVersion: number) => void,
  ): StoreWatch {
    if (!Number.isSafeInteger(afterRV) || afterRV < 0) throw new BadRequestError(`invalid watch revision ${afterRV}`);
    const w = new EtcdWatchStream(this.backend, afterRV, { onEvent, onError, onProgress });
    if (this.connection.closed) {
      queueMicrotask(() => w.fail(new StoreUnavailableError('EtcdStore is closed')));
      return { stop: () => w.stop() };
    }
    this.watches.add(w);
    w.connect();
    return { stop: () => w.stop() };
  }

  /** Ask every running watch to report progress soon (a read-based proof; docs/etcd.md "Progress"). */
  requestProgress(): void {
    for (const w of this.watches) w.requestProgress();
  }

  /** Stop every watch and close the client; later calls reject with StoreUnavailableError. */
  close(): void {
    if (this.connection.closed) return;
    for (const w of [...this.watches]) w.stop();
    this.connection.close();
  }

  // ---------------------------------------------------------------- internals

  /**
   * Prove that this prefix had no change in (after, R] for the current revision R (docs/etcd.md
   * "Progress"): R when proven, 'pending' when changes exist, undefined when there is nothing to
   * prove (R <= after) or it cannot be proven (after is compacted).
   */
  private async proveNoChangesSince(after: number): Promise<number | 'pending' | undefined> {
    const whole = { key: this.codec.prefixKey, range_end: this.codec.prefixEndKey };
    const head = await this.connection.call('progress', (deadline) =>
      this.kv.range({ ...whole, count_only: true }, { deadline }),
    );
    const r = Number(head.header.revision);
    if (r <= after) return undefined;
    const changed = await this.connection.call('progress', (deadline) =>
      this.kv.range({ ...whole, revision: r, keys_only: true, limit: 1, min_mod_revision: after + 1 }, { deadline }),
    );
    if (changed.kvs.length > 0) return 'pending';
    let countThen = 0;
    if (after >= 1) {
      try {
        const then = await this.connection.call(
          'progress',
          (deadline) => this.kv.range({ ...whole, revision: after, count_only: true }, { deadline }),
          after,
        );
        countThen = Number(then.count);
      } catch (err) {
        if (err instanceof StoreCompactedError) return undefined;
        throw err;
      }
    }
    // Nothing modified or created after `after`, so the key set at R is a subset of the one at
    // `after`; equal counts mean nothing was deleted either.
    return Number(head.count) === countThen ? r : 'pending';
  }

  private async readKey(key: Buffer, op: string, deadline: number): Promise<IKeyValue | undefined> {
    const res = await this.connection.call(op, (d) => this.kv.range({ key }, { deadline: d }), 0, deadline);
    return res.kvs[0];
  }

  /**
   * One compare-and-swap write: `request` if the key's mod_revision is still `current`'s. On a race
   * the txn reads the key instead, and `current` is what it read (undefined: gone).
   */
  private async swap(
    op: 'update' | 'delete',
    key: Buffer,
    current: IKeyValue,
    request: IRequestOp,
    deadline: number,
  ): Promise<{ succeeded: boolean; header: IResponseHeader; current: IKeyValue | undefined }> {
    const res = await this.connection.call(
      op,
      (d) =>
        this.kv.txn(
          {
            compare: [
              { key, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: current.mod_revision },
            ],
            success: [request],
            failure: [{ request_range: { key } }],
          },
          { deadline: d },
        ),
      0,
      deadline,
    );
    return { succeeded: res.succeeded, header: res.header, current: res.responses[0]?.response_range?.kvs[0] };
  }
}

function contention(name: string): ConflictError {
  return new ConflictError(
    'Conflict',
    `Operation cannot be fulfilled on "${name}": too much contention, please retry`,
    name,
  );
}
