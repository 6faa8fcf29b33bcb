/**
 * `watchcache serve`: flag parsing and validation (node:util parseArgs,
 * strict). Any mistake is a UsageError (exit 2) with a message naming the
 * flag; `run` hands a valid ServeConfig to the runtime.
 */
import { parseArgs } from 'node:util';
import { MODES, type Mode } from '../cache/cache-options.js';
import { LOG_LEVELS, type LogLevel } from '../server/logging/logger.js';
import { resolveResource } from '../server/resources.js';
import { DEFAULT_MAX_WATCHES } from '../server/watch-registry.js';
import type { UpstreamFlags } from './kubeconfig.js';
import { UsageError } from './usage-error.js';

export type StoreKind = 'memory' | 'etcd' | 'kube';

export interface ServeConfig {
  host: string;
  port: number;
  mode: Mode;
  store: StoreKind;
  etcd: string;
  /** --store kube: where the upstream API server is and how to authenticate (resolved at start). */
  upstream: UpstreamFlags;
  resources: string[];
  token: string | undefined;
  channelCapacity: number | undefined;
  historyUpperBound: number | undefined;
  bookmarkFrequencyMs: number | undefined;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  maxWatches: number;
  idleTimeoutMs: number | undefined;
  headerTimeoutMs: number | undefined;
  requestTimeoutMs: number | undefined;
  minRequestTimeoutSeconds: number | undefined;
  maxConnectionBufferBytes: number | undefined;
  maxServerBufferBytes: number | undefined;
  logLevel: LogLevel;
  requestLog: boolean;
}

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  mode: { type: 'string' },
  store: { type: 'string' },
  etcd: { type: 'string' },
  upstream: { type: 'string' },
  'upstream-token': { type: 'string' },
  'upstream-ca': { type: 'string' },
  'upstream-insecure-skip-tls-verify': { type: 'boolean' },
  'upstream-watch-list': { type: 'boolean' },
  kubeconfig: { type: 'string' },
  resources: { type: 'string' },
  token: { type: 'string' },
  'channel-capacity': { type: 'string' },
  'history-upper-bound': { type: 'string' },
  'bookmark-frequency-ms': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'max-watches': { type: 'string' },
  'idle-timeout-ms': { type: 'string' },
  'header-timeout-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
  'min-request-timeout': { type: 'string' },
  'max-connection-buffer-bytes': { type: 'string' },
  'max-server-buffer-bytes': { type: 'string' },
  'log-level': { type: 'string' },
  'request-log': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function integer(
  flag: string,
  value: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${flag} must be an integer between ${min} and ${max}, got "${value}"`);
  }
  return Number(value);
}

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  return value;
}

function parseResources(value: string | undefined): string[] {
  const names = (value ?? 'pods').split(',').map((s) => s.trim());
  if (names.some((n) => n === ''))
    throw new UsageError(`--resources must be a comma-separated list of resource names, got "${value}"`);
  const seen = new Set<string>();
  for (const n of names) {
    try {
      resolveResource(n);
    } catch (err) {
      throw new UsageError(`--resources: ${(err as Error).message}`);
    }
    if (seen.has(n)) throw new UsageError(`--resources lists "${n}" twice`);
    seen.add(n);
  }
  return names;
}

function parseEtcdUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--etcd must be a URL such as http://127.0.0.1:2379, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--etcd must be an http:// or https:// URL, got "${value}"`);
  return value;
}

const UPSTREAM_FLAGS = [
  'upstream',
  'upstream-token',
  'upstream-ca',
  'upstream-insecure-skip-tls-verify',
  'upstream-watch-list',
  'kubeconfig',
] as const;

function parseUpstream(values: ReturnType<typeof parse>['values'], store: string): UpstreamFlags {
  if (store !== 'kube') {
    const given = UPSTREAM_FLAGS.find((f) => values[f] !== undefined);
    if (given !== undefined) throw new UsageError(`--${given} needs --store kube`);
  }
  const server = nonEmpty('upstream', values.upstream);
  if (server !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(server);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError(
        `--upstream must be an http:// or https:// URL such as https://127.0.0.1:6443, got "${server}"`,
      );
    }
  }
  const kubeconfig = nonEmpty('kubeconfig', values.kubeconfig);
  if (store === 'kube' && server === undefined && kubeconfig === undefined)
    throw new UsageError('--store kube needs --upstream URL or --kubeconfig FILE');
  return {
    server,
    token: nonEmpty('upstream-token', values['upstream-token']),
    caFile: nonEmpty('upstream-ca', values['upstream-ca']),
    insecureSkipTLSVerify: values['upstream-insecure-skip-tls-verify'] === true,
    watchList: values['upstream-watch-list'] === true,
    kubeconfig,
  };
}

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false });
}

/** Parse `serve` arguments; undefined means --help was asked. Throws UsageError. */
export function parseServeArgs(args: readonly string[]): ServeConfig | undefined {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(args).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help === true) return undefined;
  const mode = values.mode ?? 'beta';
  if (!(MODES as readonly string[]).includes(mode))
    throw new UsageError(`--mode must be one of ${MODES.join(', ')}, got "${mode}"`);
  const logLevel = values['log-level'] ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const store = values.store ?? 'memory';
  if (store !== 'memory' && store !== 'etcd' && store !== 'kube')
    throw new UsageError(`--store must be memory, etcd or kube, got "${store}"`);
  if (values.etcd !== undefined && store !== 'etcd') throw new UsageError('--etcd needs --store etcd');
  const upstream = parseUpstream(values, store);
  const tlsCert = nonEmpty('tls-cert', values['tls-cert']);
  const tlsKey = nonEmpty('tls-key', values['tls-key']);
  if ((tlsCert === undefined) !== (tlsKey === undefined))
    throw new UsageError('--tls-cert and --tls-key must be given together');
  return {
    host: nonEmpty('host', values.host) ?? '127.0.0.1',
    port: integer('port', values.port, 0, 65535) ?? 8080,
    mode: mode as Mode,
    store,
    etcd: parseEtcdUrl(values.etcd ?? 'http://127.0.0.1:2379'),
    upstream,
    resources: parseResources(values.resources),
    token: nonEmpty('token', values.token),
    channelCapacity: integer('channel-capacity', values['channel-capacity'], 1),
    historyUpperBound: integer('history-upper-bound', values['history-upper-bound'], 1),
    bookmarkFrequencyMs: integer('bookmark-frequency-ms', values['bookmark-frequency-ms'], 1),
    tlsCert,
    tlsKey,
    maxWatches: integer('max-watches', values['max-watches'], 1) ?? DEFAULT_MAX_WATCHES,
    idleTimeoutMs: integer('idle-timeout-ms', values['idle-timeout-ms'], 1),
    headerTimeoutMs: integer('header-timeout-ms', values['header-timeout-ms'], 1),
    requestTimeoutMs: integer('request-timeout-ms', values['request-timeout-ms'], 1),
    minRequestTimeoutSeconds: integer('min-request-timeout', values['min-request-timeout'], 1),
    maxConnectionBufferBytes: integer('max-connection-buffer-bytes', values['max-connection-buffer-bytes'], 1),
    maxServerBufferBytes: integer('max-server-buffer-bytes', values['max-server-buffer-bytes'], 1),
    logLevel: logLevel as LogLevel,
    requestLog: values['request-log'] === true,
  };
}
