/**
 * CacheReads: list and get with Kubernetes RV semantics ('' consistent,
 * '0' any, 'N' not older than N or Exact; limit + continue), served from the
 * cache's object state and history, with the consistent-read fallback to the
 * store (seed 001). WatchCache owns the state; this file owns the reads.
 */
import {
  BadRequestError,
  NotFoundError,
  ResourceExpiredError,
  TooLargeResourceVersionError,
  TooManyRequestsError,
} from '../core/errors.js';
import {
  apiVersionOf,
  objectKey,
  type IndexerFunc,
  type KubeObject,
  type ResourceInfo,
  type Store,
} from '../core/types.js';
import type { EventHistory } from '../history/event-history.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { Selection } from '../selection/selection.js';
import { decodeContinue } from './continue-token.js';
import type { Freshness } from './freshness.js';
import { buildPage, type ListPage } from './list-page.js';
import { splitKey, type ObjectState } from './object-state.js';
import { validateListOptions, type GetOptions, type ListOptions } from './request-options.js';

export interface ListResult {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KubeObject[];
}

/** What the reads use of the cache. */
export interface CacheReadsDeps {
  readonly store: Store;
  readonly state: ObjectState;
  readonly history: EventHistory;
  readonly freshness: Freshness;
  readonly counters: CacheMetrics;
  readonly resource: ResourceInfo;
  readonly indexers: Record<string, IndexerFunc>;
  readonly triggerField: string | undefined;
  readonly skipTimeoutFallback: boolean;
  cacheRV(): number;
  normalize(o: KubeObject): KubeObject;
  checkRunning(): void;
  consistentRV(): Promise<number>;
}

export class CacheReads {
  private readonly deps: CacheReadsDeps;

  constructor(deps: CacheReadsDeps) {
    this.deps = deps;
  }

  /** List with Kubernetes RV semantics ('' consistent, '0' any, 'N' NotOlderThan or Exact; limit + continue). */
  async list(options: ListOptions = {}): Promise<ListResult> {
    const v = validateListOptions(options);
    const selection = new Selection(
      { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
      this.deps.indexers,
      this.deps.triggerField,
    );
    this.deps.checkRunning();
    let page: ListPage;
    if (options.continue !== undefined && options.continue !== '') {
      const point = decodeContinue(options.continue);
      page = this.pageAt(point.rv, selection, v.limit, point.start, true);
    } else if (v.rv === '') {
      page = await this.consistentRead(
        () => this.pageNow(selection, v.limit),
        async () => {
          const snap = await this.deps.store.list();
          const byKey = new Map(
            snap.items.map((o) => [
              objectKey(o.metadata.namespace ?? '', o.metadata.name ?? ''),
              this.deps.normalize(o),
            ]),
          );
          return buildPage(
            [...byKey.keys()].sort(),
            (k) => byKey.get(k),
            selection,
            snap.resourceVersion,
            v.limit,
            undefined,
          );
        },
      );
    } else if (v.rv === 0) {
      page = this.pageNow(selection, v.limit);
    } else {
      await this.deps.freshness.wait(v.rv);
      page =
        v.match === 'Exact'
          ? this.pageAt(v.rv, selection, v.limit, undefined, false)
          : this.pageNow(selection, v.limit);
    }
    const metadata: ListResult['metadata'] = { resourceVersion: String(page.resourceVersion) };
    if (page.continue !== undefined) metadata.continue = page.continue;
    if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
    return {
      apiVersion: apiVersionOf(this.deps.resource),
      kind: `${this.deps.resource.kind}List`,
      metadata,
      items: page.items,
    };
  }

  /** Get one object ('' consistent, '0' any, 'N' not older than N). */
  async get(namespace: string, name: string, options: GetOptions = {}): Promise<KubeObject> {
    const v = validateListOptions({ resourceVersion: options.resourceVersion });
    if (typeof name !== 'string' || name === '') throw new BadRequestError('name is required');
    this.deps.checkRunning();
    const lookup = (): KubeObject => {
      const obj = this.deps.state.get(namespace ?? '', name);
      if (obj === undefined) throw new NotFoundError(this.deps.resource.kind, name);
      return obj;
    };
    if (v.rv === '') {
      return this.consistentRead(lookup, async () => {
        const snap = await this.deps.store.list();
        const obj = snap.items.find(
          (o) => (o.metadata.namespace ?? '') === (namespace ?? '') && o.metadata.name === name,
        );
        if (obj === undefined) throw new NotFoundError(this.deps.resource.kind, name);
        return this.deps.normalize(obj);
      });
    }
    if (v.rv !== 0) await this.deps.freshness.wait(v.rv);
    return lookup();
  }

  /**
   * Consistent read (seed 001): wait until the cache has the store's current
   * RV, then serve from the cache; on timeout fall back to the store, or
   * answer 429 when skipTimeoutFallback is set.
   */
  private async consistentRead<T>(fromCache: () => T, fromStore: () => Promise<T>): Promise<T> {
    const target = await this.deps.consistentRV();
    try {
      await this.deps.freshness.wait(target);
    } catch (err) {
      if (!(err instanceof TooLargeResourceVersionError)) throw err;
      if (this.deps.skipTimeoutFallback) {
        this.deps.counters.consistentReadDone(false, 'skipped');
        throw new TooManyRequestsError(err.message, 1);
      }
      try {
        const result = await fromStore();
        this.deps.counters.consistentReadDone(true, 'true');
        return result;
      } catch (fallbackErr) {
        this.deps.counters.consistentReadDone(false, 'true');
        throw fallbackErr;
      }
    }
    try {
      const result = fromCache();
      this.deps.counters.consistentReadDone(true, 'false');
      return result;
    } catch (e) {
      this.deps.counters.consistentReadDone(false, 'false');
      throw e;
    }
  }

  private pageNow(selection: Selection, limit: number): ListPage {
    return buildPage(
      this.deps.state.keys(),
      (k) => this.deps.state.get(...splitKey(k)),
      selection,
      this.deps.cacheRV(),
      limit,
      undefined,
    );
  }

  /** A page of the state exactly at `rv` (410 if the history no longer reaches back to it). */
  private pageAt(
    rv: number,
    selection: Selection,
    limit: number,
    start: string | undefined,
    fromContinue: boolean,
  ): ListPage {
    if (rv > this.deps.cacheRV()) throw new TooLargeResourceVersionError(rv, this.deps.cacheRV());
    if (rv === this.deps.cacheRV())
      return buildPage(this.deps.state.keys(), (k) => this.deps.state.get(...splitKey(k)), selection, rv, limit, start);
    if (this.deps.history.isTooOld(rv)) {
      const oldest = this.deps.history.oldestServableRV();
      throw fromContinue
        ? new ResourceExpiredError(
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
          )
        : ResourceExpiredError.tooOld(rv, oldest === undefined ? this.deps.cacheRV() : oldest - 1);
    }
    const after = [];
    for (let i = this.deps.history.indexAfter(rv); i < this.deps.history.endIndex; i++)
      after.push(this.deps.history.at(i));
    const state = this.deps.state.stateAt(after);
    return buildPage([...state.keys()].sort(), (k) => state.get(k), selection, rv, limit, start);
  }
}
