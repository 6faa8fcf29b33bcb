/**
 * Running `watchcache serve`: one store and one WatchCache per resource (all
 * caches share one metrics registry), the HTTP server, the listening line,
 * cache start-up (retried every second until it succeeds: /readyz is 503
 * meanwhile), and SIGTERM/SIGINT: stop accepting, end every watch cleanly,
 * stop the caches, close the stores, exit 0. Operability: a pino logger
 * (--log-level, --request-log; JSON lines on stderr when it is not a
 * terminal), store outages and recoveries logged once each, and
 * prom-client's default process metrics in the shared registry.
 */
import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createLogger, type Logger } from '../server/logging/logger.js';
import { WatchCache } from '../cache/watch-cache.js';
import { createWatchServer, type WatchServer } from '../server/server.js';
import { resolveResource, resourceInfo } from '../server/resources.js';
import type { WritableStore } from '../server/served-resource.js';
import type { ServeConfig } from './serve-command.js';
import { servedResources } from './served-resources.js';
import { createStores, type ServedStore } from './store-factory.js';
import { UsageError } from './usage-error.js';

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

const RETRY_MS = 1000;

function readTls(config: ServeConfig): { cert: Buffer; key: Buffer } | undefined {
  if (config.tlsCert === undefined || config.tlsKey === undefined) return undefined;
  const read = (flag: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new UsageError(`--${flag}: cannot read ${file}: ${(err as Error).message}`);
    }
  };
  return { cert: read('tls-cert', config.tlsCert), key: read('tls-key', config.tlsKey) };
}

export class ServeRuntime {
  private readonly config: ServeConfig;
  private readonly io: Output;
  private caches: WatchCache[] = [];
  private stores: ServedStore[] = [];
  private server: WatchServer | undefined;
  private stopping: Promise<void> | undefined;
  readonly logger: Logger;

  constructor(config: ServeConfig, io: Output, logger?: Logger) {
    this.config = config;
    this.io = io;
    this.logger = logger ?? createLogger({ level: config.logLevel });
  }

  /** Build everything and listen; resolves once the listening line is printed. */
  async start(): Promise<void> {
    const c = this.config;
    const tls = readTls(c);
    const names = servedResources(c.resources);
    const specs = names.map((r) => resolveResource(r));
    const registry = new Registry();
    this.stores = await createStores(c.store, c.etcd, specs, c.upstream, registry);
    collectDefaultMetrics({ register: registry });
    this.stores.forEach((store, i) => {
      const resource = specs[i]!.name;
      store.health?.onChange((h) => {
        if (h.healthy) this.logger.info({ resource, store: c.store }, 'the store is reachable again');
        else this.logger.error({ resource, store: c.store, cause: h.error }, 'the store is unreachable');
      });
    });
    this.caches = specs.map(
      (spec, i) =>
        new WatchCache({
          store: this.stores[i]!,
          mode: c.mode,
          resource: resourceInfo(spec),
          channelCapacity: c.channelCapacity,
          history: c.historyUpperBound === undefined ? undefined : { upperBound: c.historyUpperBound },
          bookmarkFrequencyMs: c.bookmarkFrequencyMs,
          registry,
        }),
    );
    const stores: Record<string, WritableStore> = {};
    specs.forEach((s, i) => (stores[s.name] = this.stores[i]!));
    this.server = createWatchServer({
      caches: this.caches,
      stores,
      host: c.host,
      port: c.port,
      token: c.token,
      tls,
      maxWatches: c.maxWatches,
      timeouts: {
        idleTimeoutMs: c.idleTimeoutMs,
        headersTimeoutMs: c.headerTimeoutMs,
        requestTimeoutMs: c.requestTimeoutMs,
        minRequestTimeoutSeconds: c.minRequestTimeoutSeconds,
      },
      bufferLimits: { perConnectionBytes: c.maxConnectionBufferBytes, perServerBytes: c.maxServerBufferBytes },
      logger: this.logger,
      requestLog: c.requestLog,
    });
    await this.server.listen();
    this.io.out(`watchcache serving ${names.join(',')} on ${this.server.url} (mode ${c.mode}, store ${c.store})`);
    this.logger.info({ url: this.server.url, resources: names, mode: c.mode, store: c.store }, 'serving');
    for (const cache of this.caches) void this.startCache(cache);
  }

  /** Start a cache, retrying every RETRY_MS (logged on the first failure, then every 30th). */
  private async startCache(cache: WatchCache): Promise<void> {
    for (let attempt = 1; this.stopping === undefined; attempt++) {
      try {
        await cache.start();
        if (attempt > 1) this.logger.info({ resource: cache.resource.resource }, 'the cache is ready');
        return;
      } catch (err) {
        if (this.stopping !== undefined) return;
        if (attempt === 1 || attempt % 30 === 0) {
          this.logger.warn(
            { resource: cache.resource.resource, attempt, cause: (err as Error).message },
            `the cache could not start; retrying every ${RETRY_MS / 1000} s`,
          );
        }
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }

  /** Graceful stop: server first (ends watches), then caches, then stores. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.server?.close();
      await Promise.all(this.caches.map((cache) => cache.stop()));
      for (const s of this.stores) s.close?.();
    })();
    return this.stopping;
  }
}
