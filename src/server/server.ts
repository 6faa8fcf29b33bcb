/**
 * createWatchServer: the Kubernetes list/watch API for a set of WatchCaches,
 * over HTTP/1.1 and HTTP/2.
 *
 * - Plain: ONE TCP port for HTTP/1.1 and h2c with prior knowledge; the first
 *   bytes decide (protocol-sniffer.ts).
 * - TLS (`tls: {cert, key}`): http2.createSecureServer({allowHTTP1: true});
 *   ALPN picks h2 or http/1.1.
 * - Binds 127.0.0.1 unless `host` says otherwise; port 8080 by default (0 =
 *   any free port; `address` tells which).
 * - close(): stop accepting, readyz turns 503, every watch response is ended
 *   cleanly, in-flight requests finish, connections close (destroyed after
 *   `shutdownGraceMs`). The caches are not stopped: they belong to the caller.
 */
import http from 'node:http';
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import type { WatchCache } from '../cache/watch-cache.js';
import { BearerAuth } from './auth.js';
import { ConnectionTracker } from './connection-tracker.js';
import type { RequestLike, ResponseLike } from './http-types.js';
import { ProtocolSniffer } from './protocol-sniffer.js';
import { RequestRouter } from './request-router.js';
import { DEFAULT_BODY_LIMIT } from './request-body.js';
import { specForResource } from './resources.js';
import type { ServedResource, WritableStore } from './served-resource.js';
import { defaultWatchTimeoutSeconds } from './watch-handler.js';
import { DEFAULT_MAX_WATCHES, WatchRegistry } from './watch-registry.js';

export interface TlsOptions {
  cert: string | Buffer;
  key: string | Buffer;
}

export interface WatchServerOptions {
  /** One cache per served resource (its `resource` names the path segment and kind). */
  caches: readonly WatchCache[];
  /** Where writes go, by resource name (e.g. `pods`); a resource without a store is read-only. */
  stores?: Readonly<Record<string, WritableStore>>;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Require `Authorization: Bearer <token>` (except /healthz, /readyz, /livez). */
  token?: string;
  tls?: TlsOptions;
  /** Concurrent watch streams allowed (default 100000); more get 429 + Retry-After 1. */
  maxWatches?: number;
  /** Request body limit in bytes (default 3 MiB); larger bodies get 413. */
  bodyLimitBytes?: number;
  /** How long close() waits for connections before destroying them (default 5000 ms). */
  shutdownGraceMs?: number;
  /** Duration of a watch that asked for none, in seconds (default random in [1800, 3600)). */
  defaultWatchTimeoutSeconds?: () => number;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS per connection (default 1000). */
  maxConcurrentStreams?: number;
}

export interface WatchServer {
  /** Start listening; resolves with the bound address. */
  listen(): Promise<AddressInfo>;
  /** Graceful stop (see the file comment). Idempotent. */
  close(): Promise<void>;
  /** The bound address once listening. */
  readonly address: AddressInfo | undefined;
  /** `http://host:port` or `https://host:port` once listening. */
  readonly url: string;
  /** Open watch streams. */
  readonly activeWatches: number;
  /** The served resources, by name. */
  readonly resources: ReadonlyMap<string, ServedResource>;
}

function servedResources(caches: readonly WatchCache[], stores: Readonly<Record<string, WritableStore>>): Map<string, ServedResource> {
  const map = new Map<string, ServedResource>();
  for (const cache of caches) {
    const spec = specForResource(cache.resource);
    if (spec.group !== '' || spec.version !== 'v1') throw new RangeError(`only core/v1 resources can be served, got ${spec.group}/${spec.version} ${spec.name}`);
    if (map.has(spec.name)) throw new RangeError(`resource "${spec.name}" is served twice`);
    map.set(spec.name, { spec, cache, store: stores[spec.name] });
  }
  for (const name of Object.keys(stores)) if (!map.has(name)) throw new RangeError(`a store is given for "${name}" but no cache serves it`);
  if (map.size === 0) throw new RangeError('createWatchServer needs at least one cache');
  return map;
}

export function createWatchServer(options: WatchServerOptions): WatchServer {
  const resources = servedResources(options.caches, options.stores ?? {});
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  const registry = new WatchRegistry(options.maxWatches ?? DEFAULT_MAX_WATCHES);
  const tracker = new ConnectionTracker();
  let shuttingDown = false;
  let closing: Promise<void> | undefined;
  let bound: AddressInfo | undefined;

  const router = new RequestRouter({
    resources,
    registries: options.caches.map((c) => c.metrics),
    auth: options.token === undefined ? undefined : new BearerAuth(options.token),
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
    registry,
    defaultTimeoutSeconds: options.defaultWatchTimeoutSeconds ?? (() => defaultWatchTimeoutSeconds()),
    shuttingDown: () => shuttingDown,
  });
  const onRequest = (req: RequestLike, res: ResponseLike): void => {
    tracker.track(res);
    if (shuttingDown && req.httpVersionMajor < 2) res.setHeader('connection', 'close');
    router.handle(req, res);
  };
  const handler = onRequest as unknown as (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const h2Handler = onRequest as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
  const h2Options = { settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? 1000 }, maxSessionMemory: 64 };

  let listener: net.Server;
  let closeIdle = (): void => {};
  if (options.tls !== undefined) {
    const secure = http2.createSecureServer({ ...h2Options, cert: options.tls.cert, key: options.tls.key, allowHTTP1: true }, h2Handler);
    secure.on('session', (s) => tracker.addSession(s));
    secure.on('sessionError', () => {});
    secure.on('tlsClientError', () => {});
    listener = secure;
  } else {
    const h1 = http.createServer(handler);
    const h2 = http2.createServer(h2Options, h2Handler);
    h2.on('session', (s) => tracker.addSession(s));
    h2.on('sessionError', () => {});
    const sniffer = new ProtocolSniffer(h1, h2);
    listener = net.createServer({ noDelay: true }, (socket) => sniffer.accept(socket));
    // The http.Server never listens itself: forward 'listening' so it tracks its connections
    // (headersTimeout / requestTimeout enforcement, closeIdleConnections on shutdown).
    listener.on('listening', () => h1.emit('listening'));
    closeIdle = () => h1.closeIdleConnections();
  }
  listener.on('connection', (socket: net.Socket) => tracker.addSocket(socket));

  return {
    listen(): Promise<AddressInfo> {
      return new Promise((resolve, reject) => {
        listener.once('error', reject);
        listener.listen(port, host, () => {
          listener.removeListener('error', reject);
          bound = listener.address() as AddressInfo;
          resolve(bound);
        });
      });
    },
    close(): Promise<void> {
      closing ??= (async () => {
        shuttingDown = true;
        const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
        registry.shutdownAll();
        closeIdle();
        await tracker.drain(options.shutdownGraceMs ?? 5000);
        await stopped;
      })();
      return closing;
    },
    get address(): AddressInfo | undefined {
      return bound;
    },
    get url(): string {
      if (bound === undefined) return '';
      const h = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
      return `${options.tls === undefined ? 'http' : 'https'}://${h}:${bound.port}`;
    },
    get activeWatches(): number {
      return registry.size;
    },
    resources,
  };
}
