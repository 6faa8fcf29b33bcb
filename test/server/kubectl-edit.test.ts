/**
 * kubectl 1.20 (CI's, from Debian) editing objects on `watchcache serve`,
 * over the memory store and over `--store etcd`: apply (create, then a
 * changed file: three-way with the last-applied annotation), label (add,
 * --overwrite, key-), annotate, patch in its three types, edit with a
 * non-interactive EDITOR, get with the Table columns (and -o wide), describe
 * of a pod (with its events) and of a configmap, a 422 create of an invalid
 * name and a 409 patch with a stale resourceVersion.
 *
 * Skipped with a reason when kubectl (or, for the etcd suite, etcd) is not
 * installed, unless CI is set: then that is a failure.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from '../support/http-client.js';
import { findKubectl, KUBECTL_MISSING, kubectlRunner, type Kubectl } from '../support/kubectl.js';
import { startEtcd, type EtcdServer } from '../support/etcd-server.js';
import { serve } from '../support/serve-process.js';
import { startFixture } from './server-fixture.js';

const KUBECTL = findKubectl();
const CI = process.env.CI !== undefined && process.env.CI !== '';
if (KUBECTL === undefined && CI) {
  test('kubectl is installed (required when CI is set)', () =>
    assert.fail(`${KUBECTL_MISSING}; CI is set, so this is an error`));
}

const pod = (image: string, labels: string): string => `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
${labels}
spec:
  containers:
  - name: c
    image: ${image}
    ports:
    - containerPort: 80
`;

interface Backend {
  url: string;
  close(): Promise<void>;
}

interface Obj {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { containers: { name: string; image: string }[]; nodeName?: string };
}

function editingSuite(name: string, start: () => Promise<Backend | string>): void {
  describe(`kubectl editing (${name})`, { skip: KUBECTL === undefined ? KUBECTL_MISSING : false }, () => {
    let backend: Backend | undefined;
    let skipped: string | undefined;
    let dir: string;
    let k: Kubectl;
    const get = async (): Promise<Obj> =>
      (await request(`${backend!.url}/api/v1/namespaces/default/pods/web`)).json<Obj>();
    const ok = async (args: string[], out: RegExp, env?: Record<string, string>): Promise<string> => {
      const r = await k(args, env);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, out);
      return r.stdout;
    };

    before(async () => {
      const b = await start();
      if (typeof b === 'string') skipped = b;
      else backend = b;
      dir = mkdtempSync(join(tmpdir(), 'watchcache-kubectl-edit-'));
      if (backend !== undefined) k = kubectlRunner(KUBECTL!, dir, backend.url);
    });
    after(async () => {
      await backend?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('apply creates, then applies a changed file (three-way: a label dropped from the file is removed)', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      writeFileSync(join(dir, 'pod.yaml'), pod('nginx:1', '    app: web\n    tier: front'));
      await ok(['apply', '-f', join(dir, 'pod.yaml')], /^pod\/web created$/m);
      writeFileSync(join(dir, 'pod.yaml'), pod('nginx:2', '    app: web'));
      await ok(['apply', '-f', join(dir, 'pod.yaml')], /^pod\/web configured$/m);
      const o = await get();
      assert.equal(o.spec.containers[0]!.image, 'nginx:2');
      assert.deepEqual(o.metadata.labels, { app: 'web' });
      assert.match(o.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '', /nginx:2/);
      await ok(['apply', '-f', join(dir, 'pod.yaml')], /^pod\/web unchanged$/m);
    });

    test('label (add, --overwrite, key-) and annotate', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      await ok(['label', 'pod', 'web', 'env=dev'], /^pod\/web labeled$/m);
      const again = await k(['label', 'pod', 'web', 'env=prod']);
      assert.notEqual(again.code, 0, 'an existing label needs --overwrite');
      await ok(['label', 'pod', 'web', 'env=prod', '--overwrite'], /labeled/);
      assert.equal((await get()).metadata.labels?.env, 'prod');
      await ok(['label', 'pod', 'web', 'env-'], /labeled/);
      assert.equal((await get()).metadata.labels?.env, undefined);
      await ok(['annotate', 'pod', 'web', 'note=hello'], /^pod\/web annotated$/m);
      assert.equal((await get()).metadata.annotations?.note, 'hello');
    });

    test('patch: strategic (default), merge and json', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      await ok(
        ['patch', 'pod', 'web', '-p', '{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}'],
        /^pod\/web patched$/m,
      );
      assert.deepEqual(
        (await get()).spec.containers.map((c) => c.name).sort(),
        ['c', 'sidecar'],
        'strategic: containers merged by name',
      );
      await ok(['patch', 'pod', 'web', '--type', 'merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}'], /patched/);
      assert.equal((await get()).metadata.labels?.merged, 'yes');
      await ok(
        [
          'patch',
          'pod',
          'web',
          '--type',
          'json',
          '-p',
          '[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:3"},{"op":"add","path":"/spec/nodeName","value":"n1"}]',
        ],
        /patched/,
      );
      const o = await get();
      assert.equal(o.spec.nodeName, 'n1');
      assert.ok(o.spec.containers.some((c) => c.image === 'nginx:3'));
      const bad = await k([
        'patch',
        'pod',
        'web',
        '--type',
        'json',
        '-p',
        '[{"op":"test","path":"/spec/nodeName","value":"n2"}]',
      ]);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /test failed/);
    });

    test('a patch with a stale resourceVersion is 409 Conflict', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      const r = await k(['patch', 'pod', 'web', '-p', '{"metadata":{"resourceVersion":"1","labels":{"stale":"x"}}}']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Error from server \(Conflict\).*the object has been modified/);
      assert.equal((await get()).metadata.labels?.stale, undefined);
    });

    test('edit with a non-interactive EDITOR', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      const editor = join(dir, 'editor.sh');
      writeFileSync(editor, '#!/bin/sh\nsed -i "s/note: hello/note: edited/" "$1"\n');
      chmodSync(editor, 0o755);
      await ok(['edit', 'pod', 'web'], /^pod\/web edited$/m, { EDITOR: editor, KUBE_EDITOR: editor });
      assert.equal((await get()).metadata.annotations?.note, 'edited');
    });

    test('get prints the Table columns, -o wide the wide ones; configmaps NAME DATA AGE', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      const plain = await ok(['get', 'pods'], /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s*$/m);
      assert.match(plain, /^web\s+0\/2\s+0\s+\d+s\s*$/m);
      await ok(
        ['get', 'pods', '-o', 'wide'],
        /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\s*$/m,
      );
      await ok(['get', 'pods', '-o', 'wide'], /^web\s+0\/2\s+0\s+\d+s\s+<none>\s+n1\s+<none>\s+<none>\s*$/m);
      await ok(['get', 'pods', '-A', '--show-labels'], /^default\s+web\s+.*app=web/m);
      await ok(['create', 'configmap', 'cfg', '--from-literal=a=1', '--from-literal=b=2'], /configmap\/cfg created/);
      await ok(['get', 'cm'], /^NAME\s+DATA\s+AGE\s*\ncfg\s+2\s+\d+s\s*$/m);
    });

    test('describe pod (with its events) and describe configmap', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      const o = await get();
      const ev = await request(`${backend!.url}/api/v1/namespaces/default/events`, {
        method: 'POST',
        body: {
          metadata: { name: 'web.1' },
          involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: o.metadata.uid },
          reason: 'Scheduled',
          message: 'Successfully assigned default/web to n1',
          type: 'Normal',
          source: { component: 'default-scheduler' },
          count: 1,
        },
      });
      assert.equal(ev.status, 201, ev.text);
      const d = await ok(['describe', 'pod', 'web'], /^Name:\s+web$/m);
      assert.match(
        d,
        /^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n[\s-]+\n\s+Normal\s+Scheduled\s+.*default-scheduler\s+Successfully assigned default\/web to n1/m,
      );
      await ok(['describe', 'configmap', 'cfg'], /^Name:\s+cfg$[\s\S]*^Events:\s+<none>$/m);
    });

    test('creating an invalid name is 422 Invalid', async (t) => {
      if (skipped !== undefined) return t.skip(skipped);
      writeFileSync(
        join(dir, 'bad.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\ndata:\n  a: b\n',
      );
      const r = await k(['create', '-f', join(dir, 'bad.yaml')]);
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
      );
      const l = await ok(['get', 'cm', '-o', 'name'], /configmap\/cfg/);
      assert.doesNotMatch(l, /Bad_Name/);
    });
  });
}

editingSuite('memory store', async () => {
  const f = await startFixture({ resources: ['pods', 'configmaps', 'events'] });
  return { url: f.url, close: () => f.close() };
});

editingSuite('--store etcd', async () => {
  let etcd: EtcdServer | null;
  try {
    etcd = await startEtcd();
  } catch (err) {
    if (CI) throw err;
    return `etcd could not start: ${(err as Error).message}`;
  }
  if (etcd === null) return 'etcd is not installed (CI unset)';
  const s = await serve(['--store', 'etcd', '--etcd', etcd.endpoint, '--resources', 'pods,configmaps']);
  return {
    url: s.url,
    async close() {
      s.child.kill('SIGTERM');
      await s.exited;
      await etcd.stop();
    },
  };
});
