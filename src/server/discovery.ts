/**
 * Discovery, exactly the legacy (non-aggregated) shapes kubectl 1.20 - 1.33
 * accept (reference/k8s-client-compat.md section 1.1):
 *   /api        APIVersions (serverAddressByClientCIDRs = the address the client reached)
 *   /apis       APIGroupList with no groups
 *   /api/v1     APIResourceList of the served resources
 *   /version    version.Info
 *   /openapi/v2 200, empty body, application/octet-stream: an empty protobuf
 *               Document, so `kubectl create` skips client-side validation
 */
import type { ResponseLike } from './http-types.js';
import type { ServedResource } from './served-resource.js';
import { sendJSON } from './status-response.js';

/** The verbs this server implements for every served resource. */
const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] as const;
const READ_ONLY_VERBS = ['get', 'list', 'watch'] as const;

const VERSION_INFO = Object.freeze({
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0+watchcache',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-01-01T00:00:00Z',
  goVersion: 'go1.22.0',
  compiler: 'gc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
});

function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroupList(): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [] };
}

function apiResourceList(served: Iterable<ServedResource>): object {
  const resources = [];
  for (const r of served) {
    const s = r.spec;
    const entry: Record<string, unknown> = {
      name: s.name,
      singularName: s.singularName,
      namespaced: s.namespaced,
      kind: s.kind,
      verbs: r.store === undefined ? [...READ_ONLY_VERBS] : [...VERBS],
    };
    if (s.shortNames.length > 0) entry.shortNames = [...s.shortNames];
    if (s.categories.length > 0) entry.categories = [...s.categories];
    resources.push(entry);
  }
  return { kind: 'APIResourceList', groupVersion: 'v1', resources };
}

export type DiscoveryPath = '/api' | '/apis' | '/api/v1' | '/version' | '/openapi/v2';

/** Answer a discovery path. */
export function sendDiscovery(
  res: ResponseLike,
  path: DiscoveryPath,
  served: Iterable<ServedResource>,
  serverAddress: string,
): void {
  switch (path) {
    case '/api':
      return sendJSON(res, 200, apiVersions(serverAddress));
    case '/apis':
      return sendJSON(res, 200, apiGroupList());
    case '/api/v1':
      return sendJSON(res, 200, apiResourceList(served));
    case '/version':
      return sendJSON(res, 200, VERSION_INFO);
    case '/openapi/v2':
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 0 });
      res.end();
      return;
  }
}
