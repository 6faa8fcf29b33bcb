/**
 * EtcdStore: a real etcd (v3 API, tested against 3.4.23) as the backing store (API.md "Stores").
 *
 * Layout and versions
 * - Each object is stored as JSON under `${prefix}${namespace}/${name}`; a cluster-scoped object
 *   (empty namespace) under `${prefix}${name}`. Namespaces and names may not contain '/' (400), so
 *   keys never collide. A prefix without a trailing '/' gets one. Lists are in etcd key order, which
 *   equals MemoryStore's `namespace/name` order for namespaced objects (cluster-scoped objects sort
 *   among the namespaces instead of first; Kubernetes never mixes both in one resource).
 * - RV = etcd mod revision. metadata.resourceVersion is never stored in the value (it would be
 *   stale by construction); it is set on every read from the kv's mod_revision, and on a DELETED
 *   event from the delete's revision.
 * - Values that are not JSON objects with a `metadata` object (not written by this store) are
 *   skipped by list, get (404) and watch alike.
 * - Write semantics mirror MemoryStore exactly: create = txn(create_revision == 0) else 409
 *   AlreadyExists, with metadata.uid + creationTimestamp set; update/delete = read, check the given
 *   metadata.resourceVersion (string equality with the stored RV, else 409 Conflict; missing 404),
 *   then txn(mod_revision == the revision read) and retry from the txn's failure read on a race.
 *   delete returns the last state with RV = the deletion revision.
 * - Every request has a deadline (requestTimeoutMs, default 5 s). An unreachable or unhealthy etcd
 *   makes writes, reads and currentResourceVersion reject with StoreUnavailableError; nothing waits
 *   forever. The etcd3 client's own fault handling is switched off: its circuit breaker (below), and
 *   its global retry, which would re-send non-idempotent txns (a retried create could report
 *   AlreadyExists for its own success). A write that times out (DEADLINE_EXCEEDED) may still have been
 *   applied; its StoreUnavailableError says so.
 *
 * What was found about the `etcd3` 1.1.2 client (checked against its source and a live etcd 3.4.23):
 * - Its managed Watcher resumes after a stream error from `lastRevision()`, which it sets to
 *   `header.revision + 1` on the "created" response and on every response. For a watch that replays
 *   history, both carry the store's CURRENT revision: watching from rev 2 with 2000 events pending,
 *   `lastRevision()` was 2002 right after 'connected', with 0 events delivered. A disconnect during a
 *   replay therefore silently skips events: with the connection cut after the first event of a
 *   2550-event replay, the Watcher delivered 1000 events, reconnected at the current revision and
 *   lost the other 1550 (this store delivers all 2550 in the same scenario; see the test "a connection
 *   cut in the middle of a replay"). This store does not use the managed Watcher: it drives a raw gRPC
 *   Watch stream (`client.watchClient.watch()`) and keeps its own resume point.
 * - The client's default fault handling (a 3-failure circuit breaker per host, open for 5 s) made
 *   every call fail with BrokenCircuitError for 5 s after a restarted etcd was already serving.
 * - Writing `{progress_request: {}}` on the managed stream crashes the process (reproduced: uncaught
 *   `ClientRuntimeError: Failed to find watcher for IWatchResponse`, the reply has watch_id "-1").
 * - On a raw stream the on-demand progress reply is NOT safe on etcd 3.4.23 (etcd-io/etcd#15220):
 *   it is sent at once on a control path. Reproduced 3/3: a watch created from rev 2 with 2000
 *   events pending got the progress reply (rev 2001) BEFORE any of the replayed events. So its
 *   revision does not prove the watch delivered everything up to it, and this store never sends one.
 * - Periodic progress notifications (`progress_notify`, server interval
 *   --experimental-watch-progress-notify-interval, etcd default 10 min) ARE safe: etcd sends them
 *   only to watchers that have caught up, through the same channel as their events. They arrive as a
 *   response with our watch_id and no events; this store reports them through onProgress.
 * - `requestProgress()` therefore proves progress with reads instead: R = current revision (count-only
 *   range of the prefix), then "no key in the prefix has mod_revision > L at R" (keys-only, limit 1,
 *   min_mod_revision L+1) and "count at L == count at R" together prove that the prefix had no change
 *   in (L, R], where L is the watch's last fully delivered revision. Then onProgress(R) is exact. When
 *   changes are pending, their events are on the way: it retries briefly until they are delivered
 *   (bounded by requestTimeoutMs). Cost: 3 small reads (the min_mod_revision read scans the prefix
 *   server-side).
 *
 * Watch invariants (enforced in EtcdWatch below)
 * - Events are delivered in revision order, each exactly once: `resumeRV` is the last revision whose
 *   events were all delivered (or that a progress notification/proof covered). etcd never splits one
 *   revision across responses (fragment is off), so it advances per response. A (re)connect always
 *   creates the watch from resumeRV + 1, and any event at or below resumeRV is dropped.
 * - After a stream failure it reconnects with back-off; if it cannot re-create the watch within
 *   watchReconnectTimeoutMs (default 30 s), or etcd cancels the watch, onError is called once and
 *   the watch is dead (the cache re-lists). A start revision below the compaction point yields
 *   onError(StoreCompactedError) — both at start and when a stalled watch falls behind a compaction.
 */
import { randomUUID } from 'node:crypto';
import {
  ClientClosedError,
  CompareResult,
  CompareTarget,
  Etcd3,
  GRPCCancelledError,
  GRPCDeadlineExceededError,
  GRPCInternalError,
  GRPCOutOfRangeError,
  GRPCResourceExhastedError,
  GRPCUnavailableError,
  type IDuplexStream,
  type IEvent,
  type IKeyValue,
  type IOptions,
  type IRangeRequest,
  type IWatchRequest,
  type IWatchResponse,
} from 'etcd3';
import { realClock, type Clock, type TimerHandle } from '../core/clock.js';
import { BadRequestError, ConflictError, NotFoundError, RequestEntityTooLargeError } from '../core/errors.js';
import type { KubeObject, Store, StoreEvent, StoreListResult, StoreWatch } from '../core/types.js';
import { StoreCompactedError, StoreUnavailableError } from './store-errors.js';
import { StoreHealth } from './store-health.js';
import {
  DEFAULT_OBJECT_LIMITS,
  markChecked,
  readableObject,
  storableObject,
  type ObjectLimits,
} from './stored-shape.js';
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

/** A raw etcd Watch stream (grpc-js duplex). */
type WatchStream = IDuplexStream<IWatchRequest, IWatchResponse>;
type FaultHandling = NonNullable<IOptions['faultHandling']>;

/** What an EtcdWatch needs from its store (closures over the store's private state). */
interface WatchBackend {
  readonly prefix: string;
  readonly clock: Clock;
  readonly requestTimeoutMs: number;
  readonly watchReconnectTimeoutMs: number;
  openStream(): Promise<WatchStream>;
  createRequest(startRevision: number): IWatchRequest;
  decodeEvent(ev: IEvent): StoreEvent | undefined;
  proveNoChangesSince(after: number): Promise<number | 'pending' | undefined>;
  forget(w: EtcdWatch): void;
  readonly health: StoreHealth;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
const PROBE_INTERVAL_MS = 1000;
const DEFAULT_PAGE_SIZE = 500;
const DEFAULT_WATCH_RECONNECT_TIMEOUT_MS = 30_000;
const RECONNECT_BACKOFF_MIN_MS = 100;
const RECONNECT_BACKOFF_MAX_MS = 2000;
const MAX_WRITE_ATTEMPTS = 16;

/** A pass-through cockatiel policy: no retries, no circuit breaker (see the file comment). */
const passThroughPolicy = {
  execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
    return Promise.resolve().then(() => fn({ signal: new AbortController().signal }));
  },
};

export class EtcdStore implements Store {
  readonly prefix: string;
  readonly endpoints: readonly string[];
  private readonly client: Etcd3;
  private readonly prefixKey: Buffer;
  private readonly prefixEndKey: Buffer;
  private readonly clock: Clock;
  private readonly kind: string;
  private readonly requestTimeoutMs: number;
  private readonly pageSize: number;
  private readonly watchReconnectTimeoutMs: number;
  private readonly limits: ObjectLimits;
  /** Reachability as requests and watches see it (store-health.ts): /readyz and the logs read it. */
  readonly health = new StoreHealth();
  private probe: NodeJS.Timeout | undefined;
  private readonly watches = new Set<EtcdWatch>();
  private readonly backend: WatchBackend;
  private closed = false;

  constructor(options: EtcdStoreOptions) {
    if (!Array.isArray(options.endpoints) || options.endpoints.length === 0) {
      throw new BadRequestError('EtcdStore needs at least one endpoint');
    }
    if (typeof options.prefix !== 'string' || options.prefix === '') {
      throw new BadRequestError('EtcdStore needs a non-empty key prefix');
    }
    this.prefix = options.prefix.endsWith('/') ? options.prefix : options.prefix + '/';
    this.endpoints = Object.freeze([...options.endpoints]);
    this.prefixKey = Buffer.from(this.prefix);
    this.prefixEndKey = prefixEnd(this.prefixKey);
    this.clock = options.clock ?? realClock;
    this.kind = options.kind ?? 'Pod';
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.watchReconnectTimeoutMs = options.watchReconnectTimeoutMs ?? DEFAULT_WATCH_RECONNECT_TIMEOUT_MS;
    this.limits = options.objectLimits ?? DEFAULT_OBJECT_LIMITS;
    if (!(this.pageSize >= 1)) throw new BadRequestError('pageSize must be >= 1');
    const faultHandling: FaultHandling = {
      host: () => passThroughPolicy as unknown as ReturnType<NonNullable<FaultHandling['host']>>,
      global: passThroughPolicy as unknown as NonNullable<FaultHandling['global']>,
    };
    this.client = new Etcd3({
      hosts: [...options.endpoints],
      faultHandling,
      grpcOptions: {
        // An own TCP connection per store (grpc-js otherwise shares one per target).
        'grpc.use_local_subchannel_pool': 1,
        // Reconnect quickly once etcd is back (grpc-js defaults back off up to 120 s).
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1000,
        // A 64 KiB HTTP/2 window caps watch throughput (etcd-notes §5); objects can be large.
        'grpc-node.flow_control_window': 4 * 1024 * 1024,
        'grpc.max_receive_message_length': 256 * 1024 * 1024,
        // Detect a hung (not closed) connection under a live watch. etcd's minimum is 5 s.
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
      },
    });
    this.backend = {
      health: this.health,
      prefix: this.prefix,
      clock: this.clock,
      requestTimeoutMs: this.requestTimeoutMs,
      watchReconnectTimeoutMs: this.watchReconnectTimeoutMs,
      openStream: () =>
        this.closed
          ? Promise.reject(new StoreUnavailableError('EtcdStore is closed'))
          : this.client.watchClient.watch(),
      createRequest: (startRevision) => ({
        create_request: {
          key: this.prefixKey,
          range_end: this.prefixEndKey,
          start_revision: startRevision,
          prev_kv: true,
          progress_notify: true,
        },
      }),
      decodeEvent: (ev) => this.decodeEvent(ev),
      proveNoChangesSince: (after) => this.proveNoChangesSince(after),
      forget: (w) => void this.watches.delete(w),
    };
  }

  // ---------------------------------------------------------------- reads

  /** The current etcd revision: one linearizable single-key read (the prefix key itself), O(log n). */
  async currentResourceVersion(): Promise<number> {
    const res = await this.call('currentResourceVersion', (deadline) =>
      this.client.kv.range({ key: this.prefixKey, keys_only: true, limit: 1 }, { deadline }),
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
    let from = this.prefixKey;
    for (;;) {
      const req: IRangeRequest = { key: from, range_end: this.prefixEndKey, limit: this.pageSize };
      if (revision > 0) req.revision = revision;
      const res = await this.call('list', (deadline) => this.client.kv.range(req, { deadline }), revision);
      if (revision === 0) revision = Number(res.header.revision);
      for (const kv of res.kvs) {
        const obj = decodeObject(kv.value, Number(kv.mod_revision), this.limits);
        if (obj !== undefined) items.push(obj);
      }
      if (!res.more || res.kvs.length === 0) break;
      from = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
    return { items, resourceVersion: revision };
  }

  async get(namespace: string, name: string): Promise<KubeObject> {
    const key = this.keyOf(namespace, name);
    const kv = await this.readKey(key, 'get', this.deadline());
    const obj = kv === undefined ? undefined : decodeObject(kv.value, Number(kv.mod_revision), this.limits);
    if (obj === undefined) throw new NotFoundError(this.kind, name);
    return obj;
  }

  // ---------------------------------------------------------------- writes

  async create(given: KubeObject): Promise<KubeObject> {
    const { object } = storableObject(given, this.limits);
    const { namespace, name } = identify(object);
    const key = this.keyOf(namespace, name);
    const metadata = { ...object.metadata };
    metadata.uid = randomUUID();
    metadata.creationTimestamp = new Date(this.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const value = encodeObject(object, metadata);
    const deadline = this.deadline();
    const res = await this.call(
      'create',
      (d) =>
        this.client.kv.txn(
          {
            compare: [{ key, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 }],
            success: [{ request_put: { key, value } }],
          },
          { deadline: d },
        ),
      0,
      deadline,
    );
    if (!res.succeeded) {
      throw new ConflictError('AlreadyExists', `${this.kind.toLowerCase()}s "${name}" already exists`, name);
    }
    // One put in the txn: its mod_revision is the txn's header revision.
    return freeze(object, metadata, Number(res.header.revision));
  }

  async update(given: KubeObject): Promise<KubeObject> {
    const { object } = storableObject(given, this.limits);
    const { namespace, name } = identify(object);
    const key = this.keyOf(namespace, name);
    const deadline = this.deadline();
    let current = await this.readKey(key, 'update', deadline);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const prev =
        current === undefined ? undefined : decodeObject(current.value, Number(current.mod_revision), this.limits);
      if (current === undefined || prev === undefined) throw new NotFoundError(this.kind, name);
      checkPrecondition(object.metadata.resourceVersion, prev, name, 'update');
      const metadata = { ...object.metadata };
      if (prev.metadata.uid !== undefined) metadata.uid = prev.metadata.uid;
      if (prev.metadata.creationTimestamp !== undefined) metadata.creationTimestamp = prev.metadata.creationTimestamp;
      const value = encodeObject(object, metadata);
      const res = await this.call(
        'update',
        (d) =>
          this.client.kv.txn(
            {
              compare: [
                { key, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: current!.mod_revision },
              ],
              success: [{ request_put: { key, value } }],
              failure: [{ request_range: { key } }],
            },
            { deadline: d },
          ),
        0,
        deadline,
      );
      if (res.succeeded) return freeze(object, metadata, Number(res.header.revision));
      // Raced with another writer: re-check against the state the failed txn read.
      current = res.responses[0]?.response_range?.kvs[0];
    }
    throw new ConflictError(
      'Conflict',
      `Operation cannot be fulfilled on "${name}": too much contention, please retry`,
      name,
    );
  }

  /**
   * Delete; the preconditions given (uid, resourceVersion) must match the stored object's (409
   * Conflict). A value that is there but unreadable (not the stored shape) can be deleted without
   * preconditions; the answer then carries only its namespace and name.
   */
  async delete(namespace: string, name: string, options: DeletePreconditions = {}): Promise<KubeObject> {
    const key = this.keyOf(namespace, name);
    const deadline = this.deadline();
    let current = await this.readKey(key, 'delete', deadline);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      if (current === undefined) throw new NotFoundError(this.kind, name);
      const decoded = decodeObject(current.value, Number(current.mod_revision), this.limits);
      if (decoded === undefined && (options.uid !== undefined || (options.resourceVersion ?? '') !== '')) {
        throw new NotFoundError(this.kind, name);
      }
      const prev = decoded ?? this.objectFromKey(key)!;
      checkDeletePreconditions(options, prev, name);
      const res = await this.call(
        'delete',
        (d) =>
          this.client.kv.txn(
            {
              compare: [
                { key, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: current!.mod_revision },
              ],
              success: [{ request_delete_range: { key } }],
              failure: [{ request_range: { key } }],
            },
            { deadline: d },
          ),
        0,
        deadline,
      );
      if (res.succeeded) {
        return { ...prev, metadata: { ...prev.metadata, resourceVersion: res.header.revision } };
      }
      current = res.responses[0]?.response_range?.kvs[0];
    }
    throw new ConflictError(
      'Conflict',
      `Operation cannot be fulfilled on "${name}": too much contention, please retry`,
      name,
    );
  }

  /**
   * Compact etcd's history up to `rv` (physical: resolves once applied). Watches from below it fail
   * with StoreCompactedError. Note: this compacts the WHOLE etcd keyspace, not only this prefix.
   */
  async compact(rv: number): Promise<void> {
    if (!Number.isSafeInteger(rv) || rv < 1) throw new BadRequestError(`invalid compaction revision ${rv}`);
    await this.call('compact', (deadline) => this.client.kv.compact({ revision: rv, physical: true }, { deadline }));
  }

  // ---------------------------------------------------------------- watch and progress

  watch(
    afterRV: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (resourceVersion: number) => void,
  ): StoreWatch {
    if (!Number.isSafeInteger(afterRV) || afterRV < 0) throw new BadRequestError(`invalid watch revision ${afterRV}`);
    const w = new EtcdWatch(this.backend, afterRV, onEvent, onError, onProgress);
    if (this.closed) {
      queueMicrotask(() => w.fail(new StoreUnavailableError('EtcdStore is closed')));
      return { stop: () => w.stop() };
    }
    this.watches.add(w);
    w.connect();
    return { stop: () => w.stop() };
  }

  /** Ask every running watch to report progress soon (a read-based proof; see the file comment). */
  requestProgress(): void {
    for (const w of this.watches) w.requestProgress();
  }

  /** Stop every watch and close the client; later calls reject with StoreUnavailableError. */
  /** After a failed request: probe etcd every second until one succeeds (the health then recovers by itself). */
  private probeUntilReachable(): void {
    if (this.probe !== undefined) return;
    this.probe = setTimeout(() => {
      this.probe = undefined;
      if (this.closed || this.health.state.healthy) return;
      this.currentResourceVersion().catch(() => undefined); // a failure re-arms the probe
    }, PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.probe !== undefined) clearTimeout(this.probe);
    for (const w of [...this.watches]) w.stop();
    this.client.close();
  }

  // ---------------------------------------------------------------- watch internals

  /** Decode one watch event (undefined for a value this store did not write). */
  private decodeEvent(ev: IEvent): StoreEvent | undefined {
    const rv = Number(ev.kv.mod_revision);
    const prevObject = ev.prev_kv
      ? decodeObject(ev.prev_kv.value, Number(ev.prev_kv.mod_revision), this.limits)
      : undefined;
    if (String(ev.type).toUpperCase() === 'DELETE') {
      // The last state with the deletion RV; if etcd no longer had the previous value (compacted),
      // fall back to the identity encoded in the key.
      const base = prevObject ?? this.objectFromKey(ev.kv.key);
      if (base === undefined) return undefined;
      const object = freeze(base, base.metadata, rv);
      const event: StoreEvent = { type: 'DELETED', object, resourceVersion: rv };
      if (prevObject !== undefined) event.prevObject = prevObject;
      return event;
    }
    const object = decodeObject(ev.kv.value, rv, this.limits);
    if (object === undefined) {
      // Unreadable (not ours, or not the stored shape): invisible, so a change into it reads as a deletion.
      if (prevObject === undefined) return undefined;
      return { type: 'DELETED', object: freeze(prevObject, prevObject.metadata, rv), prevObject, resourceVersion: rv };
    }
    if (ev.kv.create_revision === ev.kv.mod_revision) return { type: 'ADDED', object, resourceVersion: rv };
    const event: StoreEvent = { type: 'MODIFIED', object, resourceVersion: rv };
    if (prevObject !== undefined) event.prevObject = prevObject;
    return event;
  }

  /**
   * Prove that this prefix had no change in (after, R] for the current revision R.
   * Returns R when proven, 'pending' when changes exist (their events are on the way), undefined when
   * nothing to prove (R <= after) or unprovable (after compacted).
   */
  private async proveNoChangesSince(after: number): Promise<number | 'pending' | undefined> {
    const whole = { key: this.prefixKey, range_end: this.prefixEndKey };
    const head = await this.call('progress', (deadline) =>
      this.client.kv.range({ ...whole, count_only: true }, { deadline }),
    );
    const r = Number(head.header.revision);
    if (r <= after) return undefined;
    const changed = await this.call('progress', (deadline) =>
      this.client.kv.range(
        { ...whole, revision: r, keys_only: true, limit: 1, min_mod_revision: after + 1 },
        { deadline },
      ),
    );
    if (changed.kvs.length > 0) return 'pending';
    let countThen = 0;
    if (after >= 1) {
      try {
        const then = await this.call(
          'progress',
          (deadline) => this.client.kv.range({ ...whole, revision: after, count_only: true }, { deadline }),
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

  // ---------------------------------------------------------------- helpers

  private deadline(): number {
    return Date.now() + this.requestTimeoutMs;
  }

  private keyOf(namespace: string, name: string): Buffer {
    if (typeof name !== 'string' || name === '') throw new BadRequestError('metadata.name is required');
    if (typeof namespace !== 'string') throw new BadRequestError('metadata.namespace must be a string');
    if (name.includes('/') || namespace.includes('/')) {
      throw new BadRequestError(`namespace and name may not contain '/': "${namespace}/${name}"`);
    }
    return Buffer.from(namespace === '' ? this.prefix + name : `${this.prefix}${namespace}/${name}`);
  }

  private objectFromKey(key: Buffer): KubeObject | undefined {
    const rest = key.toString('utf8').slice(this.prefix.length);
    if (rest === '') return undefined;
    const slash = rest.indexOf('/');
    return slash < 0
      ? { metadata: { name: rest } }
      : { metadata: { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) } };
  }

  private async readKey(key: Buffer, op: string, deadline: number): Promise<IKeyValue | undefined> {
    const res = await this.call(op, (d) => this.client.kv.range({ key }, { deadline: d }), 0, deadline);
    return res.kvs[0];
  }

  /**
   * Run one etcd request with a deadline and map failures: unreachable/unhealthy etcd ->
   * StoreUnavailableError, "required revision has been compacted" -> StoreCompactedError.
   */
  private async call<T>(
    op: string,
    fn: (deadline: number) => Promise<T>,
    atRevision = 0,
    deadline = this.deadline(),
  ): Promise<T> {
    if (this.closed) throw new StoreUnavailableError(`EtcdStore is closed (${op})`);
    try {
      const result = await fn(deadline);
      this.health.recover(this.health);
      return result;
    } catch (err) {
      const mapped = this.mapError(op, err, atRevision);
      if (mapped instanceof StoreUnavailableError && !this.closed) {
        this.health.fail(this.health, mapped);
        this.probeUntilReachable();
      }
      throw mapped;
    }
  }

  private mapError(op: string, err: unknown, atRevision: number): Error {
    if (
      err instanceof GRPCOutOfRangeError ||
      (err instanceof Error && /required revision has been compacted/.test(err.message))
    ) {
      const m = /compacted.*?(\d+)/.exec(err.message);
      return new StoreCompactedError(atRevision, m ? Number(m[1]) : atRevision);
    }
    if (err instanceof Error && /request is too large/.test(err.message)) {
      return new RequestEntityTooLargeError(`etcd refused the ${op}: ${err.message} (etcd's --max-request-bytes)`);
    }
    if (isUnavailable(err)) {
      const detail = err instanceof Error ? err.message : String(err);
      const ambiguous =
        err instanceof GRPCDeadlineExceededError && op !== 'list' && op !== 'get' && op !== 'currentResourceVersion'
          ? ' (the write may or may not have been applied)'
          : '';
      return new StoreUnavailableError(
        `etcd ${this.endpoints.join(',')} unavailable during ${op}${ambiguous}: ${detail}`,
        { cause: err },
      );
    }
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * One running store watch over a raw etcd Watch stream. See the file comment for the invariants;
 * `resumeRV` is the single source of truth for "delivered so far".
 */
class EtcdWatch {
  /** The last revision whose events were all delivered (or proven/notified empty). */
  private resumeRV: number;
  /** The last revision reported through onProgress (reports strictly increase). */
  private lastProgress = -1;
  private stopped = false;
  private stream: WatchStream | undefined;
  /** Incremented per stream attempt: callbacks of an abandoned stream are ignored. */
  private generation = 0;
  private watchId: string | undefined;
  private outageSince: number | undefined;
  private backoffMs = RECONNECT_BACKOFF_MIN_MS;
  private timer: TimerHandle | undefined;
  private proving = false;
  private proveAgain = false;
  private progressWantedUntil = 0;

  constructor(
    private readonly backend: WatchBackend,
    afterRV: number,
    private readonly onEvent: (event: StoreEvent) => void,
    private readonly onError: (error: Error) => void,
    private readonly onProgress: ((resourceVersion: number) => void) | undefined,
  ) {
    this.resumeRV = afterRV;
  }

  connect(): void {
    if (this.stopped) return;
    const gen = ++this.generation;
    this.watchId = undefined;
    this.backend.openStream().then(
      (stream) => {
        if (this.stopped || gen !== this.generation) {
          closeStream(stream);
          return;
        }
        this.stream = stream;
        stream.on('data', (res: IWatchResponse) => {
          if (gen === this.generation) this.handle(res);
        });
        stream.on('error', (err: Error) => {
          if (gen === this.generation) this.streamFailed(err);
        });
        stream.on('end', () => {
          if (gen === this.generation) this.streamFailed(new Error('watch stream ended'));
        });
        // Invariant: always (re)start right after the last fully delivered revision.
        stream.write(this.backend.createRequest(this.resumeRV + 1));
        const { clock, requestTimeoutMs } = this.backend;
        this.setTimer(
          clock.setTimeout(() => {
            if (gen === this.generation && this.watchId === undefined) {
              this.streamFailed(new Error(`no watch-created response within ${requestTimeoutMs} ms`));
            }
          }, requestTimeoutMs),
        );
      },
      (err: unknown) => {
        if (gen === this.generation) this.streamFailed(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  private handle(res: IWatchResponse): void {
    if (this.stopped) return;
    if (res.created) {
      this.watchId = res.watch_id;
      this.clearTimer();
      this.outageSince = undefined;
      this.backend.health.recover(this);
      this.backoffMs = RECONNECT_BACKOFF_MIN_MS;
      if (res.canceled) this.canceled(res);
      // Note: the created header's revision is the store's current revision, NOT a proof that
      // anything was delivered (the client bug described at the top): it is deliberately ignored.
      return;
    }
    // watch_id "-1" is an on-demand progress reply (never requested here, unsafe on 3.4.23).
    if (res.watch_id !== this.watchId) return;
    if (res.canceled) {
      this.canceled(res);
      return;
    }
    if (res.events.length === 0) {
      // Periodic progress notification: sent only once this watcher has caught up, in order with
      // its events, so every event up to header.revision has been delivered.
      this.advance(Number(res.header.revision));
      return;
    }
    const before = this.resumeRV;
    let last = before;
    for (const ev of res.events) {
      const rv = Number(ev.kv.mod_revision);
      // Invariant: no duplicates across reconnects, revision order. Anything at or below the resume
      // point was delivered before; a revision below one already delivered would be out of order.
      if (rv <= before || rv < last) continue;
      last = rv;
      const event = this.backend.decodeEvent(ev);
      if (event === undefined) continue;
      deliver(this.onEvent, event);
      if (this.stopped) return;
    }
    // A response holds whole revisions (no fragments): everything up to `last` is delivered.
    if (last > this.resumeRV) this.resumeRV = last;
  }

  private canceled(res: IWatchResponse): void {
    const compactRev = Number(res.compact_revision);
    if (compactRev > 0) {
      this.fail(new StoreCompactedError(this.resumeRV, compactRev));
    } else {
      this.fail(
        new StoreUnavailableError(
          `etcd canceled the watch on ${this.backend.prefix}: ${res.cancel_reason || 'no reason given'}`,
        ),
      );
    }
  }

  /** The watch has provably delivered everything up to `rv`. */
  private advance(rv: number): void {
    if (this.stopped || rv < this.resumeRV) return;
    this.resumeRV = rv;
    if (rv > this.lastProgress) {
      this.lastProgress = rv;
      if (this.onProgress !== undefined) deliver(this.onProgress, rv);
    }
  }

  private streamFailed(err: Error): void {
    if (this.stopped) return;
    this.abandonStream();
    const { clock, watchReconnectTimeoutMs } = this.backend;
    const now = clock.now();
    if (this.outageSince === undefined) this.outageSince = now;
    this.backend.health.fail(this, err);
    if (now - this.outageSince >= watchReconnectTimeoutMs) {
      this.fail(
        new StoreUnavailableError(
          `etcd watch on ${this.backend.prefix} could not resume from revision ${this.resumeRV + 1} for ${Math.round(now - this.outageSince)} ms: ${err.message}`,
          { cause: err },
        ),
      );
      return;
    }
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_BACKOFF_MAX_MS);
    this.setTimer(clock.setTimeout(() => this.connect(), delay));
  }

  requestProgress(): void {
    if (this.stopped) return;
    const { clock, requestTimeoutMs } = this.backend;
    this.progressWantedUntil = clock.now() + requestTimeoutMs;
    if (this.proving) {
      this.proveAgain = true;
      return;
    }
    void this.proveLoop();
  }

  private async proveLoop(): Promise<void> {
    const { clock } = this.backend;
    this.proving = true;
    try {
      while (!this.stopped && clock.now() < this.progressWantedUntil) {
        this.proveAgain = false;
        const after = this.resumeRV;
        const result = await this.backend.proveNoChangesSince(after);
        if (typeof result === 'number') {
          // No event exists in (after, result]; events above `result` may have been delivered
          // meanwhile, in which case advance() ignores the older proof.
          this.advance(result);
          if (!this.proveAgain) return;
          continue;
        }
        if (result === undefined && !this.proveAgain) return;
        // Pending changes: wait for their events, then prove again.
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 50));
      }
    } catch {
      // etcd unavailable: periodic notifications and the reconnect path take over.
    } finally {
      this.proving = false;
    }
  }

  /** Report a terminal error once and stop. */
  fail(err: Error): void {
    if (this.stopped) return;
    this.stop();
    deliver(this.onError, err);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abandonStream();
    this.backend.forget(this);
    this.backend.health.recover(this); // a stopped watch no longer speaks for the store (a relist will)
  }

  private abandonStream(): void {
    this.generation++;
    this.clearTimer();
    if (this.stream !== undefined) {
      closeStream(this.stream);
      this.stream = undefined;
    }
    this.watchId = undefined;
  }

  private setTimer(handle: TimerHandle): void {
    this.clearTimer();
    this.timer = handle;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      this.backend.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}

/**
 * Call a consumer callback. It runs inside the gRPC stream's 'data' handler, so an exception is
 * re-thrown on a later tick instead of unwinding through grpc-js (the event counts as delivered).
 */
function deliver<T>(callback: (value: T) => void, value: T): void {
  try {
    callback(value);
  } catch (err) {
    setImmediate(() => {
      throw err;
    });
  }
}

/**
 * Close a raw watch stream. end() first: the client's own 'error' hook on the stream treats a
 * CANCELLED error on a still-writable stream as a host failure and resets every connection.
 */
function closeStream(stream: WatchStream): void {
  stream.on('error', () => undefined);
  try {
    stream.end();
  } catch {
    /* already closed */
  }
  try {
    stream.cancel();
  } catch {
    /* already closed */
  }
}

function isUnavailable(err: unknown): boolean {
  if (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCCancelledError ||
    err instanceof GRPCInternalError ||
    err instanceof GRPCResourceExhastedError ||
    err instanceof ClientClosedError
  ) {
    return true;
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (code === 1 || code === 4 || code === 8 || code === 13 || code === 14) return true;
    return /ECONNREFUSED|ECONNRESET|UNAVAILABLE|DEADLINE_EXCEEDED|no leader|leader changed|request timed out/i.test(
      err.message,
    );
  }
  return false;
}

/** The end of the key range with prefix `p`: p with its last byte incremented (carrying over 0xff). */
function prefixEnd(p: Buffer): Buffer {
  const end = Buffer.from(p);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // all 0xff: to the end of the keyspace
}

/** The stored form: the object without metadata.resourceVersion (set on every read instead). */
function encodeObject(object: KubeObject, metadata: KubeObject['metadata']): Buffer {
  const { resourceVersion: _omit, ...stored } = metadata;
  return Buffer.from(JSON.stringify({ ...object, metadata: stored }));
}

function decodeObject(value: Buffer, rv: number, limits: ObjectLimits): KubeObject | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  // The store-read boundary: anything without the stored shape (too deep, wrong types) is invisible.
  const obj = readableObject(parsed, limits);
  if (obj === undefined) return undefined;
  return freeze(obj, obj.metadata, rv);
}

/** A frozen copy (object and metadata) with metadata.resourceVersion = rv, as MemoryStore hands out. */
function freeze(object: KubeObject, metadata: KubeObject['metadata'], rv: number): KubeObject {
  const meta = Object.freeze({ ...metadata, resourceVersion: String(rv) });
  return markChecked(Object.freeze({ ...object, metadata: meta }));
}
