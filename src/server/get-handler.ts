/**
 * GET on one object: read from the cache (resourceVersion '' = consistent,
 * '0' = any, 'N' = not older than N); 404 Status names the plural resource.
 * A client asking for a Table gets a Table with the object's one row.
 */
import { withTypeMeta } from './object-shape.js';
import type { ReadQuery } from './query-params.js';
import type { ResourceRequest } from './resource-request.js';
import { objectError, sendJSON } from './status-response.js';
import { tableContentType, tableOf } from './table/table.js';
import { tableRequest } from './table/table-request.js';

export async function handleGet(r: ResourceRequest, q: ReadQuery): Promise<void> {
  const name = r.name!;
  const table = tableRequest(r.req.headers.accept, r.params);
  try {
    const obj = withTypeMeta(
      await r.served.cache.get(r.namespace ?? '', name, { resourceVersion: q.resourceVersion }),
      r.served.spec,
    );
    if (table !== undefined) {
      const t = tableOf([obj], { resourceVersion: obj.metadata.resourceVersion }, table, r.served.spec, Date.now());
      sendJSON(r.res, 200, t, { 'content-type': tableContentType(table) });
      return;
    }
    sendJSON(r.res, 200, obj);
  } catch (err) {
    throw objectError(err, r.served.spec.name, name);
  }
}
