/**
 * GET on a collection without watch: a list from the cache with Kubernetes
 * RV semantics (resourceVersion, resourceVersionMatch, limit, continue,
 * selectors) -> `{kind: <Kind>List, apiVersion, metadata: {resourceVersion,
 * continue?}, items}`; every item carries kind and apiVersion.
 */
import type { ReadQuery } from './query-params.js';
import type { ResourceRequest } from './resource-request.js';
import { sendJSON } from './status-response.js';

export async function handleList(r: ResourceRequest, q: ReadQuery): Promise<void> {
  const list = await r.served.cache.list({
    resourceVersion: q.resourceVersion,
    resourceVersionMatch: q.resourceVersionMatch,
    namespace: r.namespace,
    labelSelector: q.labelSelector,
    fieldSelector: q.fieldSelector,
    limit: q.limit,
    continue: q.continue === '' ? undefined : q.continue,
  });
  sendJSON(r.res, 200, list);
}
