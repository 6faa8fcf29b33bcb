/**
 * The caching-proxy chain as real processes on loopback: a root (`--store memory`, or `--store
 * etcd` over a throwaway etcd) <- a proxy (`--store kube`) <- a leaf proxy, with kubectl and a
 * @kubernetes/client-node informer at the leaf. One proxy of each chain gets its state as a
 * watch-list (`--upstream-watch-list`), the other with paginated lists.
 *
 * - Writes through the leaf (kubectl create/delete, POST, PUT) land in the root.
 * - A leaf watcher sees exactly the root watcher's events: every event once, in order, with the
 *   root's RVs (compared as `TYPE name@rv` sequences).
 * - An upstream outage (the leaf's link to its upstream cut by a TcpRelay while writes go on at
 *   the root): /readyz at the leaf is 503, RV-0 reads keep working, consistent reads answer 503
 *   with Retry-After; once the link is back the leaf catches up from its upstream's history:
 *   nothing lost, nothing repeated, no re-list.
 * - A root restart (etcd root: its RVs are etcd's and survive it; the memory root's RVs would
 *   start again at 1, see the closing note): the chain resumes without a re-list. Writes made
 *   while the root is down (through a second root over the same etcd) make the root's new history
 *   start above the proxy's position: the 410 travels down the chain, each level re-lists, and the
 *   informer ends up with exactly the root's objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { TcpRelay } from '../../src/testing/tcp-relay.js';
import { startEtcd } from '../support/etcd-server.js';
import { RawWatch, request, waitUntil, type WireEvent } from '../support/http-client.js';
import {
  clientNodeConfig,
  findKubectl,
  Kubectl,
  loadClientNode,
  type ClientNode,
  type ClientNodeInformer,
} from '../support/kube-clients.js';
import { serve, type Served } from '../support/serve-process.js';

const KUBECTL = findKubectl();
const clientNode = await loadClientNode();
const CI = process.env.CI !== undefined && process.env.CI !== '';
const missing =
  KUBECTL === undefined
    ? 'kubectl is not installed (apt-get install -y kubernetes-client, or set KUBECTL)'
    : typeof clientNode === 'string'
      ? clientNode
      : undefined;
if (missing !== undefined && CI)
  test('kubectl and client-node are installed (required when CI is set)', () => assert.fail(missing));
const etcd = missing === undefined ? await startEtcd() : null;

const POD_YAML = `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels: {app: web}
spec:
  containers: [{name: c, image: busybox}]
`;

interface Obj {
  metadata: { name: string; resourceVersion: string; uid?: string };
  [k: string]: unknown;
}

async function stopServed(s: Served): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  s.child.kill('SIGTERM');
  await s.exited;
}

/**
 * The watch response is over: its terminating chunk arrived, or the connection went. A clean end
 * leaves an HTTP/1.1 connection open for the next request until the server's idle timeout (90 s,
 * limits/timeouts.ts), so the socket closing is not the signal.
 */
function ended(w: RawWatch): boolean {
  return w.endedCleanly || w.closed;
}

function seen(w: RawWatch): string[] {
  return w.events
    .filter((e: WireEvent) => e.type !== 'BOOKMARK')
    .map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);
}

async function ready(url: string): Promise<void> {
  await waitUntil(async () => (await request(`${url}/readyz`)).status === 200, `${url}/readyz 200`, 30_000);
}

async function post(url: string, name: string): Promise<Obj> {
  const r = await request(`${url}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'chain' } }, spec: {} },
  });
  assert.equal(r.status, 201, r.text);
  return r.json<Obj>();
}

async function names(url: string): Promise<string[]> {
  const r = await request(`${url}/api/v1/namespaces/default/pods?resourceVersion=0`);
  assert.equal(r.status, 200, r.text);
  return r.json<{ items: Obj[] }>().items.map((o) => o.metadata.name);
}

async function listRV(url: string): Promise<string> {
  const r = await request(`${url}/api/v1/namespaces/default/pods`);
  assert.equal(r.status, 200, r.text);
  return r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
}

/** An informer at `url` recording every callback as `kind name@rv`. */
async function startInformer(k8s: ClientNode, url: string): Promise<{ informer: ClientNodeInformer; calls: string[] }> {
  const kc = clientNodeConfig(k8s, url);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () =>
    core.listNamespacedPod({ namespace: 'default' }),
  );
  const calls: string[] = [];
  for (const kind of ['add', 'update', 'delete'] as const)
    informer.on(kind, (o) => calls.push(`${kind} ${o.metadata?.name}@${o.metadata?.resourceVersion}`));
  informer.on('error', () => undefined);
  await informer.start();
  return { informer, calls };
}

/** Writes through the leaf with kubectl and plain requests, checked at the root. */
async function writeThroughLeaf(kubectl: Kubectl, leaf: string, root: string, prefix: string): Promise<void> {
  const created = await kubectl.run(
    'create',
    '-f',
    kubectl.file('pod.yaml', POD_YAML.replace('web-1', `${prefix}-web`)),
  );
  assert.equal(created.code, 0, created.stderr);
  const a = await post(leaf, `${prefix}-a`);
  await post(leaf, `${prefix}-b`);
  const put = await request(`${leaf}/api/v1/namespaces/default/pods/${prefix}-a`, {
    method: 'PUT',
    body: { ...a, spec: { nodeName: 'n1' } },
  });
  assert.equal(put.status, 200, put.text);
  const del = await kubectl.run('delete', 'pod', `${prefix}-b`);
  assert.equal(del.code, 0, del.stderr);
  // Landed in the root: the root has the leaf's writes, with the uid the leaf answered.
  const onRoot = await request(`${root}/api/v1/namespaces/default/pods/${prefix}-a`);
  assert.equal(onRoot.status, 200);
  assert.equal(onRoot.json<Obj>().metadata.uid, a.metadata.uid);
  assert.equal((await request(`${root}/api/v1/namespaces/default/pods/${prefix}-b`)).status, 404);
  const got = await kubectl.run('get', 'pods', '-o', 'json');
  assert.equal(got.code, 0, got.stderr);
}

/** The informer saw each object version at most once and holds exactly the root's objects. */
async function informerMatchesRoot(calls: string[], informer: ClientNodeInformer, root: string): Promise<void> {
  const rootNames = (await names(root)).sort();
  await waitUntil(
    () =>
      JSON.stringify(
        informer
          .list('default')
          .map((o) => o.metadata!.name!)
          .sort(),
      ) === JSON.stringify(rootNames),
    'the informer to hold the root objects',
  );
  const adds = calls.filter((c) => c.startsWith('add ') || c.startsWith('update '));
  assert.equal(new Set(adds).size, adds.length, `no object version delivered twice: ${calls.join(', ')}`);
}

test(
  'chain over a memory root: writes through the leaf land in the root; an upstream outage is survived without loss or duplicates',
  { skip: missing ?? false, timeout: 180_000 },
  async (t) => {
    const k8s = clientNode as ClientNode;
    const root = await serve(['--store', 'memory', '--mode', 'beta', '--bookmark-frequency-ms', '1000']);
    t.after(() => stopServed(root));
    const mid = await serve([
      '--store',
      'kube',
      '--upstream',
      root.url,
      '--mode',
      'alpha',
      '--bookmark-frequency-ms',
      '1000',
    ]);
    t.after(() => stopServed(mid));
    const link = new TcpRelay(mid.port);
    await link.listen();
    t.after(() => link.close());
    const leaf = await serve([
      '--store',
      'kube',
      '--upstream',
      `http://127.0.0.1:${link.port}`,
      '--upstream-watch-list',
      '--mode',
      'beta',
    ]);
    t.after(() => stopServed(leaf));
    await ready(mid.url);
    await ready(leaf.url);
    const kubectl = new Kubectl(KUBECTL!, leaf.url);
    t.after(() => rmSync(kubectl.dir, { recursive: true, force: true }));

    const rv = await listRV(leaf.url);
    const atRoot = new RawWatch(root.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    const atLeaf = new RawWatch(leaf.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    t.after(() => (atRoot.close(), atLeaf.close()));
    const { informer, calls } = await startInformer(k8s, leaf.url);
    t.after(() => informer.stop());

    await writeThroughLeaf(kubectl, leaf.url, root.url, 'one');
    await atLeaf.waitFor(
      () => seen(atLeaf).length >= seen(atRoot).length && seen(atRoot).length >= 5,
      'the leaf watcher to see the writes',
    );
    assert.deepEqual(seen(atLeaf), seen(atRoot), 'the leaf sees the root events, once, in order, with the root RVs');

    // The outage: the leaf's upstream link is cut while writes go on at the root.
    link.cut();
    await waitUntil(
      async () => (await request(`${leaf.url}/readyz`)).status === 503,
      'the leaf /readyz to report the upstream away',
    );
    const before = await names(leaf.url);
    for (let i = 0; i < 5; i++) await post(root.url, `during-${i}`);
    const gone = await request(`${root.url}/api/v1/namespaces/default/pods/one-a`, { method: 'DELETE' });
    assert.equal(gone.status, 200);
    assert.deepEqual(await names(leaf.url), before, 'RV-0 reads at the leaf keep working from its cache');
    const consistent = await request(`${leaf.url}/api/v1/namespaces/default/pods`);
    assert.equal(consistent.status, 503, consistent.text);
    assert.equal(consistent.headers['retry-after'], '1');
    assert.equal(consistent.json<{ kind: string }>().kind, 'Status');

    link.restore();
    await ready(leaf.url);
    await post(leaf.url, 'after');
    await atLeaf.waitFor(
      () => seen(atLeaf).length >= seen(atRoot).length && seen(atRoot).some((l) => l.includes(' after@')),
      'the leaf watcher to catch up',
    );
    assert.deepEqual(
      seen(atLeaf),
      seen(atRoot),
      'after the outage: nothing lost, nothing repeated, same order and RVs',
    );
    assert.ok(!ended(atLeaf), 'the leaf watcher was never ended (no re-list anywhere in the chain)');
    assert.deepEqual((await names(leaf.url)).sort(), (await names(root.url)).sort());
    const viaKubectl = await kubectl.run('get', 'pods', '-o', 'json');
    assert.equal(viaKubectl.code, 0, viaKubectl.stderr);
    assert.deepEqual(
      (JSON.parse(viaKubectl.stdout) as { items: Obj[] }).items.map((o) => o.metadata.name).sort(),
      (await names(root.url)).sort(),
    );
    await informerMatchesRoot(calls, informer, root.url);
  },
);

test(
  'chain over an etcd root: a root restart is survived; writes while it is down reach the leaf through re-lists',
  { skip: missing ?? (etcd === null ? 'etcd not installed' : false), timeout: 180_000 },
  async (t) => {
    t.after(() => etcd?.stop());
    const k8s = clientNode as ClientNode;
    const rootArgs = ['--store', 'etcd', '--etcd', etcd!.endpoint, '--mode', 'beta', '--bookmark-frequency-ms', '1000'];
    let root = await serve(rootArgs);
    const rootPort = root.port;
    t.after(() => stopServed(root));
    const mid = await serve(['--store', 'kube', '--upstream', root.url, '--upstream-watch-list', '--mode', 'beta']);
    t.after(() => stopServed(mid));
    const leaf = await serve(['--store', 'kube', '--upstream', mid.url, '--mode', 'off']);
    t.after(() => stopServed(leaf));
    await ready(mid.url);
    await ready(leaf.url);
    const kubectl = new Kubectl(KUBECTL!, leaf.url);
    t.after(() => rmSync(kubectl.dir, { recursive: true, force: true }));

    const rv = await listRV(leaf.url);
    const atLeaf = new RawWatch(leaf.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    t.after(() => atLeaf.close());
    const { informer, calls } = await startInformer(k8s, leaf.url);
    t.after(() => informer.stop());
    const expected: string[] = [];
    const record = (o: Obj, type = 'ADDED'): void =>
      void expected.push(`${type} ${o.metadata.name}@${o.metadata.resourceVersion}`);

    await writeThroughLeaf(kubectl, leaf.url, root.url, 'one');
    for (let i = 0; i < 3; i++) record(await post(leaf.url, `x-${i}`));
    await atLeaf.waitFor(() => seen(atLeaf).some((l) => l.includes(' x-2@')), 'the leaf watcher to see the writes');

    // The root restarts on the same port (same etcd): while it is away the chain serves what it has.
    const beforeRestart = seen(atLeaf);
    await stopServed(root);
    await waitUntil(
      async () => (await request(`${leaf.url}/api/v1/namespaces/default/pods`)).status === 503,
      'consistent reads at the leaf to answer 503',
    );
    const consistent = await request(`${leaf.url}/api/v1/namespaces/default/pods`);
    assert.equal(consistent.status, 503);
    assert.equal(consistent.headers['retry-after'], '1');
    assert.ok((await names(leaf.url)).includes('x-2'), 'RV-0 reads keep working at the leaf');
    await waitUntil(
      async () => (await request(`${mid.url}/readyz`)).status === 503,
      'the proxy /readyz to report its upstream away',
    );
    root = await serve([...rootArgs, '--port', String(rootPort)]);
    await ready(mid.url);
    await ready(leaf.url);
    for (let i = 0; i < 3; i++) record(await post(leaf.url, `y-${i}`));
    await atLeaf.waitFor(
      () => seen(atLeaf).some((l) => l.includes(' y-2@')),
      'the leaf watcher to see writes after the restart',
    );
    const events = seen(atLeaf);
    assert.deepEqual(events.slice(0, beforeRestart.length), beforeRestart);
    const etcdLines = events.filter((l) => /^ADDED [xy]-/.test(l));
    assert.deepEqual(
      etcdLines,
      expected,
      'every write once, in order, with etcd revisions as RVs, across the root restart',
    );
    const rvs = events.map((l) => Number(l.split('@')[1]));
    assert.deepEqual(
      rvs,
      [...rvs].sort((a, b) => a - b),
      'RVs strictly in order',
    );
    assert.equal(new Set(rvs).size, rvs.length, 'no event twice');
    assert.ok(!ended(atLeaf), 'no re-list: the leaf watcher is still open');

    // Writes while the root is down (through a second root over the same etcd): the root's new
    // history starts above the chain's position; the 410 goes down the chain and each level re-lists.
    await stopServed(root);
    const other = await serve(rootArgs);
    t.after(() => stopServed(other));
    await ready(other.url);
    for (let i = 0; i < 3; i++) await post(other.url, `z-${i}`);
    root = await serve([...rootArgs, '--port', String(rootPort)]);
    await ready(root.url);
    await waitUntil(
      async () => (await names(leaf.url)).includes('z-2'),
      'the leaf to re-list and hold the writes made while the root was down',
    );
    await atLeaf.waitFor(() => ended(atLeaf), 'the leaf watcher (off mode) to be ended by the re-list');
    await informerMatchesRoot(calls, informer, root.url);
    assert.deepEqual((await names(leaf.url)).sort(), (await names(other.url)).sort());
  },
);
