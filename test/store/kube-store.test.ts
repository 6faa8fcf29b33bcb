/**
 * KubeStore against a real upstream: a `watchcache serve` root process on loopback (memory store,
 * and an etcd-backed root for progress across resources), reached directly or through a TcpRelay
 * (network cuts). What the store promises: a paginated list at one RV, a watch from it with the
 * root's RVs once and in order, bookmarks as progress, 410 as StoreCompactedError, writes
 * answered exactly as the upstream answered them, and a watch that resumes after a cut without
 * losing or repeating anything.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeStore } from '../../src/store/kube-store.js';
import { StoreCompactedError, StoreUnavailableError, UpstreamStatusError } from '../../src/store/store-errors.js';
import { upstreamCodeOf } from '../../src/store/upstream-response.js';
import { TcpRelay } from '../../src/testing/tcp-relay.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { Registry } from 'prom-client';
import type { KubeObject, StoreEvent } from '../../src/core/types.js';
import { request, waitUntil } from '../support/http-client.js';
import { serve, type Served } from '../support/serve-process.js';
import { startEtcd } from '../support/etcd-server.js';
import { startFixture } from '../server/server-fixture.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespaced: true };

async function stopServed(s: Served): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
}

async function createPod(url: string, name: string, spec: object = {}): Promise<KubeObject> {
  const r = await request(`${url}/api/v1/namespaces/default/pods`, {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec },
  });
  assert.equal(r.status, 201, r.text);
  return r.json<KubeObject>();
}

function line(e: StoreEvent): string {
  return `${e.type} ${e.object.metadata.name}@${e.resourceVersion}`;
}

test('KubeStore over a watchcache root', { timeout: 120_000 }, async (t) => {
  const root = await serve(['--store', 'memory', '--mode', 'beta', '--bookmark-frequency-ms', '1000']);
  t.after(() => stopServed(root));
  const store = new KubeStore({ upstream: { server: root.url }, resource: PODS, pageSize: 3 });
  t.after(() => store.close());

  await t.test('list: every page at the first page RV, the RV the root reports', async () => {
    for (let i = 0; i < 8; i++) await createPod(root.url, `p${i}`);
    const listed = await store.list();
    const direct = (await request(`${root.url}/api/v1/pods`)).json<{
      metadata: { resourceVersion: string };
      items: KubeObject[];
    }>();
    assert.equal(listed.items.length, 8);
    assert.deepEqual(
      listed.items.map((o) => o.metadata.name),
      direct.items.map((o) => o.metadata.name),
    );
    assert.equal(listed.resourceVersion, Number(direct.metadata.resourceVersion));
    assert.equal(await store.currentResourceVersion(), Number(direct.metadata.resourceVersion));
  });

  await t.test('watch: the root RVs once, in order', async () => {
    const { resourceVersion } = await store.list();
    const events: StoreEvent[] = [];
    const progress: number[] = [];
    const errors: Error[] = [];
    const w = store.watch(
      resourceVersion,
      (e) => events.push(e),
      (e) => errors.push(e),
      (rv) => progress.push(rv),
    );
    const expected: string[] = [];
    for (let i = 0; i < 5; i++)
      expected.push(`ADDED w${i}@${(await createPod(root.url, `w${i}`)).metadata.resourceVersion}`);
    const del = await request(`${root.url}/api/v1/namespaces/default/pods/w0`, { method: 'DELETE' });
    expected.push(`DELETED w0@${del.json<KubeObject>().metadata.resourceVersion}`);
    await waitUntil(() => events.length >= expected.length, 'every event');
    assert.deepEqual(events.map(line), expected);
    // The root's bookmarks (every second) carry the last event's RV here: nothing new to report.
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(
      progress.every((rv) => rv > events[events.length - 1]!.resourceVersion),
      String(progress),
    );
    w.stop();
    assert.deepEqual(errors, []);
  });

  await t.test('writes: the upstream answer, code and Status unchanged', async () => {
    const created = await store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default', name: 'via-store' },
      spec: {},
    });
    assert.equal(upstreamCodeOf(created), 201);
    const onRoot = (await request(`${root.url}/api/v1/namespaces/default/pods/via-store`)).json<KubeObject>();
    assert.equal(onRoot.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.equal(onRoot.metadata.uid, created.metadata.uid);
    // A duplicate create: the root's own 409 Status, exactly.
    const direct = await request(`${root.url}/api/v1/namespaces/default/pods`, {
      method: 'POST',
      body: { metadata: { name: 'via-store' } },
    });
    await assert.rejects(store.create({ metadata: { namespace: 'default', name: 'via-store' } }), (err: unknown) => {
      assert.ok(err instanceof UpstreamStatusError);
      assert.equal(err.code, direct.status);
      assert.deepEqual(err.status, direct.json());
      return true;
    });
    const updated = await store.update({ ...created, spec: { nodeName: 'n1' } });
    assert.equal(upstreamCodeOf(updated), 200);
    await assert.rejects(
      store.update({ ...created, spec: { nodeName: 'n2' } }),
      (err: unknown) => err instanceof UpstreamStatusError && err.code === 409 && err.status.reason === 'Conflict',
    );
    await assert.rejects(
      store.delete('default', 'via-store', { resourceVersion: created.metadata.resourceVersion }),
      (err: unknown) => err instanceof UpstreamStatusError && err.code === 409,
    );
    const deleted = await store.delete('default', 'via-store', { resourceVersion: updated.metadata.resourceVersion });
    assert.ok(Number(deleted.metadata.resourceVersion) > Number(updated.metadata.resourceVersion));
    await assert.rejects(
      store.get('default', 'via-store'),
      (err: unknown) => err instanceof UpstreamStatusError && err.code === 404,
    );
  });

  await t.test('patch: forwarded as it is, answered as the upstream answers a direct PATCH', async () => {
    await createPod(root.url, 'patched');
    const body = JSON.stringify({ metadata: { labels: { patched: 'yes' } } });
    const direct = await request(`${root.url}/api/v1/namespaces/default/pods/patched`, {
      method: 'PATCH',
      body,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    const viaStore = store.patch('default', 'patched', { contentType: 'application/merge-patch+json', body });
    if (direct.status === 200) {
      const patched = await viaStore;
      assert.equal(patched.metadata.labels?.patched, 'yes');
      assert.ok(Number(patched.metadata.resourceVersion) > Number(direct.json<KubeObject>().metadata.resourceVersion));
    } else {
      // This root does not serve PATCH (yet): the store hands on exactly its refusal.
      await assert.rejects(
        viaStore,
        (err: unknown) =>
          err instanceof UpstreamStatusError &&
          err.code === direct.status &&
          JSON.stringify(err.status) === direct.text,
      );
    }
  });

  await t.test('an unreachable upstream: StoreUnavailableError (503 with Retry-After)', async () => {
    const relay = new TcpRelay(root.port);
    await relay.listen();
    relay.cut();
    const cut = new KubeStore({ upstream: { server: `http://127.0.0.1:${relay.port}` }, resource: PODS });
    await assert.rejects(
      cut.currentResourceVersion(),
      (err: unknown) => err instanceof StoreUnavailableError && err.code === 503 && err.retryAfterSeconds === 1,
    );
    cut.close();
    await relay.close();
  });
});

test(
  'KubeStore: a cut stream resumes from the last RV (nothing lost, nothing repeated); 410 is StoreCompactedError',
  { timeout: 120_000 },
  async (t) => {
    const root = await serve(['--store', 'memory', '--mode', 'alpha', '--history-upper-bound', '50']);
    t.after(() => stopServed(root));
    const relay = new TcpRelay(root.port);
    await relay.listen();
    t.after(() => relay.close());
    const registry = new Registry();
    const store = new KubeStore({ upstream: { server: `http://127.0.0.1:${relay.port}` }, resource: PODS, registry });
    t.after(() => store.close());
    const { resourceVersion } = await store.list();
    const events: StoreEvent[] = [];
    const errors: Error[] = [];
    store.watch(
      resourceVersion,
      (e) => events.push(e),
      (e) => errors.push(e),
    );
    const expected: string[] = [];
    for (let i = 0; i < 5; i++)
      expected.push(`ADDED a${i}@${(await createPod(root.url, `a${i}`)).metadata.resourceVersion}`);
    await waitUntil(() => events.length === 5, 'the first events');
    relay.cut();
    await waitUntil(() => !store.health.healthy, 'the watch to notice the upstream is away');
    for (let i = 0; i < 5; i++)
      expected.push(`ADDED b${i}@${(await createPod(root.url, `b${i}`)).metadata.resourceVersion}`);
    relay.restore();
    await waitUntil(() => events.length >= 10 && store.health.healthy, 'the watch to resume');
    expected.push(`ADDED c0@${(await createPod(root.url, 'c0')).metadata.resourceVersion}`);
    await waitUntil(() => events.length >= 11, 'a live event after the resume');
    assert.deepEqual(events.map(line), expected, 'every event once, in order, with the root RVs');
    assert.deepEqual(errors, []);

    // A watch from an RV the root's history no longer has: one StoreCompactedError.
    for (let i = 0; i < 120; i++) await createPod(root.url, `old${i}`);
    const expired: Error[] = [];
    const late: StoreEvent[] = [];
    store.watch(
      events[0]!.resourceVersion,
      (e) => late.push(e),
      (e) => expired.push(e),
    );
    await waitUntil(() => expired.length > 0, 'the 410');
    assert.equal(expired.length, 1);
    assert.ok(expired[0] instanceof StoreCompactedError, String(expired[0]));
    assert.equal(late.length, 0);
    const metrics = await registry.metrics();
    assert.match(metrics, /watchcache_upstream_lists_total\{resource="pods"\} 1\n/);
    assert.match(metrics, /watchcache_upstream_watch_connects_total\{resource="pods",result="expired"\} 1\n/);
    assert.match(metrics, /watchcache_upstream_watch_connects_total\{resource="pods",result="failed"\} [1-9]/);
  },
);

const etcd = await startEtcd();

test(
  'KubeStore over an etcd root: a consistent read at the proxy is served from its cache after writes to another resource',
  { skip: etcd === null ? 'etcd not installed' : false, timeout: 120_000 },
  async (t) => {
    t.after(() => etcd?.stop());
    const root = await serve([
      '--store',
      'etcd',
      '--etcd',
      etcd!.endpoint,
      '--resources',
      'pods,configmaps',
      '--mode',
      'beta',
      '--bookmark-frequency-ms',
      '1000',
    ]);
    t.after(() => stopServed(root));
    const store = new KubeStore({ upstream: { server: root.url }, resource: PODS });
    const cache = new WatchCache({ store, mode: 'beta' });
    t.after(async () => {
      await cache.stop();
      store.close();
    });
    await cache.start();
    await createPod(root.url, 'x');
    // Writes to configmaps move etcd's revision past the last pod event: the pods RV the root
    // reports moves with it, and only progress (the probe's bookmark) brings the proxy there.
    for (let i = 0; i < 3; i++) {
      const r = await request(`${root.url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        body: { metadata: { name: `cm${i}` }, data: {} },
      });
      assert.equal(r.status, 201, r.text);
    }
    const current = await store.currentResourceVersion();
    const list = await cache.list({ resourceVersion: '' });
    assert.ok(Number(list.metadata.resourceVersion) >= current, `${list.metadata.resourceVersion} >= ${current}`);
    assert.deepEqual(
      list.items.map((o) => o.metadata.name),
      ['x'],
    );
    const metrics = await cache.metricsRegistry.getSingleMetricAsString('apiserver_watch_cache_consistent_read_total');
    assert.match(metrics, /fallback="false"[^\n]* 1\b/, `served from the cache, not the fallback list:\n${metrics}`);

    // The root's periodic bookmarks on a plain watch carry its progress (etcd's revision) too.
    const progress: number[] = [];
    const w = store.watch(
      Number(list.metadata.resourceVersion),
      () => undefined,
      () => undefined,
      (rv) => progress.push(rv),
    );
    t.after(() => w.stop());
    const r = await request(`${root.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      body: { metadata: { name: 'cm-last' }, data: {} },
    });
    const cmRV = Number(r.json<KubeObject>().metadata.resourceVersion);
    await waitUntil(
      () => progress.some((rv) => rv >= cmRV),
      `a bookmark at or above ${cmRV} (have ${progress.join(',')})`,
    );
  },
);

test(
  'KubeStore: a watch from RV 0 (an upstream that was empty when listed) gets the objects made since in RV order',
  { timeout: 60_000 },
  async (t) => {
    // An in-process root over a MemoryStore starting at RV 0: `watchcache serve --store memory`
    // starts its RVs at a time-based epoch (cli/resource-version-epoch.ts), so it never lists at 0.
    const root = await startFixture({ mode: 'beta' });
    t.after(() => root.close());
    const store = new KubeStore({ upstream: { server: root.url }, resource: PODS });
    t.after(() => store.close());
    const { resourceVersion } = await store.list();
    assert.equal(resourceVersion, 0);
    // Made between the list and the watch, in reverse key order: key order is not RV order.
    const expected: string[] = [];
    for (const name of ['zc', 'zb', 'za'])
      expected.push(`ADDED ${name}@${(await createPod(root.url, name)).metadata.resourceVersion}`);
    const events: StoreEvent[] = [];
    store.watch(
      0,
      (e) => events.push(e),
      (e) => assert.fail(e),
    );
    await waitUntil(() => events.length >= 3, 'the three objects');
    expected.push(`ADDED live@${(await createPod(root.url, 'live')).metadata.resourceVersion}`);
    await waitUntil(() => events.length >= 4, 'a live event');
    assert.deepEqual(events.map(line), expected);
  },
);

test(
  'KubeStore initialEvents "stream": the state as a watch-list, and the same stream carries the watch',
  { timeout: 60_000 },
  async (t) => {
    const root = await serve(['--store', 'memory', '--mode', 'beta']);
    t.after(() => stopServed(root));
    for (const name of ['s2', 's1', 's3']) await createPod(root.url, name);
    const registry = new Registry();
    const store = new KubeStore({ upstream: { server: root.url }, resource: PODS, initialEvents: 'stream', registry });
    t.after(() => store.close());
    const paginated = await new KubeStore({ upstream: { server: root.url }, resource: PODS }).list();
    const streamed = await store.list();
    assert.equal(streamed.resourceVersion, paginated.resourceVersion);
    assert.deepEqual(streamed.items.map((o) => o.metadata.name).sort(), ['s1', 's2', 's3']);
    // Made between the list and the watch: the parked stream holds it for the watch.
    const expected = [`ADDED s4@${(await createPod(root.url, 's4')).metadata.resourceVersion}`];
    const events: StoreEvent[] = [];
    store.watch(
      streamed.resourceVersion,
      (e) => events.push(e),
      (e) => assert.fail(e),
    );
    expected.push(`ADDED s5@${(await createPod(root.url, 's5')).metadata.resourceVersion}`);
    await waitUntil(() => events.length >= 2, 'both events');
    assert.deepEqual(events.map(line), expected);
    const metrics = await registry.metrics();
    assert.match(metrics, /watchcache_upstream_lists_total\{resource="pods"\} 1\n/);
    assert.doesNotMatch(
      metrics,
      /watchcache_upstream_watch_connects_total\{[^}]*result="ok"\}/,
      'no second request: the watch is the list stream',
    );
    const rootWatches = (await request(`${root.url}/metrics`)).text.match(
      /^apiserver_registered_watchers\{[^}]*\} (\d+)/m,
    );
    assert.equal(rootWatches?.[1], '1');
  },
);

test(
  'KubeStore: a watch connection that hangs (bytes dropped, no reset) is dropped after watchIdleTimeoutMs and resumed',
  { timeout: 60_000 },
  async (t) => {
    const root = await serve(['--store', 'memory', '--mode', 'beta']);
    t.after(() => stopServed(root));
    const relay = new TcpRelay(root.port);
    await relay.listen();
    t.after(() => relay.close());
    const store = new KubeStore({
      upstream: { server: `http://127.0.0.1:${relay.port}`, watchIdleTimeoutMs: 1000 },
      resource: PODS,
    });
    t.after(() => store.close());
    const { resourceVersion } = await store.list();
    const events: StoreEvent[] = [];
    store.watch(
      resourceVersion,
      (e) => events.push(e),
      (e) => assert.fail(e),
    );
    const expected = [`ADDED h0@${(await createPod(root.url, 'h0')).metadata.resourceVersion}`];
    await waitUntil(() => events.length === 1, 'the first event');
    relay.blackhole();
    for (const name of ['h1', 'h2'])
      expected.push(`ADDED ${name}@${(await createPod(root.url, name)).metadata.resourceVersion}`);
    await waitUntil(() => events.length >= 3, 'the events after the hang (a new connection)');
    assert.deepEqual(events.map(line), expected);
  },
);
