/**
 * The server's pure pieces: resource naming, path routes, Accept
 * negotiation, metrics merging, the default watch timeout; plus two real
 * servers: caches with separate registries (merged /metrics) and a cache that
 * has not started (/readyz 503, list 503, watch 429).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { negotiateWatchEncoding } from '../../src/server/media-type.js';
import { mergeMetricsText } from '../../src/server/metrics-endpoint.js';
import { deriveKind, resolveResource, resourceInfo, singularize } from '../../src/server/resources.js';
import { parseRoute } from '../../src/server/routes.js';
import { createWatchServer } from '../../src/server/server.js';
import { defaultWatchTimeoutSeconds } from '../../src/server/watch-handler.js';
import { request } from '../support/http-client.js';

test('resource names: well-known table and derived kinds', () => {
  assert.equal(resolveResource('pods').kind, 'Pod');
  assert.equal(resolveResource('endpoints').kind, 'Endpoints');
  assert.equal(resolveResource('nodes').namespaced, false);
  assert.equal(resolveResource('namespaces').namespaced, false);
  assert.deepEqual(resolveResource('services').shortNames, ['svc']);
  const cases: [string, string, string][] = [
    ['widgets', 'widget', 'Widget'],
    ['policies', 'policy', 'Policy'],
    ['ingressclasses', 'ingressclass', 'Ingressclass'],
    ['boxes', 'box', 'Box'],
    ['foo-bars', 'foo-bar', 'FooBar'],
    ['data', 'data', 'Data'],
  ];
  for (const [plural, singular, kind] of cases) {
    assert.equal(singularize(plural), singular, plural);
    assert.equal(deriveKind(plural), kind, plural);
  }
  assert.throws(() => resolveResource('Pods'), /invalid resource name/);
  assert.throws(() => resolveResource('a/b'), /invalid resource name/);
});

test('routes', () => {
  assert.deepEqual(parseRoute('/api/v1/pods'), {
    type: 'resource',
    resource: 'pods',
    namespace: undefined,
    name: undefined,
    watchPrefix: false,
  });
  assert.deepEqual(parseRoute('/api/v1/namespaces/ns/pods/a'), {
    type: 'resource',
    resource: 'pods',
    namespace: 'ns',
    name: 'a',
    watchPrefix: false,
  });
  assert.deepEqual(parseRoute('/api/v1/namespaces/ns'), {
    type: 'resource',
    resource: 'namespaces',
    namespace: undefined,
    name: 'ns',
    watchPrefix: false,
  });
  assert.deepEqual(parseRoute('/api/v1/watch/namespaces/ns/pods'), {
    type: 'resource',
    resource: 'pods',
    namespace: 'ns',
    name: undefined,
    watchPrefix: true,
  });
  assert.deepEqual(parseRoute('/api/v1/'), { type: 'discovery', path: '/api/v1' });
  assert.deepEqual(parseRoute('/readyz'), { type: 'health', check: 'readyz' });
  for (const p of [
    '/api/v1/namespaces/ns/pods/a/status',
    '/api/v1//pods',
    '/api/v1/namespaces/ns/pods/a%2Fb',
    '/api/v2/pods',
    '/api/v1/x/y/z',
    '/apis/apps/v1',
  ]) {
    assert.deepEqual(parseRoute(p), { type: 'not-found' }, p);
  }
});

test('Accept negotiation for watches', () => {
  assert.equal(negotiateWatchEncoding(undefined), 'json');
  assert.equal(negotiateWatchEncoding('*/*'), 'json');
  assert.equal(negotiateWatchEncoding('application/json;as=Table;v=v1;g=meta.k8s.io,application/json'), 'json');
  assert.equal(negotiateWatchEncoding('application/vnd.msgpack'), 'msgpack');
  assert.equal(negotiateWatchEncoding('application/json;q=0.5, application/vnd.msgpack'), 'msgpack');
  assert.equal(negotiateWatchEncoding('application/vnd.msgpack;q=0, application/json'), 'json');
  assert.equal(negotiateWatchEncoding('application/vnd.kubernetes.protobuf'), undefined);
});

test('mergeMetricsText keeps one HELP/TYPE per family', () => {
  const a = '# HELP m help\n# TYPE m counter\nm{r="a"} 1\n\n# HELP g g\n# TYPE g gauge\ng{r="a"} 2\n';
  const b = '# HELP m help\n# TYPE m counter\nm{r="b"} 3\n';
  assert.equal(
    mergeMetricsText([a, b]),
    '# HELP m help\n# TYPE m counter\nm{r="a"} 1\nm{r="b"} 3\n\n# HELP g g\n# TYPE g gauge\ng{r="a"} 2\n\n',
  );
});

test('the default watch timeout is in [1800, 3600) s', () => {
  assert.equal(
    defaultWatchTimeoutSeconds(() => 0),
    1800,
  );
  assert.equal(
    defaultWatchTimeoutSeconds(() => 0.999999),
    3599,
  );
  for (let i = 0; i < 100; i++) {
    const t = defaultWatchTimeoutSeconds();
    assert.ok(t >= 1800 && t < 3600 && Number.isInteger(t));
  }
});

test('caches with separate registries: /metrics merges them', async () => {
  const caches = ['pods', 'configmaps'].map(
    (r) =>
      new WatchCache({
        store: new MemoryStore(),
        resource: resourceInfo(resolveResource(r)),
        registry: new Registry(),
      }),
  );
  await Promise.all(caches.map((c) => c.start()));
  const server = createWatchServer({ caches, port: 0 });
  await server.listen();
  try {
    const text = (await request(`${server.url}/metrics`)).text;
    assert.equal(text.match(/^# TYPE apiserver_watch_cache_capacity gauge$/gm)?.length, 1);
    assert.match(text, /apiserver_watch_cache_capacity\{group="",resource="pods"\} \d+/);
    assert.match(text, /apiserver_watch_cache_capacity\{group="",resource="configmaps"\} \d+/);
    // read-only resources (no store): writes are 405, discovery lists read verbs only
    const r = await request(`${server.url}/api/v1/namespaces/default/pods`, {
      method: 'POST',
      body: { metadata: { name: 'x' } },
    });
    assert.equal(r.status, 405);
    const res = (await request(`${server.url}/api/v1`)).json<{ resources: { verbs: string[] }[] }>();
    assert.deepEqual(res.resources[0]!.verbs, ['get', 'list', 'watch']);
  } finally {
    await server.close();
    await Promise.all(caches.map((c) => c.stop()));
  }
});

test('a cache that is not started: /readyz 503, list 503, watch 429 with Retry-After', async () => {
  const cache = new WatchCache({ store: new MemoryStore() });
  const server = createWatchServer({ caches: [cache], port: 0 });
  await server.listen();
  try {
    const ready = await request(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(ready.text, /pods: not ready/);
    assert.equal((await request(`${server.url}/healthz`)).status, 200);
    const list = await request(`${server.url}/api/v1/pods`);
    assert.equal(list.status, 503);
    assert.equal(list.json<{ reason: string }>().reason, 'ServiceUnavailable');
    const watch = await request(`${server.url}/api/v1/pods?watch=true`);
    assert.equal(watch.status, 429);
    assert.equal(watch.headers['retry-after'], '1');
    await cache.start();
    assert.equal((await request(`${server.url}/readyz`)).status, 200);
  } finally {
    await server.close();
    await cache.stop();
  }
});
