/**
 * /healthz and /livez: 200 `ok` while the process serves. /readyz: 200 `ok`
 * once every served resource's cache has listed and is watching its store,
 * else 503 naming the caches that are not ready. None needs the token.
 */
import type { ResponseLike } from './http-types.js';
import type { ServedResource } from './served-resource.js';
import { sendText } from './status-response.js';

export function sendHealth(res: ResponseLike, check: 'healthz' | 'readyz' | 'livez', served: Iterable<ServedResource>, shuttingDown: boolean): void {
  if (check !== 'readyz') return sendText(res, 200, 'ok');
  const notReady: string[] = [];
  for (const r of served) if (!r.cache.ready) notReady.push(r.spec.name);
  if (shuttingDown) return sendText(res, 503, '[-]shutdown: the server is shutting down\nreadyz check failed\n');
  if (notReady.length === 0) return sendText(res, 200, 'ok');
  return sendText(res, 503, notReady.map((n) => `[-]watch-cache ${n}: not ready`).join('\n') + '\nreadyz check failed\n');
}
