/**
 * @kubernetes/client-node against the server: the informer (list, then
 * watch: add / update / delete callbacks) and the plain `Watch` (bookmarks
 * when asked; an expired RV gives the in-stream ERROR 410 and the end).
 *
 * client-node 2.x needs Node >= 22.19 through its undici 8; package.json's
 * `overrides: {undici: ^7.16.0}` makes it load on Node 20 (undici 7 needs
 * Node >= 20.18.1; reference/k8s-client-compat.md 4.1).
 * The package is loaded from $WATCHCACHE_CLIENT_NODE (a package directory)
 * or resolved normally. When it is not installed these tests are skipped with
 * a reason, unless package.json declares it: then a load failure fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request, waitUntil } from '../support/http-client.js';
import { pod, startFixture, type Fixture } from './server-fixture.js';

interface Obj {
  metadata?: { name?: string; resourceVersion?: string };
  code?: number;
  reason?: string;
}
interface KubeConfig {
  loadFromOptions(options: object): void;
  makeApiClient<T>(api: new (...args: never[]) => T): T;
}
interface CoreV1Api {
  listNamespacedPod(p: { namespace: string }): Promise<{ metadata?: { resourceVersion?: string }; items: Obj[] }>;
}
interface Informer {
  on(event: 'add' | 'update' | 'delete', cb: (o: Obj) => void): void;
  on(event: 'error', cb: (e: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}
interface WatchApi {
  watch(
    path: string,
    query: Record<string, unknown>,
    cb: (type: string, obj: Obj) => void,
    done: (err: unknown) => void,
  ): Promise<{ abort(): void }>;
}
interface ClientNode {
  KubeConfig: new () => KubeConfig;
  CoreV1Api: new (...args: never[]) => CoreV1Api;
  Watch: new (kc: KubeConfig) => WatchApi;
  makeInformer(kc: KubeConfig, path: string, list: () => Promise<unknown>): Informer;
}

const PKG = '@kubernetes/client-node';

function declared(): boolean {
  try {
    const pj = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    return pj.dependencies?.[PKG] !== undefined || pj.devDependencies?.[PKG] !== undefined;
  } catch {
    return false;
  }
}

async function load(): Promise<ClientNode | string> {
  const dir = process.env.WATCHCACHE_CLIENT_NODE;
  const specifier = dir !== undefined && dir !== '' ? pathToFileURL(join(dir, 'dist', 'index.js')).href : PKG;
  try {
    return (await import(specifier)) as ClientNode;
  } catch (err) {
    if (declared()) throw err;
    return `${PKG} is not installed (add "${PKG}": "^2.0.1" to devDependencies, with "overrides": {"undici": "^7.16.0"} on Node 20): ${(err as Error).message.split('\n')[0]}`;
  }
}

const loaded = await load();
const skip = typeof loaded === 'string' ? loaded : false;

describe('@kubernetes/client-node', { skip }, () => {
  const k8s = loaded as ClientNode;
  let f: Fixture;
  let kc: KubeConfig;
  before(async () => {
    f = await startFixture({ history: { lowerBound: 4, upperBound: 4 } });
    kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'local', server: f.url, skipTLSVerify: true }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'local', cluster: 'local', user: 'anonymous', namespace: 'default' }],
      currentContext: 'local',
    });
  });
  after(() => f.close());

  test('informer: add, update and delete callbacks', async () => {
    await f.store().create(pod('before'));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () =>
      core.listNamespacedPod({ namespace: 'default' }),
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata?.name}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata?.name}`));
    informer.on('error', () => {});
    await informer.start();
    try {
      await waitUntil(() => seen.includes('add:before'), 'the listed object');
      await waitUntil(() => f.server.activeWatches === 1, 'the informer watch');
      const c = await request(`${f.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod('inf-1') });
      const created = c.json<{ metadata: Record<string, string> }>();
      await waitUntil(() => seen.includes('add:inf-1'), 'add');
      await request(`${f.url}/api/v1/namespaces/default/pods/inf-1`, {
        method: 'PUT',
        body: { ...created, spec: { nodeName: 'n1' } },
      });
      await waitUntil(() => seen.includes('update:inf-1'), 'update');
      await request(`${f.url}/api/v1/namespaces/default/pods/inf-1`, { method: 'DELETE' });
      await waitUntil(() => seen.includes('delete:inf-1'), 'delete');
      assert.deepEqual(seen, ['add:before', 'add:inf-1', 'update:inf-1', 'delete:inf-1']);
    } finally {
      await informer.stop();
    }
  });

  test('Watch: events, an expired RV is an in-stream ERROR 410 and then done(null)', async () => {
    const w = new k8s.Watch(kc);
    const rv = String(f.cache().resourceVersion);
    const got: string[] = [];
    let doneWith: unknown = 'pending';
    const req = await w.watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: rv, allowWatchBookmarks: true },
      (type, o) => got.push(`${type}:${o.metadata?.name ?? ''}`),
      (err) => (doneWith = err),
    );
    await waitUntil(() => f.server.activeWatches === 1, 'the watch');
    await f.store().create(pod('w-1'));
    await waitUntil(() => got.includes('ADDED:w-1'), 'ADDED');
    req.abort();
    for (let i = 0; i < 8; i++) await f.store().create(pod(`fill-${i}`)); // push RV 1 out of the 4-event history
    const errors: Obj[] = [];
    await w.watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: '1' },
      (type, o) => type === 'ERROR' && errors.push(o),
      (err) => (doneWith = err),
    );
    await waitUntil(() => doneWith === null && errors.length === 1, 'the ERROR event and the end');
    assert.equal(errors[0]!.code, 410);
    assert.equal(errors[0]!.reason, 'Expired');
  });
});
