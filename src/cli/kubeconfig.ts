/**
 * The upstream of `watchcache serve --store kube`: from a kubeconfig file, the
 * way kubectl reads it (current-context -> its cluster and user), and/or the
 * --upstream* flags, which override what the file says (as kubectl's
 * --server/--token/--certificate-authority/--insecure-skip-tls-verify do).
 *
 * Read from the kubeconfig: cluster `server`, `certificate-authority` (a file,
 * relative to the kubeconfig's directory) or `certificate-authority-data`
 * (base64), `insecure-skip-tls-verify`; user `token` or `tokenFile`,
 * `client-certificate(-data)` and `client-key(-data)`. Any problem is a
 * UsageError naming the file and the field.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { KubeClientOptions } from '../store/kube-client.js';
import { UsageError } from './usage-error.js';

/** What the command line says about the upstream. */
export interface UpstreamFlags {
  server: string | undefined;
  token: string | undefined;
  caFile: string | undefined;
  insecureSkipTLSVerify: boolean;
  /** Get the initial state as a watch-list (sendInitialEvents) instead of paginated lists. */
  watchList: boolean;
  kubeconfig: string | undefined;
}

type Named = { name?: unknown; [key: string]: unknown };

interface KubeconfigCluster {
  server?: unknown;
  'certificate-authority'?: unknown;
  'certificate-authority-data'?: unknown;
  'insecure-skip-tls-verify'?: unknown;
}

interface KubeconfigUser {
  token?: unknown;
  tokenFile?: unknown;
  'client-certificate'?: unknown;
  'client-certificate-data'?: unknown;
  'client-key'?: unknown;
  'client-key-data'?: unknown;
}

function readText(what: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new UsageError(`${what}: cannot read ${file}: ${(err as Error).message}`);
  }
}

function str(file: string, field: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new UsageError(`--kubeconfig ${file}: ${field} must be a string`);
  return v;
}

function entry<T>(file: string, list: unknown, kind: string, name: string): T {
  if (!Array.isArray(list)) throw new UsageError(`--kubeconfig ${file}: no ${kind}s`);
  const found = (list as Named[]).find((e) => e !== null && typeof e === 'object' && e.name === name);
  const body = found?.[kind];
  if (body === undefined || body === null || typeof body !== 'object')
    throw new UsageError(`--kubeconfig ${file}: no ${kind} named "${name}"`);
  return body as T;
}

/** The client options kubectl would use for `file`'s current context. */
export function readKubeconfig(file: string): KubeClientOptions {
  let doc: Record<string, unknown>;
  try {
    doc = parseYaml(readText('--kubeconfig', file).toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--kubeconfig ${file}: not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object') throw new UsageError(`--kubeconfig ${file}: not a kubeconfig`);
  const current = str(file, 'current-context', doc['current-context']);
  if (current === undefined || current === '') throw new UsageError(`--kubeconfig ${file}: no current-context`);
  const context = entry<{ cluster?: unknown; user?: unknown }>(file, doc.contexts, 'context', current);
  const clusterName = str(file, `context "${current}" cluster`, context.cluster);
  if (clusterName === undefined) throw new UsageError(`--kubeconfig ${file}: context "${current}" names no cluster`);
  const cluster = entry<KubeconfigCluster>(file, doc.clusters, 'cluster', clusterName);
  const userName = str(file, `context "${current}" user`, context.user);
  const user: KubeconfigUser =
    userName === undefined || userName === '' ? {} : entry<KubeconfigUser>(file, doc.users, 'user', userName);

  const dir = dirname(resolve(file));
  const path = (p: string): string => (isAbsolute(p) ? p : resolve(dir, p));
  // `-data` (base64) wins over the file, as in kubectl.
  const material = (field: string, data: unknown, fileField: unknown): Buffer | undefined => {
    const d = str(file, `${field}-data`, data);
    if (d !== undefined) return Buffer.from(d, 'base64');
    const f = str(file, field, fileField);
    return f === undefined ? undefined : readText(`--kubeconfig ${file}: ${field}`, path(f));
  };
  const server = str(file, `cluster "${clusterName}" server`, cluster.server);
  if (server === undefined || server === '')
    throw new UsageError(`--kubeconfig ${file}: cluster "${clusterName}" has no server`);
  const options: KubeClientOptions = { server };
  const ca = material('certificate-authority', cluster['certificate-authority-data'], cluster['certificate-authority']);
  if (ca !== undefined) options.ca = ca;
  const skip = cluster['insecure-skip-tls-verify'];
  if (skip === true || skip === 'true') options.insecureSkipTLSVerify = true;
  const token = str(file, 'token', user.token);
  const tokenFile = str(file, 'tokenFile', user.tokenFile);
  if (token !== undefined && token !== '') options.token = token;
  else if (tokenFile !== undefined)
    options.token = readText(`--kubeconfig ${file}: tokenFile`, path(tokenFile)).toString('utf8').trim();
  const cert = material('client-certificate', user['client-certificate-data'], user['client-certificate']);
  const key = material('client-key', user['client-key-data'], user['client-key']);
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError(`--kubeconfig ${file}: user "${userName}" needs both a client certificate and a client key`);
  if (cert !== undefined) options.clientCert = cert;
  if (key !== undefined) options.clientKey = key;
  return options;
}

/** The upstream's client options: the kubeconfig's (when given), overridden by the flags. */
export function resolveUpstream(flags: UpstreamFlags): KubeClientOptions {
  const base: Partial<KubeClientOptions> = flags.kubeconfig === undefined ? {} : readKubeconfig(flags.kubeconfig);
  const server = flags.server ?? base.server;
  if (server === undefined) throw new UsageError('--store kube needs --upstream URL or --kubeconfig FILE');
  const options: KubeClientOptions = { ...base, server };
  if (flags.token !== undefined) options.token = flags.token;
  if (flags.caFile !== undefined) options.ca = readText('--upstream-ca', flags.caFile);
  if (flags.insecureSkipTLSVerify) options.insecureSkipTLSVerify = true;
  return options;
}
