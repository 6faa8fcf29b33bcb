/**
 * /healthz and /livez: 200 `ok` while the process serves. /readyz: 200 `ok`
 * once every served resource's cache has listed and is watching its store,
 * and (an upstream store) can reach its upstream, else 503 naming the caches
 * that are not ready and the upstreams that are unreachable. None needs the token.
 */
import type { ResponseLike } from './http-types.js';
import { reportsReachability } from '../store/store-reachability.js';
import type { ServedResource } from './served-resource.js';
import { sendText } from './status-response.js';

export function sendHealth(res: ResponseLike, check: 'healthz' | 'readyz' | 'livez', served: Iterable<ServedResource>, shuttingDown: boolean): void {
  if (check !== 'readyz') return sendText(res, 200, 'ok');
  const notReady: string[] = [];
  for (const r of served) {
    if (!r.cache.ready) notReady.push(`[-]watch-cache ${r.spec.name}: not ready`);
    // An upstream store (KubeStore) whose watch cannot reach the upstream right now.
    const unreachable = reportsReachability(r.store) ? r.store.unreachableReason() : undefined;
    if (unreachable !== undefined) notReady.push(`[-]upstream ${r.spec.name}: unreachable (${unreachable})`);
  }
  if (shuttingDown) return sendText(res, 503, '[-]shutdown: the server is shutting down\nreadyz check failed\n');
  if (notReady.length === 0) return sendText(res, 200, 'ok');
  return sendText(res, 503, notReady.join('\n') + '\nreadyz check failed\n');
}
