/**
 * Test helper: the kubectl binary and a runner for it. The binary is
 * $KUBECTL, else `kubectl` on PATH (CI extracts Debian's kubectl 1.20 into
 * .ci/tools and sets KUBECTL). `kubectlRunner(dir, url)` writes a kubeconfig
 * for the server into dir and runs kubectl with a fresh discovery cache each
 * time (kubectl caches discovery, which would hide missing endpoints).
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findKubectl(): string | undefined {
  const env = process.env.KUBECTL;
  if (env !== undefined && env !== '') return existsSync(env) ? env : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'kubectl'))) return join(dir, 'kubectl');
  }
  return undefined;
}

export const KUBECTL_MISSING =
  'kubectl is not installed (apt-get install -y kubernetes-client, or set KUBECTL=/path/to/kubectl)';

interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

export type Kubectl = (args: string[], env?: Record<string, string>) => Promise<KubectlRun>;

/** A kubectl bound to one server (kubeconfig in `dir`, namespace default). */
export function kubectlRunner(binary: string, dir: string, url: string): Kubectl {
  const kubeconfig = join(dir, `kubeconfig-${new URL(url).port}`);
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${url}
    insecure-skip-tls-verify: true
users:
- name: anonymous
  user: {}
contexts:
- name: local
  context: {cluster: local, user: anonymous, namespace: default}
current-context: local
`,
  );
  let n = 0;
  return (args, env = {}) =>
    new Promise((resolve) => {
      const cacheDir = join(dir, `cache-${new URL(url).port}-${n++}`);
      execFile(
        binary,
        ['--cache-dir', cacheDir, '--request-timeout', '20s', ...args],
        { env: { ...process.env, HOME: dir, KUBECONFIG: kubeconfig, ...env }, timeout: 30_000 },
        (err, stdout, stderr) => {
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
}
