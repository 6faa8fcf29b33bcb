/**
 * A real kubectl against the server: get, create -f (with client-side
 * validation, which reads /openapi/v2), a duplicate create, get -w receiving
 * an event, delete (kubectl 1.20 then waits through a fieldSelector list and
 * watch), get of a missing object, configmaps and short names.
 *
 * The binary is $KUBECTL, else `kubectl` on PATH (Debian 12's
 * `kubernetes-client` package is kubectl 1.20.2). When it is missing the
 * tests are skipped with a reason, unless CI is set: then they fail.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from '../support/http-client.js';
import { findKubectl, KUBECTL_MISSING } from '../support/kubectl.js';
import { startFixture, type Fixture } from './server-fixture.js';

const KUBECTL = findKubectl();
const MISSING = KUBECTL_MISSING;
if (KUBECTL === undefined && process.env.CI !== undefined && process.env.CI !== '') {
  test('kubectl is installed (required when CI is set)', () => {
    assert.fail(`${MISSING}; CI is set, so this is an error`);
  });
}
const skip = KUBECTL === undefined ? MISSING : false;

const POD_YAML = `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels:
    app: web
spec:
  containers:
  - name: c
    image: busybox
`;

describe('kubectl', { skip }, () => {
  let f: Fixture;
  let dir: string;
  let n = 0;

  interface Run {
    code: number;
    stdout: string;
    stderr: string;
  }

  /** Run kubectl with a fresh discovery cache each time (async: the server is in this process). */
  function kubectl(...args: string[]): Promise<Run> {
    const cacheDir = join(dir, `cache-${n++}`);
    return new Promise((resolve) => {
      execFile(
        KUBECTL!,
        ['--cache-dir', cacheDir, '--request-timeout', '20s', ...args],
        { env: { ...process.env, HOME: dir, KUBECONFIG: join(dir, 'kubeconfig') }, timeout: 30_000 },
        (err, stdout, stderr) => {
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  before(async () => {
    f = await startFixture({ resources: ['pods', 'configmaps'] });
    dir = mkdtempSync(join(tmpdir(), 'watchcache-kubectl-'));
    writeFileSync(
      join(dir, 'kubeconfig'),
      `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${f.url}
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
    writeFileSync(join(dir, 'pod.yaml'), POD_YAML);
  });
  after(async () => {
    await f?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('get pods on an empty server', async () => {
    const r = await kubectl('get', 'pods');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /No resources found in default namespace/);
  });

  test('create -f pod.yaml (201), then a duplicate is AlreadyExists', async () => {
    const r = await kubectl('create', '-f', join(dir, 'pod.yaml'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pod\/web-1 created$/m);
    const dup = await kubectl('create', '-f', join(dir, 'pod.yaml'));
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /Error from server \(AlreadyExists\).*pods "web-1" already exists/);
  });

  test('get pods, get po -A, -o json, label selector', async () => {
    const r = await kubectl('get', 'pods');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s*$/m,
      'the server sends a Table with the pod columns',
    );
    assert.match(r.stdout, /^web-1\s/m);
    const all = await kubectl('get', 'po', '-A');
    assert.match(all.stdout, /^default\s+web-1\s/m);
    const json = await kubectl('get', 'pods', '-o', 'json');
    const list = JSON.parse(json.stdout) as { items: { kind: string; metadata: { name: string } }[] };
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['web-1'],
    );
    const none = await kubectl('get', 'pods', '-l', 'app=db');
    assert.match(none.stderr, /No resources found/);
  });

  test('get pods -w receives an event', async () => {
    const child = spawn(
      KUBECTL!,
      ['--cache-dir', join(dir, `cache-${n++}`), 'get', 'pods', '-w', '--output-watch-events'],
      {
        env: { ...process.env, HOME: dir, KUBECONFIG: join(dir, 'kubeconfig') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    // One listener for the child's whole life: a flowing stream drops the
    // chunks it emits while no 'data' listener is attached.
    let out = '';
    let err = '';
    const waiters = new Set<() => void>();
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const w of [...waiters]) w();
    });
    const seen = (re: RegExp): Promise<void> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`kubectl -w never printed ${re}; stdout: ${out}; stderr: ${err}`));
        }, 20_000);
        function check(): void {
          if (re.test(out)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          }
        }
        waiters.add(check);
        check();
      });
    try {
      await seen(/^EVENT\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s*$/m);
      await seen(/^ADDED\s+web-1\s/m);
      await waitForWatch(f);
      const c = await request(`${f.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        body: { metadata: { name: 'web-2' }, spec: {} },
      });
      assert.equal(c.status, 201);
      await seen(/^ADDED\s+web-2\s/m);
    } finally {
      child.kill('SIGTERM');
    }
  });

  test('delete pod (and kubectl waits for it to be gone), then get is NotFound', async () => {
    const r = await kubectl('delete', 'pod', 'web-1');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pod "web-1" deleted$/m);
    const g = await kubectl('get', 'pod', 'web-1');
    assert.notEqual(g.code, 0);
    assert.match(g.stderr, /Error from server \(NotFound\): pods "web-1" not found/);
  });

  test('configmaps and the cm short name', async () => {
    const c = await request(`${f.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      body: { metadata: { name: 'app-config' }, data: { a: 'b' } },
    });
    assert.equal(c.status, 201);
    const r = await kubectl('get', 'cm');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^app-config\s/m);
  });
});

/** Wait until the kubectl watch is registered with the server (so the next write is live). */
async function waitForWatch(f: Fixture): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (f.server.activeWatches === 0) {
    if (Date.now() > deadline) throw new Error('kubectl never opened its watch');
    await new Promise((r) => setTimeout(r, 10));
  }
}
