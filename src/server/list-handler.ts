/**
 * GET on a collection without watch: a list from the cache with Kubernetes
 * RV semantics (resourceVersion, resourceVersionMatch, limit, continue,
 * selectors) -> `{kind: <Kind>List, apiVersion, metadata: {resourceVersion,
 * continue?}, items}`; every item carries kind and apiVersion. A client
 * asking for a Table (src/server/table/) gets the list as Table rows.
 */
import type { ReadQuery } from './query-params.js';
import type { ResourceRequest } from './resource-request.js';
import { sendJSON } from './status-response.js';
import { tableContentType, tableOf } from './table/table.js';
import { tableRequest } from './table/table-request.js';

export async function handleList(r: ResourceRequest, q: ReadQuery): Promise<void> {
  const table = tableRequest(r.req.headers.accept, r.params);
  const list = await r.served.cache.list({
    resourceVersion: q.resourceVersion,
    resourceVersionMatch: q.resourceVersionMatch,
    namespace: r.namespace,
    labelSelector: q.labelSelector,
    fieldSelector: q.fieldSelector,
    limit: q.limit,
    continue: q.continue === '' ? undefined : q.continue,
  });
  if (table !== undefined) {
    sendJSON(r.res, 200, tableOf(list.items, list.metadata, table, r.served.spec, Date.now()), {
      'content-type': tableContentType(table),
    });
    return;
  }
  sendJSON(r.res, 200, list);
}
