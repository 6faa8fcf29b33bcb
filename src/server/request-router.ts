/**
 * The request handler shared by HTTP/1.1 and HTTP/2: authentication, routing
 * and method dispatch; every failure becomes a Status response.
 *
 *   collection  GET (list | watch), POST (create)
 *   object      GET (get | watch of that one object), PUT (update), PATCH, DELETE
 *   HEAD is a GET without a body, except that it never starts a watch (405).
 *   anything else on a resource path is 405; unknown paths and resources 404.
 * A namespaced resource needs /namespaces/{ns}/ for objects and creates;
 * a cluster-scoped resource must not have it.
 */
import type { Registry } from 'prom-client';
import { sendDiscovery } from './discovery.js';
import { sendHealth } from './health.js';
import type { RequestLike, ResponseLike } from './http-types.js';
import { handleGet } from './get-handler.js';
import { handleList } from './list-handler.js';
import { acceptsJson } from './media-type.js';
import { sendMetrics } from './metrics-endpoint.js';
import { parseReadQuery } from './query-params.js';
import type { ResourceRequest } from './resource-request.js';
import { isPublicPath, parseRoute, type Route } from './routes.js';
import type { ServedResource } from './served-resource.js';
import { methodNotAllowed, notAcceptable, resourceNotFound, sendError, unauthorized } from './status-response.js';
import { handleWatch, type WatchDeps } from './watch-handler.js';
import { handleCreate, handleDelete, handleUpdate } from './write-handlers.js';
import { handlePatch } from './patch/patch-handler.js';
import type { BearerAuth } from './auth.js';
import type { RequestDeadlines } from './limits/request-deadline.js';

export interface RouterOptions extends WatchDeps {
  readonly resources: ReadonlyMap<string, ServedResource>;
  readonly registries: readonly Registry[];
  readonly auth: BearerAuth | undefined;
  readonly bodyLimit: number;
  /** True once shutdown began (readyz answers 503). */
  readonly shuttingDown: () => boolean;
  /** The request timeout of non-watch requests (absent: none). */
  readonly deadlines?: RequestDeadlines;
}

type ResourceRoute = Extract<Route, { type: 'resource' }>;

export class RequestRouter {
  private readonly o: RouterOptions;

  constructor(options: RouterOptions) {
    this.o = options;
  }

  /** Handle one request; never throws or rejects. */
  handle(req: RequestLike, res: ResponseLike): void {
    this.o.deadlines?.start(req, res);
    this.dispatch(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, err);
      else if (!res.writableEnded) res.end();
    });
  }

  private async dispatch(req: RequestLike, res: ResponseLike): Promise<void> {
    const url = splitUrl(req.url ?? '/');
    const method = req.method ?? 'GET';
    if (this.o.auth !== undefined && !isPublicPath(url.pathname) && !this.o.auth.check(req.headers)) {
      req.resume();
      return sendError(res, unauthorized(), { 'www-authenticate': 'Bearer realm="watchcache"' });
    }
    const route = parseRoute(url.pathname);
    if (route.type === 'resource') return this.resource(req, res, route, url.searchParams, method);
    if (route.type === 'not-found') return sendError(res, resourceNotFound());
    if (method !== 'GET' && method !== 'HEAD') return sendError(res, methodNotAllowed(), { allow: 'GET, HEAD' });
    switch (route.type) {
      case 'discovery':
        return sendDiscovery(res, route.path, this.o.resources.values(), serverAddress(req));
      case 'health':
        return sendHealth(res, route.check, this.o.resources.values(), this.o.shuttingDown());
      case 'metrics':
        return sendMetrics(res, this.o.registries);
    }
  }

  private async resource(
    req: RequestLike,
    res: ResponseLike,
    route: ResourceRoute,
    params: URLSearchParams,
    method: string,
  ): Promise<void> {
    const served = this.o.resources.get(route.resource);
    if (served === undefined) return sendError(res, resourceNotFound());
    const { namespaced } = served.spec;
    // Namespaced objects live under /namespaces/{ns}/; cluster-scoped ones never do.
    if (namespaced && route.name !== undefined && route.namespace === undefined)
      return sendError(res, resourceNotFound());
    if (!namespaced && route.namespace !== undefined) return sendError(res, resourceNotFound());
    const r: ResourceRequest = {
      req,
      res,
      served,
      namespace: namespaced ? route.namespace : route.name !== undefined ? '' : undefined,
      name: route.name,
      params,
    };
    if (method === 'GET' || method === 'HEAD') {
      const q = parseReadQuery(params, route.watchPrefix);
      if (q.watch) this.o.deadlines?.exempt(res); // watches are long-running: no request timeout
      if (q.watch)
        return method === 'GET' ? handleWatch(r, q, this.o) : sendError(res, methodNotAllowed(), { allow: 'GET' });
      if (!acceptsJson(req.headers.accept)) return sendError(res, notAcceptable(req.headers.accept ?? ''));
      return route.name === undefined ? handleList(r, q) : handleGet(r, q);
    }
    if (route.watchPrefix) return sendError(res, methodNotAllowed(), { allow: 'GET' });
    const writable = served.store !== undefined;
    if (route.name === undefined) {
      // Creates need a namespace for namespaced resources (POST /api/v1/pods is not a thing).
      if (method === 'POST' && writable && (!namespaced || route.namespace !== undefined))
        return handleCreate(r, this.o.bodyLimit);
      return sendError(res, methodNotAllowed(), {
        allow: writable && (!namespaced || route.namespace !== undefined) ? 'GET, POST' : 'GET',
      });
    }
    if (writable && method === 'PUT') return handleUpdate(r, this.o.bodyLimit);
    if (writable && method === 'PATCH') return handlePatch(r, this.o.bodyLimit);
    if (writable && method === 'DELETE') return handleDelete(r, this.o.bodyLimit);
    return sendError(res, methodNotAllowed(), { allow: writable ? 'GET, PUT, PATCH, DELETE' : 'GET' });
  }
}

/**
 * Path and query of a request target. Origin-form (`/path?query`) is split
 * as is (so `//x` stays a path, never a host); absolute-form is parsed.
 */
function splitUrl(target: string): { pathname: string; searchParams: URLSearchParams } {
  if (/^https?:\/\//i.test(target)) {
    const u = new URL(target);
    return { pathname: u.pathname, searchParams: u.searchParams };
  }
  const q = target.indexOf('?');
  return q < 0
    ? { pathname: target, searchParams: new URLSearchParams() }
    : { pathname: target.slice(0, q), searchParams: new URLSearchParams(target.slice(q + 1)) };
}

/** The host:port the client connected to (for APIVersions.serverAddressByClientCIDRs). */
function serverAddress(req: RequestLike): string {
  const socket = (req as unknown as { socket?: { localAddress?: string; localPort?: number } }).socket;
  const host = socket?.localAddress ?? '127.0.0.1';
  const port = socket?.localPort ?? 0;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
