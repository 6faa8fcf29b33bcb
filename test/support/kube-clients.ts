/**
 * Real Kubernetes clients for tests: kubectl ($KUBECTL, else `kubectl` on PATH) run with a
 * throwaway kubeconfig and discovery cache, and @kubernetes/client-node (1.4.0: 2.x does not load
 * on Node 20), loaded from $WATCHCACHE_CLIENT_NODE or resolved normally. Each says why it is
 * missing so a test can skip with the reason (CI requires both).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export function findKubectl(): string | undefined {
  const env = process.env.KUBECTL;
  if (env !== undefined && env !== '') return existsSync(env) ? env : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl');
  }
  return undefined;
}

export interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl bound to one server: every run gets a fresh discovery cache. */
export class Kubectl {
  readonly dir: string;
  private n = 0;
  constructor(
    private readonly binary: string,
    server: string,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'watchcache-kubectl-'));
    writeFileSync(
      join(this.dir, 'kubeconfig'),
      `apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: anonymous, user: {}}]
contexts: [{name: local, context: {cluster: local, user: anonymous, namespace: default}}]
current-context: local
`,
    );
  }

  run(...args: string[]): Promise<KubectlRun> {
    const cacheDir = join(this.dir, `cache-${this.n++}`);
    return new Promise((resolve) => {
      execFile(
        this.binary,
        ['--cache-dir', cacheDir, '--request-timeout', '20s', ...args],
        { env: { ...process.env, HOME: this.dir, KUBECONFIG: join(this.dir, 'kubeconfig') }, timeout: 30_000 },
        (err, stdout, stderr) => {
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** Write a file into this kubectl's directory; returns its path. */
  file(name: string, text: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, text);
    return path;
  }
}

interface ClientNodeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}
export interface ClientNodeKubeConfig {
  loadFromOptions(options: object): void;
  makeApiClient<T>(api: new (...args: never[]) => T): T;
}
interface ClientNodeCoreV1Api {
  listNamespacedPod(p: {
    namespace: string;
  }): Promise<{ metadata?: { resourceVersion?: string }; items: ClientNodeObject[] }>;
}
export interface ClientNodeInformer {
  on(event: 'add' | 'update' | 'delete', cb: (o: ClientNodeObject) => void): void;
  on(event: 'error', cb: (e: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  list(namespace?: string): ClientNodeObject[];
}
export interface ClientNode {
  KubeConfig: new () => ClientNodeKubeConfig;
  CoreV1Api: new (...args: never[]) => ClientNodeCoreV1Api;
  makeInformer(kc: ClientNodeKubeConfig, path: string, list: () => Promise<unknown>): ClientNodeInformer;
}

/** client-node, or the reason it cannot be loaded. */
export async function loadClientNode(): Promise<ClientNode | string> {
  const dir = process.env.WATCHCACHE_CLIENT_NODE;
  const specifier =
    dir !== undefined && dir !== '' ? pathToFileURL(join(dir, 'dist', 'index.js')).href : '@kubernetes/client-node';
  try {
    return (await import(specifier)) as ClientNode;
  } catch (err) {
    return `@kubernetes/client-node cannot be loaded: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** A client-node KubeConfig for a plain-http server (skipTLSVerify is needed for http). */
export function clientNodeConfig(k8s: ClientNode, server: string): ClientNodeKubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'anonymous', namespace: 'default' }],
    currentContext: 'local',
  });
  return kc;
}
