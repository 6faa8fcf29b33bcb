/**
 * The server limits' counters (prom-client, in the first cache's registry,
 * served at /metrics):
 *   watchcache_response_buffer_overflows_total{scope}   responses ended because their
 *       connection (`connection`) or the server (`server`) had too many bytes buffered
 *   watchcache_request_timeouts_total                    non-watch requests answered 504
 *       by the request timeout
 *   watchcache_idle_connections_closed_total{protocol}   HTTP/2 sessions closed as idle
 * A registry shared by several servers gets each counter once.
 */
import { Counter, type Registry } from 'prom-client';

export interface LimitMetrics {
  readonly overflows: Counter<'scope'>;
  readonly requestTimeouts: Counter;
  readonly idleClosed: Counter<'protocol'>;
}

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing !== undefined) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

export function limitMetrics(registry: Registry): LimitMetrics {
  return {
    overflows: counter(
      registry,
      'watchcache_response_buffer_overflows_total',
      'Responses ended because their connection or the server had too many response bytes buffered.',
      ['scope'],
    ),
    requestTimeouts: counter(
      registry,
      'watchcache_request_timeouts_total',
      'Non-watch requests answered 504 Timeout by the request timeout.',
      [],
    ),
    idleClosed: counter(
      registry,
      'watchcache_idle_connections_closed_total',
      'HTTP/2 sessions closed after the idle timeout with no open stream.',
      ['protocol'],
    ),
  };
}
