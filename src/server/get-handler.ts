/**
 * GET on one object: read from the cache (resourceVersion '' = consistent,
 * '0' = any, 'N' = not older than N); 404 Status names the plural resource.
 */
import { withTypeMeta } from './object-shape.js';
import type { ReadQuery } from './query-params.js';
import type { ResourceRequest } from './resource-request.js';
import { objectError, sendJSON } from './status-response.js';

export async function handleGet(r: ResourceRequest, q: ReadQuery): Promise<void> {
  const name = r.name!;
  try {
    const obj = await r.served.cache.get(r.namespace ?? '', name, { resourceVersion: q.resourceVersion });
    sendJSON(r.res, 200, withTypeMeta(obj, r.served.spec));
  } catch (err) {
    throw objectError(err, r.served.spec.name, name);
  }
}
