/**
 * Path parsing. Recognised paths:
 *   /api, /apis, /api/v1, /version, /openapi/v2, /openapi/v3, /metrics,
 *   /healthz, /readyz, /livez,
 *   /api/v1[/watch]/{resource}[/{name}]                  (all namespaces, or cluster-scoped)
 *   /api/v1[/watch]/namespaces/{ns}/{resource}[/{name}]  (one namespace)
 * Whether a resource exists and is namespaced is decided by the caller;
 * `/api/v1/namespaces/{name}` parses as the object {name} of `namespaces`.
 */

export type Route =
  | { readonly type: 'discovery'; readonly path: '/api' | '/apis' | '/api/v1' | '/version' | '/openapi/v2' }
  | { readonly type: 'health'; readonly check: 'healthz' | 'readyz' | 'livez' }
  | { readonly type: 'metrics' }
  | {
      readonly type: 'resource';
      readonly resource: string;
      /** Set for the /namespaces/{ns}/ form. */
      readonly namespace: string | undefined;
      /** Set for an object path. */
      readonly name: string | undefined;
      /** The legacy /api/v1/watch/ prefix was used. */
      readonly watchPrefix: boolean;
    }
  | { readonly type: 'not-found' };

const NOT_FOUND: Route = Object.freeze({ type: 'not-found' });

const FIXED: Readonly<Record<string, Route>> = {
  '/api': { type: 'discovery', path: '/api' },
  '/apis': { type: 'discovery', path: '/apis' },
  '/api/v1': { type: 'discovery', path: '/api/v1' },
  '/version': { type: 'discovery', path: '/version' },
  '/openapi/v2': { type: 'discovery', path: '/openapi/v2' },
  '/metrics': { type: 'metrics' },
  '/healthz': { type: 'health', check: 'healthz' },
  '/readyz': { type: 'health', check: 'readyz' },
  '/livez': { type: 'health', check: 'livez' },
};

/** Paths that never need the bearer token. */
export function isPublicPath(pathname: string): boolean {
  const p = trimSlash(pathname);
  return p === '/healthz' || p === '/readyz' || p === '/livez';
}

function trimSlash(pathname: string): string {
  return pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
}

function decode(segment: string): string | undefined {
  try {
    const s = decodeURIComponent(segment);
    return s === '' || s.includes('/') ? undefined : s;
  } catch {
    return undefined;
  }
}

/** Parse the path part of a request URL (no query string). */
export function parseRoute(pathname: string): Route {
  const path = trimSlash(pathname);
  const fixed = FIXED[path];
  if (fixed !== undefined) return fixed;
  if (!path.startsWith('/api/v1/')) return NOT_FOUND;
  const raw = path.slice('/api/v1/'.length).split('/');
  const segs: string[] = [];
  for (const r of raw) {
    const d = decode(r);
    if (d === undefined) return NOT_FOUND;
    segs.push(d);
  }
  let watchPrefix = false;
  if (segs[0] === 'watch') {
    watchPrefix = true;
    segs.shift();
  }
  const resource = (r: string, namespace: string | undefined, name: string | undefined): Route => ({
    type: 'resource',
    resource: r,
    namespace,
    name,
    watchPrefix,
  });
  switch (segs.length) {
    case 1:
      return resource(segs[0]!, undefined, undefined);
    case 2:
      return resource(segs[0]!, undefined, segs[1]);
    case 3:
      return segs[0] === 'namespaces' ? resource(segs[2]!, segs[1], undefined) : NOT_FOUND;
    case 4:
      return segs[0] === 'namespaces' ? resource(segs[2]!, segs[1], segs[3]) : NOT_FOUND;
    default:
      return NOT_FOUND;
  }
}
