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
import { closeWhenIdle } from './limits/idle-sessions.js';
import { silentLogger, type Logger } from './logging/logger.js';
import { logRequest } from './logging/request-log.js';
import { limitMetrics } from './limits/limit-metrics.js';
import { ResponseBuffers, type BufferLimits } from './limits/response-buffers.js';
import { RequestDeadlines } from './limits/request-deadline.js';
import { jitteredWatchTimeoutSeconds, resolveTimeouts, type ServerTimeouts } from './limits/timeouts.js';
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
  /** Idle, header, request and watch timeouts (limits/timeouts.ts; each defaults like kube-apiserver). */
  timeouts?: Partial<ServerTimeouts>;
  /** Response bytes buffered per connection and per server before a response is ended (limits/response-buffers.ts). */
  bufferLimits?: Partial<BufferLimits>;
  /** HTTP/2 maxSessionMemory in MB: nghttp2's own per-session memory (default 64). */
  maxSessionMemoryMb?: number;
  /** Structured log (pino; logging/logger.ts): 5xx answers with their causes, failed watch streams, limits hit. Default: silent. */
  logger?: Logger;
  /** Log every request at info (default false). */
  requestLog?: boolean;
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

function servedResources(
  caches: readonly WatchCache[],
  stores: Readonly<Record<string, WritableStore>>,
): Map<string, ServedResource> {
  const map = new Map<string, ServedResource>();
  for (const cache of caches) {
    const spec = specForResource(cache.resource);
    if (spec.group !== '' || spec.version !== 'v1')
      throw new RangeError(`only core/v1 resources can be served, got ${spec.group}/${spec.version} ${spec.name}`);
    if (map.has(spec.name)) throw new RangeError(`resource "${spec.name}" is served twice`);
    map.set(spec.name, { spec, cache, store: stores[spec.name] });
  }
  for (const name of Object.keys(stores))
    if (!map.has(name)) throw new RangeError(`a store is given for "${name}" but no cache serves it`);
  if (map.size === 0) throw new RangeError('createWatchServer needs at least one cache');
  return map;
}

/** What a request's bytes are buffered on: its HTTP/2 session, or its socket. */
function connectionOf(req: RequestLike): object {
  const r = req as unknown as { stream?: { session?: object }; socket?: object };
  return r.stream?.session ?? r.socket ?? req;
}

export function createWatchServer(options: WatchServerOptions): WatchServer {
  const resources = servedResources(options.caches, options.stores ?? {});
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8080;
  const registry = new WatchRegistry(options.maxWatches ?? DEFAULT_MAX_WATCHES);
  const tracker = new ConnectionTracker();
  const timeouts = resolveTimeouts(options.timeouts);
  const deadlines = new RequestDeadlines(timeouts.requestTimeoutMs);
  const buffers = new ResponseBuffers(options.bufferLimits);
  const metrics = limitMetrics(options.caches[0]!.metrics);
  const logger = options.logger ?? silentLogger;
  buffers.onOverflow = (scope) => {
    metrics.overflows.inc({ scope });
    logger.warn({ scope }, 'a response was ended: too many response bytes buffered (a client not reading)');
  };
  deadlines.onTimeout = (req) => {
    metrics.requestTimeouts.inc();
    logger.warn({ method: req.method, url: req.url }, 'request timed out');
  };
  let shuttingDown = false;
  let closing: Promise<void> | undefined;
  let bound: AddressInfo | undefined;

  const router = new RequestRouter({
    resources,
    registries: options.caches.map((c) => c.metrics),
    auth: options.token === undefined ? undefined : new BearerAuth(options.token),
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
    registry,
    defaultTimeoutSeconds:
      options.defaultWatchTimeoutSeconds ?? (() => jitteredWatchTimeoutSeconds(timeouts.minRequestTimeoutSeconds)),
    maxTimeoutSeconds: timeouts.maxWatchTimeoutSeconds,
    onStreamFailure: (err) => logger.error({ err }, 'a watch stream failed and was ended with an ERROR event'),
    shuttingDown: () => shuttingDown,
    deadlines,
  });
  const onSession = (s: http2.ServerHttp2Session): void => {
    tracker.addSession(s);
    closeWhenIdle(s, timeouts.idleTimeoutMs, () => metrics.idleClosed.inc({ protocol: 'h2' }));
  };
  const onRequest = (req: RequestLike, res: ResponseLike): void => {
    tracker.track(res);
    buffers.guard(res, connectionOf(req));
    logRequest(logger, options.requestLog === true, req, res);
    if (shuttingDown && req.httpVersionMajor < 2) res.setHeader('connection', 'close');
    router.handle(req, res);
  };
  const handler = onRequest as unknown as (req: http.IncomingMessage, res: http.ServerResponse) => void;
  const h2Handler = onRequest as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
  const h2Options = {
    settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? 1000 },
    maxSessionMemory: options.maxSessionMemoryMb ?? 64,
  };

  let listener: net.Server;
  let closeIdle = (): void => {};
  if (options.tls !== undefined) {
    const secure = http2.createSecureServer(
      { ...h2Options, cert: options.tls.cert, key: options.tls.key, allowHTTP1: true },
      h2Handler,
    );
    secure.on('session', onSession);
    // HTTP/1.1 over TLS (ALPN) runs node:http's connection handling on this server: the same idle,
    // header and request timeouts apply through these properties.
    Object.assign(secure, {
      keepAliveTimeout: timeouts.idleTimeoutMs,
      headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
      requestTimeout: timeouts.requestTimeoutMs,
    });
    secure.on('sessionError', () => {});
    secure.on('tlsClientError', () => {});
    listener = secure;
  } else {
    const h1 = http.createServer(
      {
        keepAliveTimeout: timeouts.idleTimeoutMs,
        headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
        requestTimeout: timeouts.requestTimeoutMs,
        // How often node:http checks headersTimeout/requestTimeout (its default, 30 s, is coarser than short timeouts).
        connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(timeouts.headersTimeoutMs / 4))),
      },
      handler,
    );
    const h2 = http2.createServer(h2Options, h2Handler);
    h2.on('session', onSession);
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
