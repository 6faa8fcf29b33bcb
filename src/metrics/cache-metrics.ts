/**
 * Every metric of API.md, registered in one prom-client Registry per cache
 * (or a shared one given by the user), each with `group` and `resource`
 * labels. Children are bound once here so hot paths only call inc/set.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ResourceInfo } from '../core/types.js';
import type { EncodingCounter } from '../wire/watch-event.js';

/** seed 001: apiserver_watch_cache_read_wait_seconds buckets. */
const READ_WAIT_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3];

export type TerminationReason = 'unresponsive' | 'resource_expired' | 'resource_expired_initial';

function counter<T extends string>(registry: Registry, name: string, help: string, labelNames: T[]): Counter<T> {
  const existing = registry.getSingleMetric(name);
  if (existing !== undefined) return existing as Counter<T>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}
function gauge<T extends string>(registry: Registry, name: string, help: string, labelNames: T[]): Gauge<T> {
  const existing = registry.getSingleMetric(name);
  if (existing !== undefined) return existing as Gauge<T>;
  return new Gauge({ name, help, labelNames, registers: [registry] });
}
function histogram<T extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: T[],
  buckets: number[],
): Histogram<T> {
  const existing = registry.getSingleMetric(name);
  if (existing !== undefined) return existing as Histogram<T>;
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

type GR = 'group' | 'resource';

export class CacheMetrics implements EncodingCounter {
  readonly registry: Registry;
  /** Called before a read: owners of metrics they write once per turn bring them up to date. */
  readonly beforeRead: Array<() => void> = [];
  readonly stalls;
  readonly deferredEvents;
  readonly catchupRounds;
  readonly catchupEvents;
  readonly stalledWatchers;
  readonly skippedEvents;
  readonly terminated: Record<TerminationReason, { inc(n?: number): void }>;
  readonly readWait;
  readonly consistentRead: Counter<GR | 'success' | 'fallback'>;
  readonly encodings: Record<'json' | 'msgpack', { inc(n?: number): void }>;
  readonly capacity;
  readonly passDuration;
  readonly registeredWatchers;
  readonly eventsDispatched;
  readonly syncWorkerRestarts;
  private readonly labels: { group: string; resource: string };

  constructor(resource: ResourceInfo, registry: Registry = new Registry()) {
    this.registry = registry;
    const labels = { group: resource.group, resource: resource.resource };
    this.labels = labels;
    const gr: GR[] = ['group', 'resource'];
    this.stalls = counter(
      registry,
      'apiserver_watch_cache_watcher_stalls_total',
      'Transitions of watchers from synced to unsynced.',
      gr,
    ).labels(labels);
    this.deferredEvents = counter(
      registry,
      'apiserver_watch_cache_watcher_deferred_events_total',
      'Events pushed by sync passes rather than by the live path.',
      gr,
    ).labels(labels);
    this.catchupRounds = counter(
      registry,
      'apiserver_watch_cache_watcher_catchup_rounds_total',
      'Transitions of watchers from unsynced back to synced.',
      gr,
    ).labels(labels);
    this.catchupEvents = histogram(
      registry,
      'apiserver_watch_cache_watcher_catchup_events',
      'Events pushed to one watcher between going unsynced and resyncing.',
      gr,
      [1, 10, 100, 1000, 10000, 100000, 1000000],
    ).labels(labels);
    this.stalledWatchers = gauge(
      registry,
      'apiserver_watch_cache_stalled_watchers',
      'Number of unsynced watchers.',
      gr,
    ).labels(labels);
    this.skippedEvents = counter(
      registry,
      'apiserver_watch_cache_watcher_skipped_events_total',
      'Events the live path skipped because they were at or below a watcher position.',
      gr,
    ).labels(labels);
    const term = counter(registry, 'apiserver_terminated_watchers_total', 'Watchers closed by the cache, by reason.', [
      ...gr,
      'reason',
    ]);
    this.terminated = {
      unresponsive: term.labels({ ...labels, reason: 'unresponsive' }),
      resource_expired: term.labels({ ...labels, reason: 'resource_expired' }),
      resource_expired_initial: term.labels({ ...labels, reason: 'resource_expired_initial' }),
    };
    this.readWait = histogram(
      registry,
      'apiserver_watch_cache_read_wait_seconds',
      'Time reads waited for the cache to be fresh enough.',
      gr,
      READ_WAIT_BUCKETS,
    ).labels(labels);
    this.consistentRead = counter(
      registry,
      'apiserver_watch_cache_consistent_read_total',
      'Consistent reads served from the cache, by success and fallback.',
      [...gr, 'success', 'fallback'],
    );
    const enc = counter(
      registry,
      'apiserver_watch_cache_event_encodings_total',
      'Event encodings made, by format (one per event per format).',
      [...gr, 'format'],
    );
    this.encodings = {
      json: enc.labels({ ...labels, format: 'json' }),
      msgpack: enc.labels({ ...labels, format: 'msgpack' }),
    };
    this.capacity = gauge(
      registry,
      'apiserver_watch_cache_capacity',
      'Capacity of the watch cache history.',
      gr,
    ).labels(labels);
    this.passDuration = histogram(
      registry,
      'apiserver_watch_cache_sync_pass_duration_seconds',
      'Duration of sync passes.',
      gr,
      [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05],
    ).labels(labels);
    this.registeredWatchers = gauge(
      registry,
      'apiserver_registered_watchers',
      'Number of registered watchers.',
      gr,
    ).labels(labels);
    this.eventsDispatched = counter(
      registry,
      'apiserver_watch_cache_events_dispatched_total',
      'Events dispatched by the live path.',
      gr,
    ).labels(labels);
    this.syncWorkerRestarts = counter(
      registry,
      'apiserver_watch_cache_sync_worker_restarts_total',
      'Times the beta sync worker died and was restarted.',
      gr,
    ).labels(labels);
    // Zero-initialise the labelled series so every name shows up from the start.
    for (const success of ['true', 'false'])
      for (const fallback of ['true', 'false', 'skipped'])
        this.consistentRead.labels({ ...labels, success, fallback }).inc(0);
  }

  /**
   * Batch a writer's prom-client updates: the function returned schedules
   * `flush` once, at the end of this turn (a microtask), however often it is
   * called before; a read of the metrics (`value`) runs a pending flush
   * first. A labelled prom-client update hashes its labels (~0.5-3 µs), too
   * much per event or per watcher on the live path.
   */
  batched(flush: () => void): () => void {
    let dirty = false;
    const run = (): void => {
      if (!dirty) return;
      dirty = false;
      flush();
    };
    this.beforeRead.push(run);
    return () => {
      if (dirty) return;
      dirty = true;
      queueMicrotask(run);
    };
  }

  /** One encoding made: counted here, added to the prom-client counter once per turn (batched). */
  encoded(format: 'json' | 'msgpack'): void {
    if (format === 'json') this.pendingJson++;
    else this.pendingMsgpack++;
    this.encodingsChanged();
  }

  private pendingJson = 0;
  private pendingMsgpack = 0;
  private readonly encodingsChanged = this.batched(() => {
    if (this.pendingJson > 0) this.encodings.json.inc(this.pendingJson);
    if (this.pendingMsgpack > 0) this.encodings.msgpack.inc(this.pendingMsgpack);
    this.pendingJson = 0;
    this.pendingMsgpack = 0;
  });

  consistentReadDone(success: boolean, fallback: 'true' | 'false' | 'skipped'): void {
    this.consistentRead.labels({ ...this.labels, success: String(success), fallback }).inc();
  }

  /** Current value of a counter/gauge series of this cache (tests and reports). */
  async value(name: string, extra: Record<string, string> = {}): Promise<number> {
    for (const flush of this.beforeRead) flush();
    const metric = this.registry.getSingleMetric(name);
    if (metric === undefined) throw new Error(`no metric ${name}`);
    const data = await metric.get();
    let sum = 0;
    for (const v of data.values) {
      const l = v.labels as Record<string, string | number>;
      if (l.group !== this.labels.group || l.resource !== this.labels.resource) continue;
      if (!Object.entries(extra).every(([k, x]) => String(l[k]) === x)) continue;
      // Counters and gauges: their value; histograms: only the _count series (not buckets or _sum).
      const series = (v as { metricName?: string }).metricName;
      if (series === undefined || series === name || series === `${name}_count`) sum += v.value;
    }
    return sum;
  }
}
