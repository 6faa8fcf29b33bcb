/**
 * Reflector: keeps the cache in step with its store. Lists, then watches
 * from the list RV; every event goes to the sink in RV order. A broken watch
 * re-lists (at once after a compaction, else after a back-off growing from
 * 1 s to 30 s). RVs never go backwards: an event at or below the last one is
 * dropped. The reflector is the store-read boundary for any Store: objects
 * without the stored shape (store/stored-shape.ts) are invisible, so no odd
 * object can break selection, encoding or the beta ring mirror.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { KubeObject, Store, StoreEvent, StoreWatch } from '../core/types.js';
import { StoreCompactedError } from '../store/store-errors.js';
import { readableEvent, readableObject } from '../store/stored-shape.js';

export interface ReflectorSink {
  /** A successful (re)list. */
  replace(items: KubeObject[], resourceVersion: number): void;
  /** One change, RV strictly above every earlier one. */
  apply(event: StoreEvent): void;
  /** The store reached `rv` with nothing new for this cache. */
  progress(rv: number): void;
  /** The watch broke or a list failed (for logs and readiness). */
  failed(error: Error): void;
}

const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

export class Reflector {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly sink: ReflectorSink;
  private watch: StoreWatch | undefined;
  private lastRV = 0;
  private stopped = false;
  private retryTimer: TimerHandle | undefined;
  private backoffMs = MIN_BACKOFF_MS;
  private generation = 0;
  /** True while a store watch is running. */
  watching = false;

  constructor(store: Store, clock: Clock, sink: ReflectorSink) {
    this.store = store;
    this.clock = clock;
    this.sink = sink;
  }

  /** List and watch once; rejects if the first list fails. Later failures retry by themselves. */
  async start(): Promise<void> {
    await this.listAndWatch();
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    this.watch?.stop();
    this.watch = undefined;
    this.watching = false;
    if (this.retryTimer !== undefined) this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private async listAndWatch(): Promise<void> {
    const gen = ++this.generation;
    const { items, resourceVersion } = await this.store.list();
    if (this.stopped || gen !== this.generation) return;
    this.lastRV = resourceVersion;
    this.sink.replace(readableItems(items), resourceVersion);
    this.watch = this.store.watch(
      resourceVersion,
      (event) => {
        if (gen !== this.generation) return;
        // RVs never go backwards: drop anything at or below what was applied.
        if (event.resourceVersion <= this.lastRV) return;
        this.lastRV = event.resourceVersion;
        this.backoffMs = MIN_BACKOFF_MS;
        const fit = readableEvent(event);
        if (fit !== undefined) this.sink.apply(fit);
        else this.sink.progress(event.resourceVersion); // an invisible change: the RV still advances
      },
      (error) => {
        if (gen !== this.generation) return;
        this.onWatchError(error);
      },
      (rv) => {
        if (gen !== this.generation || rv <= this.lastRV) return;
        this.lastRV = rv;
        this.sink.progress(rv);
      },
    );
    this.watching = true;
  }

  private onWatchError(error: Error): void {
    this.watch?.stop();
    this.watch = undefined;
    this.watching = false;
    this.generation++;
    this.sink.failed(error);
    this.scheduleRelist(error instanceof StoreCompactedError ? 0 : this.backoffMs);
  }

  private scheduleRelist(delayMs: number): void {
    if (this.stopped || this.retryTimer !== undefined) return;
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      this.listAndWatch().catch((err: unknown) => {
        this.sink.failed(err instanceof Error ? err : new Error(String(err)));
        this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
        this.scheduleRelist(this.backoffMs);
      });
    }, delayMs);
  }
}

/** The items readers may see (the same array when every item is). */
function readableItems(items: KubeObject[]): KubeObject[] {
  let out: KubeObject[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const fit = readableObject(items[i]);
    if (fit === items[i] && out === undefined) continue;
    out ??= items.slice(0, i);
    if (fit !== undefined) out.push(fit);
  }
  return out ?? items;
}
