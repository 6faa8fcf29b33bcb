/**
 * KubeStore: one resource of an upstream Kubernetes API server (a kube-apiserver or another
 * `watchcache serve`) as the backing store: watchcache in front of it is a read-through caching
 * proxy, and proxies stack into a tree (API.md "Stores").
 *
 * - list(): a paginated list (`limit` = pageSize, then `continue`) pinned by the upstream to the
 *   first page's RV; a continue token that expired (410) restarts the list. With initialEvents
 *   'stream', a watch-list instead (the state streamed as events; the stream then becomes the watch).
 * - watch(afterRV): the upstream's watch from afterRV with bookmarks (see kube-watch.ts for the
 *   invariants: once, in order, resumed across broken streams, bookmarks are progress, 410 is
 *   StoreCompactedError).
 * - currentResourceVersion(): a `limit=1` list's metadata.resourceVersion (a consistent read on the
 *   upstream), so consistent reads here are consistent with the upstream.
 * - RVs are the upstream's, unchanged (they must be decimal integers, as etcd revisions are).
 * - Writes (create, update, delete, patch) go to the upstream as they are; the answer is the
 *   upstream's body (its code is kept, see upstream-response.ts); an error answer is an
 *   UpstreamStatusError carrying the upstream's Status and code, so the server answers exactly it.
 *   An unreachable upstream is StoreUnavailableError (503, Retry-After 1).
 * - Reachability: `health` (StoreHealth, as EtcdStore's) fails while the watch or a list cannot
 *   reach the upstream (a connection refused, a 5xx), so /readyz is 503 and the outage and the
 *   recovery are logged once each.
 */
import type { IncomingMessage } from 'node:http';
import type { Registry } from 'prom-client';
import { realClock, type Clock } from '../core/clock.js';
import { BadRequestError } from '../core/errors.js';
import type { KubeObject, Store, StoreEvent, StoreListResult, StoreWatch } from '../core/types.js';
import type { Status } from '../core/errors.js';
import { KubeClient, upstreamError, type KubeClientOptions } from './kube-client.js';
import { KubeWatch, wireRV, type KubeWatchBackend } from './kube-watch.js';
import { KubeWatchStream, type WireWatchEvent } from './kube-watch-stream.js';
import type { PatchingStore, PatchRequest } from './patch-request.js';
import { StoreUnavailableError, UpstreamStatusError } from './store-errors.js';
import { StoreHealth } from './store-health.js';
import { upstreamMetrics, type UpstreamMetrics } from './upstream-metrics.js';
import { rememberUpstreamCode } from './upstream-response.js';
import { identify } from './write-preconditions.js';

/** The upstream resource: where it lives in the API. */
export interface KubeResource {
  /** '' for the core group. */
  group: string;
  version: string;
  /** Plural name, e.g. pods. */
  resource: string;
  namespaced: boolean;
}

export interface KubeStoreOptions {
  /** How to reach the upstream (or a client shared by the stores of several resources). */
  upstream: KubeClientOptions | KubeClient;
  /** Whether close() also closes the client (default: only a client this store made itself). */
  closeUpstream?: boolean;
  resource: KubeResource;
  /** Items per list page (default 500, kubectl's). */
  pageSize?: number;
  clock?: Clock;
  /** timeoutSeconds of a progress probe watch (default 3; see kube-watch.ts). */
  probeTimeoutSeconds?: number;
  /** Where to count lists and watch connects (upstream-metrics.ts); none without. */
  registry?: Registry;
  /**
   * How to get the initial state: 'list' (default: paginated lists) or 'stream' (a watch-list:
   * `sendInitialEvents=true`, the state as ADDED events up to the initial-events-end bookmark, and
   * the same stream then carries the watch). 'stream' falls back to lists for good when the
   * upstream refuses it (a 4xx) or sends no initial-events-end bookmark within 30 s.
   */
  initialEvents?: 'list' | 'stream';
}

/** A watch-list stream that ended a list(), waiting for the watch from its RV to adopt it. */
interface ParkedStream {
  rv: number;
  stream: KubeWatchStream;
  pending: WireWatchEvent[];
  /** false while open; the end (undefined: clean) once ended. */
  ended: Error | undefined | false;
  timer: NodeJS.Timeout;
}

interface ListBody {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

const DEFAULT_PAGE_SIZE = 500;
const WATCH_LIST_BOOKMARK_TIMEOUT_MS = 30_000;
const PARKED_STREAM_TIMEOUT_MS = 10_000;
const MAX_LIST_ATTEMPTS = 3;

/** The upstream does not offer watch-lists (KubeStore falls back to paginated lists). */
class WatchListUnsupported extends Error {}

export class KubeStore implements Store, PatchingStore {
  readonly resource: KubeResource;
  private readonly client: KubeClient;
  private readonly ownsClient: boolean;
  private readonly pageSize: number;
  private readonly watches = new Set<KubeWatch>();
  private readonly backend: KubeWatchBackend;
  /** Reachability as the watches and lists see it: /readyz is 503 and the runtime logs while unhealthy. */
  readonly health = new StoreHealth();
  private streamInitialEvents: boolean;
  private parked: ParkedStream | undefined;
  private readonly metrics: UpstreamMetrics;
  private closed = false;

  constructor(options: KubeStoreOptions) {
    this.resource = options.resource;
    this.ownsClient = options.closeUpstream ?? !(options.upstream instanceof KubeClient);
    this.client = options.upstream instanceof KubeClient ? options.upstream : new KubeClient(options.upstream);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.streamInitialEvents = options.initialEvents === 'stream';
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1)
      throw new BadRequestError('pageSize must be an integer >= 1');
    const clock = options.clock ?? realClock;
    const metrics = (this.metrics = upstreamMetrics(options.registry, options.resource.resource));
    this.backend = {
      clock,
      probeTimeoutSeconds: options.probeTimeoutSeconds ?? 3,
      openWatch: (rv, signal, timeoutSeconds, initialEvents) =>
        this.openWatch(rv, signal, timeoutSeconds, initialEvents),
      reached: (ok, error) => {
        metrics.connected(ok ? 'ok' : 'failed');
        if (ok) this.health.recover(this);
        else this.health.fail(this, this.reason(error));
      },
      expired: () => metrics.connected('expired'),
      forget: (w) => void this.watches.delete(w),
    };
  }

  // ---------------------------------------------------------------- reads

  async list(): Promise<StoreListResult> {
    try {
      const result = await this.listAny();
      this.health.recover(this);
      return result;
    } catch (err) {
      // Not reachable at all (the cache cannot even start): /readyz names the upstream too.
      if (err instanceof StoreUnavailableError) this.health.fail(this, this.reason(err));
      throw err;
    }
  }

  private async listAny(): Promise<StoreListResult> {
    this.unpark();
    if (this.streamInitialEvents) {
      try {
        return await this.listByStream();
      } catch (err) {
        if (!(err instanceof WatchListUnsupported)) throw err;
        this.streamInitialEvents = false; // the upstream does not offer it: lists from now on
      }
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.listOnce();
      } catch (err) {
        // The continue token expired between pages (the upstream compacted): list again.
        if (err instanceof UpstreamStatusError && err.code === 410 && attempt < MAX_LIST_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  private async listOnce(): Promise<StoreListResult> {
    this.metrics.listed();
    const items: KubeObject[] = [];
    let token: string | undefined;
    let rv: number | undefined;
    do {
      const { body } = await this.client.json<ListBody>({
        path: this.collectionPath(),
        query: { limit: String(this.pageSize), continue: token },
      });
      // The first page fixes the RV; the upstream pins every continued page to it.
      rv ??= this.listRV(body);
      for (const item of body.items ?? []) items.push(item);
      token = body.metadata?.continue === '' ? undefined : body.metadata?.continue;
    } while (token !== undefined);
    return { items, resourceVersion: rv };
  }

  /** The state from a watch-list stream; the stream is parked for the watch from its RV. */
  private async listByStream(): Promise<StoreListResult> {
    this.metrics.listed();
    const abort = new AbortController();
    const res = await this.client.stream(
      {
        path: this.collectionPath(),
        query: {
          watch: 'true',
          sendInitialEvents: 'true',
          resourceVersionMatch: 'NotOlderThan',
          allowWatchBookmarks: 'true',
        },
      },
      abort.signal,
    );
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const err = upstreamError(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'));
      if (err.code >= 400 && err.code < 500 && err.code !== 410 && err.code !== 429)
        throw new WatchListUnsupported(err.message);
      throw err;
    }
    return new Promise<StoreListResult>((resolve, reject) => {
      const items: KubeObject[] = [];
      let parked: ParkedStream | undefined;
      const timer = setTimeout(() => {
        stream.close();
        reject(new WatchListUnsupported(`no initial-events-end bookmark within ${WATCH_LIST_BOOKMARK_TIMEOUT_MS} ms`));
      }, WATCH_LIST_BOOKMARK_TIMEOUT_MS);
      const stream: KubeWatchStream = new KubeWatchStream(res, {
        onEvent: (ev) => {
          if (parked !== undefined) return void parked.pending.push(ev);
          if (ev.type === 'ADDED') return void items.push(ev.object);
          if (ev.type === 'ERROR') {
            clearTimeout(timer);
            stream.close();
            const status = ev.object as unknown as Status;
            return reject(new UpstreamStatusError(typeof status.code === 'number' ? status.code : 500, status));
          }
          if (ev.type !== 'BOOKMARK' || ev.object.metadata.annotations?.['k8s.io/initial-events-end'] !== 'true')
            return;
          clearTimeout(timer);
          const rv = wireRV(ev.object);
          if (rv === undefined) {
            stream.close();
            return reject(
              new StoreUnavailableError(
                `${this.client.server.origin}: an initial-events-end bookmark without a decimal resourceVersion`,
              ),
            );
          }
          // The reflector watches from this RV right after the list: keep the stream for it.
          parked = {
            rv,
            stream,
            pending: [],
            ended: false,
            timer: setTimeout(() => this.unpark(), PARKED_STREAM_TIMEOUT_MS),
          };
          parked.timer.unref();
          this.parked = parked;
          resolve({ items, resourceVersion: rv });
        },
        onEnd: (err) => {
          clearTimeout(timer);
          if (parked !== undefined) parked.ended = err;
          else
            reject(
              new StoreUnavailableError(
                `${this.client.server.origin}: the watch-list ended before its initial-events-end bookmark${err === undefined ? '' : `: ${err.message}`}`,
              ),
            );
        },
      });
    });
  }

  /** Drop a parked watch-list stream nobody adopted. */
  private unpark(): void {
    const p = this.parked;
    if (p === undefined) return;
    this.parked = undefined;
    clearTimeout(p.timer);
    p.stream.close();
  }

  async currentResourceVersion(): Promise<number> {
    const { body } = await this.client.json<ListBody>({ path: this.collectionPath(), query: { limit: '1' } });
    return this.listRV(body);
  }

  async get(namespace: string, name: string): Promise<KubeObject> {
    return (await this.client.json<KubeObject>({ path: this.objectPath(namespace, name) })).body;
  }

  // ---------------------------------------------------------------- writes

  create(object: KubeObject): Promise<KubeObject> {
    const { namespace } = identify(object);
    return this.write({ method: 'POST', path: this.collectionPath(namespace), body: JSON.stringify(object) });
  }

  update(object: KubeObject): Promise<KubeObject> {
    const { namespace, name } = identify(object);
    return this.write({ method: 'PUT', path: this.objectPath(namespace, name), body: JSON.stringify(object) });
  }

  /** Delete with the given preconditions (as DeleteOptions). */
  delete(
    namespace: string,
    name: string,
    options: { resourceVersion?: string; uid?: string } = {},
  ): Promise<KubeObject> {
    const preconditions: Record<string, string> = {};
    if (options.resourceVersion !== undefined) preconditions.resourceVersion = options.resourceVersion;
    if (options.uid !== undefined) preconditions.uid = options.uid;
    const body = {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}),
    };
    return this.write({ method: 'DELETE', path: this.objectPath(namespace, name), body: JSON.stringify(body) });
  }

  /** PATCH forwarded as it is: the same body and Content-Type, fieldManager and force. */
  patch(namespace: string, name: string, request: PatchRequest): Promise<KubeObject> {
    return this.write({
      method: 'PATCH',
      path: this.objectPath(namespace, name),
      body: request.body,
      contentType: request.contentType,
      query: {
        fieldManager: request.fieldManager,
        force: request.force === undefined ? undefined : String(request.force),
      },
    });
  }

  private async write(req: Parameters<KubeClient['json']>[0]): Promise<KubeObject> {
    this.checkOpen();
    const { status, body } = await this.client.json<KubeObject>(req);
    return rememberUpstreamCode(body, status);
  }

  // ---------------------------------------------------------------- watch

  watch(
    afterRV: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (resourceVersion: number) => void,
  ): StoreWatch {
    if (!Number.isSafeInteger(afterRV) || afterRV < 0)
      throw new BadRequestError(`invalid watch resource version ${afterRV}`);
    const w = new KubeWatch(this.backend, afterRV, { onEvent, onError, onProgress });
    if (this.closed) {
      queueMicrotask(() => onError(new StoreUnavailableError('KubeStore is closed')));
      return { stop: () => w.stop() };
    }
    this.watches.add(w);
    const p = this.parked;
    if (p !== undefined && p.rv === afterRV) {
      // The list's own stream continues as this watch: no second request.
      this.parked = undefined;
      clearTimeout(p.timer);
      w.adopt(p.stream, p.pending, p.ended);
    } else {
      this.unpark();
      w.connect();
    }
    return { stop: () => w.stop() };
  }

  /** Ask every watch to prove progress (a probe watch, see kube-watch.ts). */
  requestProgress(): void {
    for (const w of this.watches) w.requestProgress();
  }

  /** Stop every watch and drop the connections. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unpark();
    for (const w of [...this.watches]) w.stop();
    if (this.ownsClient) this.client.close();
  }

  // ---------------------------------------------------------------- paths

  private openWatch(
    rv: number,
    signal: AbortSignal,
    timeoutSeconds?: number,
    initialEvents?: boolean,
  ): Promise<IncomingMessage> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('KubeStore is closed'));
    const query: Record<string, string | undefined> = {
      watch: 'true',
      resourceVersion: String(rv),
      allowWatchBookmarks: 'true',
    };
    if (timeoutSeconds !== undefined) query.timeoutSeconds = String(timeoutSeconds);
    if (initialEvents === true)
      Object.assign(query, { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' });
    return this.client.stream({ path: this.collectionPath(), query }, signal);
  }

  /** Why the upstream is unreachable, naming it once. */
  private reason(error: Error | undefined): string {
    const message = error?.message ?? 'unreachable';
    return message.includes(this.client.server.origin) ? message : `${this.client.server.origin}: ${message}`;
  }

  private listRV(body: ListBody): number {
    const rv = wireRV(body);
    if (rv === undefined) {
      throw new StoreUnavailableError(
        `${this.client.server.origin}${this.collectionPath()}: the upstream's list has no decimal metadata.resourceVersion ("${String(body.metadata?.resourceVersion)}")`,
      );
    }
    return rv;
  }

  private base(): string {
    const r = this.resource;
    return r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  }

  /** The collection: all namespaces when `namespace` is absent (or cluster-scoped). */
  private collectionPath(namespace?: string): string {
    const r = this.resource;
    if (!r.namespaced || namespace === undefined || namespace === '') return `${this.base()}/${r.resource}`;
    return `${this.base()}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`;
  }

  private objectPath(namespace: string, name: string): string {
    if (typeof name !== 'string' || name === '') throw new BadRequestError('metadata.name is required');
    return `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreUnavailableError('KubeStore is closed');
  }
}
