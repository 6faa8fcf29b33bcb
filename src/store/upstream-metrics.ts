/**
 * Metrics of a store in front of an upstream API server (KubeStore), registered once per
 * prom-client Registry and shared by the stores of every resource (label `resource`):
 *   watchcache_upstream_lists_total{resource}             full lists of the upstream (start, re-lists)
 *   watchcache_upstream_watch_connects_total{resource,result}  watch (re)connects: ok | failed | expired
 */
import { Counter, type Registry } from 'prom-client';

export interface UpstreamMetrics {
  listed(): void;
  connected(result: 'ok' | 'failed' | 'expired'): void;
}

function counter(registry: Registry, name: string, help: string, labelNames: string[]): Counter {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** The metrics of one resource's store (a no-op without a registry). */
export function upstreamMetrics(registry: Registry | undefined, resource: string): UpstreamMetrics {
  if (registry === undefined) return { listed: () => undefined, connected: () => undefined };
  const lists = counter(
    registry,
    'watchcache_upstream_lists_total',
    'Full lists of the upstream API server (start and re-lists).',
    ['resource'],
  );
  const connects = counter(
    registry,
    'watchcache_upstream_watch_connects_total',
    'Watch connects to the upstream API server, by result (ok, failed, expired).',
    ['resource', 'result'],
  );
  return {
    listed: () => lists.inc({ resource }),
    connected: (result) => connects.inc({ resource, result }),
  };
}
