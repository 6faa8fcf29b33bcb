/**
 * /healthz and /livez: 200 `ok` while the process serves. /readyz: 200 `ok`
 * once every served resource's cache has listed and is watching its store
 * and no store reports itself unreachable (EtcdStore's and KubeStore's
 * health), else 503 naming what is not ready
 * (a cache (re)listing, a store or upstream unreachable). None needs the token.
 */
import type { ResponseLike } from './http-types.js';
import type { ServedResource } from './served-resource.js';
import { sendText } from './status-response.js';

export function sendHealth(
  res: ResponseLike,
  check: 'healthz' | 'readyz' | 'livez',
  served: Iterable<ServedResource>,
  shuttingDown: boolean,
): void {
  if (check !== 'readyz') return sendText(res, 200, 'ok');
  const notReady: string[] = [];
  for (const r of served) {
    if (!r.cache.ready) notReady.push(`[-]watch-cache ${r.spec.name}: not ready (listing or re-listing its store)`);
    const health = r.store?.health?.state;
    if (health !== undefined && !health.healthy)
      notReady.push(`[-]store ${r.spec.name}: unreachable: ${health.error ?? 'unknown error'}`);
  }
  if (shuttingDown) return sendText(res, 503, '[-]shutdown: the server is shutting down\nreadyz check failed\n');
  if (notReady.length === 0) return sendText(res, 200, 'ok');
  return sendText(res, 503, notReady.join('\n') + '\nreadyz check failed\n');
}
