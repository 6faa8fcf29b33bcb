/**
 * The HTTP API over real sockets: discovery shapes, health and metrics,
 * CRUD round trip, list paging, and every error Status (400, 401, 404, 405,
 * 409, 410, 413, 415, 504).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type HttpResult } from '../support/http-client.js';
import { pod, startFixture, type Fixture } from './server-fixture.js';

interface Status {
  kind: string;
  apiVersion: string;
  status: string;
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; kind?: string; retryAfterSeconds?: number; causes?: { type?: string }[] };
}

function assertStatus(r: HttpResult, code: number, reason: string, message?: RegExp): Status {
  assert.equal(r.status, code, r.text);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  const s = r.json<Status>();
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.equal(s.status, 'Failure');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason);
  if (message !== undefined) assert.match(s.message, message);
  return s;
}

describe('discovery, health, metrics', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ resources: ['pods', 'configmaps', 'nodes', 'widgets'] });
  });
  after(() => f.close());

  test('GET /api is APIVersions with the reached address', async () => {
    const r = await request(`${f.url}/api`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${f.port}` }],
    });
  });

  test('GET /apis is an empty APIGroupList', async () => {
    const r = await request(`${f.url}/apis`);
    assert.deepEqual(r.json(), { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
  });

  test('GET /api/v1 lists the served resources', async () => {
    const list = (await request(`${f.url}/api/v1`)).json<{
      kind: string;
      groupVersion: string;
      resources: Record<string, unknown>[];
    }>();
    assert.equal(list.kind, 'APIResourceList');
    assert.equal(list.groupVersion, 'v1');
    const byName = new Map(list.resources.map((r) => [r.name, r]));
    assert.deepEqual([...byName.keys()], ['pods', 'configmaps', 'nodes', 'widgets']);
    assert.deepEqual(byName.get('pods'), {
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
    });
    assert.equal(byName.get('configmaps')!.kind, 'ConfigMap');
    assert.deepEqual(byName.get('configmaps')!.shortNames, ['cm']);
    assert.equal(byName.get('nodes')!.namespaced, false);
    assert.equal(byName.get('widgets')!.kind, 'Widget');
    assert.equal(byName.get('widgets')!.namespaced, true);
  });

  test('GET /version and /openapi/v2 (200, empty, octet-stream); /openapi/v3 is 404', async () => {
    const v = (await request(`${f.url}/version`)).json<{ major: string; minor: string; gitVersion: string }>();
    assert.equal(v.major, '1');
    assert.match(v.gitVersion, /^v1\./);
    const o = await request(`${f.url}/openapi/v2`);
    assert.equal(o.status, 200);
    assert.equal(o.headers['content-type'], 'application/octet-stream');
    assert.equal(o.body.length, 0);
    assertStatus(await request(`${f.url}/openapi/v3`), 404, 'NotFound');
  });

  test('unknown paths and resources are 404 Status', async () => {
    assertStatus(await request(`${f.url}/nope`), 404, 'NotFound', /could not find the requested resource/);
    assertStatus(await request(`${f.url}/api/v1/secrets`), 404, 'NotFound');
    assertStatus(await request(`${f.url}/api/v1/pods/x`), 404, 'NotFound'); // namespaced object without a namespace
    assertStatus(await request(`${f.url}/api/v1/namespaces/default/nodes`), 404, 'NotFound'); // cluster-scoped under a namespace
  });

  test('/healthz, /livez, /readyz and /metrics', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await request(`${f.url}${p}`);
      assert.equal(r.status, 200, p);
      assert.equal(r.text, 'ok');
    }
    const m = await request(`${f.url}/metrics`);
    assert.equal(m.status, 200);
    assert.match(String(m.headers['content-type']), /^text\/plain/);
    for (const name of [
      'apiserver_watch_cache_capacity',
      'apiserver_registered_watchers',
      'apiserver_terminated_watchers_total',
      'apiserver_watch_cache_event_encodings_total',
    ]) {
      assert.match(m.text, new RegExp(`^# TYPE ${name} `, 'm'), name);
      assert.equal(m.text.match(new RegExp(`^# TYPE ${name} `, 'gm'))!.length, 1, `${name} once`);
    }
    assert.match(m.text, /apiserver_watch_cache_capacity\{group="",resource="pods"\}/);
    assert.match(m.text, /apiserver_watch_cache_capacity\{group="",resource="configmaps"\}/);
  });

  test('methods other than GET on discovery are 405', async () => {
    assertStatus(await request(`${f.url}/api`, { method: 'POST', body: {} }), 405, 'MethodNotAllowed');
  });
});

describe('CRUD and errors', () => {
  let f: Fixture;
  const pods = (ns = 'default'): string => `${f.url}/api/v1/namespaces/${ns}/pods`;
  before(async () => {
    f = await startFixture({
      resources: ['pods', 'nodes', 'endpoints'],
      blockTimeoutMs: 200,
      bodyLimitBytes: 3 * 1024 * 1024,
    });
  });
  after(() => f.close());

  test('create (201), get, update, delete round trip with kind and apiVersion', async () => {
    const c = await request(pods(), { method: 'POST', body: pod('web-1') });
    assert.equal(c.status, 201, c.text);
    const created = c.json<{ kind: string; apiVersion: string; metadata: Record<string, string> }>();
    assert.equal(created.kind, 'Pod');
    assert.equal(created.apiVersion, 'v1');
    assert.equal(created.metadata.namespace, 'default');
    assert.match(created.metadata.resourceVersion!, /^\d+$/);
    assert.match(created.metadata.uid!, /^[0-9a-f-]{36}$/);

    const g = await request(`${pods()}/web-1`);
    assert.equal(g.status, 200);
    assert.deepEqual(g.json(), created);

    const u = await request(`${pods()}/web-1`, { method: 'PUT', body: { ...created, spec: { nodeName: 'n1' } } });
    assert.equal(u.status, 200, u.text);
    const updated = u.json<{ kind: string; metadata: Record<string, string>; spec: { nodeName: string } }>();
    assert.equal(updated.kind, 'Pod');
    assert.equal(updated.spec.nodeName, 'n1');
    assert.equal(updated.metadata.uid, created.metadata.uid);
    assert.ok(Number(updated.metadata.resourceVersion) > Number(created.metadata.resourceVersion));

    // a stale resourceVersion is a 409 Conflict
    const stale = await request(`${pods()}/web-1`, { method: 'PUT', body: created });
    assertStatus(stale, 409, 'Conflict', /Operation cannot be fulfilled on pods "web-1"/);

    const d = await request(`${pods()}/web-1`, { method: 'DELETE', body: { propagationPolicy: 'Background' } });
    assert.equal(d.status, 200, d.text);
    const deleted = d.json<{ kind: string; apiVersion: string; metadata: Record<string, string> }>();
    assert.equal(deleted.kind, 'Pod');
    assert.equal(deleted.apiVersion, 'v1');
    assert.equal(deleted.metadata.name, 'web-1');
    assert.equal(Number(deleted.metadata.resourceVersion), Number(updated.metadata.resourceVersion) + 1);

    assertStatus(await request(`${pods()}/web-1`), 404, 'NotFound', /^pods "web-1" not found$/);
  });

  test('duplicate create is 409 AlreadyExists', async () => {
    assert.equal((await request(pods(), { method: 'POST', body: pod('dup') })).status, 201);
    const s = assertStatus(
      await request(pods(), { method: 'POST', body: pod('dup') }),
      409,
      'AlreadyExists',
      /^pods "dup" already exists$/,
    );
    assert.equal(s.details?.name, 'dup');
  });

  test('PUT and DELETE of a missing object are 404; a stale delete precondition is 409', async () => {
    assertStatus(
      await request(`${pods()}/ghost`, { method: 'PUT', body: pod('ghost') }),
      404,
      'NotFound',
      /^pods "ghost" not found$/,
    );
    assertStatus(await request(`${pods()}/ghost`, { method: 'DELETE' }), 404, 'NotFound');
    const c = (await request(pods(), { method: 'POST', body: pod('pre') })).json<{
      metadata: { resourceVersion: string };
    }>();
    const body = {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { resourceVersion: String(Number(c.metadata.resourceVersion) - 1) },
    };
    assertStatus(await request(`${pods()}/pre`, { method: 'DELETE', body }), 409, 'Conflict');
    body.preconditions.resourceVersion = c.metadata.resourceVersion;
    assert.equal((await request(`${pods()}/pre`, { method: 'DELETE', body })).status, 200);
  });

  test('404 messages use the plural resource name (endpoints)', async () => {
    assertStatus(
      await request(`${f.url}/api/v1/namespaces/default/endpoints/x`),
      404,
      'NotFound',
      /^endpoints "x" not found$/,
    );
  });

  test('malformed bodies: 400 (JSON, kind, namespace, name), 422 (invalid or missing name), 415 (media type)', async () => {
    assertStatus(await request(pods(), { method: 'POST', body: '{not json' }), 400, 'BadRequest', /not valid JSON/);
    assertStatus(await request(pods(), { method: 'POST', body: '[]' }), 400, 'BadRequest');
    assertStatus(
      await request(pods(), { method: 'POST', body: { metadata: {} } }),
      422,
      'Invalid',
      /metadata.name: Required value/,
    );
    assertStatus(
      await request(pods(), { method: 'POST', body: { kind: 'Service', metadata: { name: 'x' } } }),
      400,
      'BadRequest',
      /kind/,
    );
    assertStatus(await request(pods(), { method: 'POST', body: pod('x', 'other') }), 400, 'BadRequest', /namespace/);
    assertStatus(
      await request(pods(), { method: 'POST', body: { metadata: { name: 'Bad_Name' } } }),
      422,
      'Invalid',
      /is invalid: metadata.name: Invalid value/,
    );
    assertStatus(
      await request(`${pods()}/a`, { method: 'PUT', body: pod('b') }),
      400,
      'BadRequest',
      /does not match the name/,
    );
    assertStatus(
      await request(pods(), { method: 'POST', body: 'metadata: {}', headers: { 'content-type': 'application/yaml' } }),
      415,
      'UnsupportedMediaType',
    );
    assertStatus(
      await request(`${pods()}?dryRun=All`, { method: 'POST', body: pod('dry') }),
      400,
      'BadRequest',
      /dryRun/,
    );
  });

  test('a body over 3 MiB is 413', async () => {
    const big = { ...pod('huge'), data: 'x'.repeat(3 * 1024 * 1024) };
    assertStatus(await request(pods(), { method: 'POST', body: big }), 413, 'RequestEntityTooLarge');
    assertStatus(await request(`${pods()}/huge`), 404, 'NotFound');
    // just under the limit is fine
    const ok = { ...pod('almost'), data: 'x'.repeat(3 * 1024 * 1024 - 200) };
    assert.equal((await request(pods(), { method: 'POST', body: ok })).status, 201);
  });

  test('unsupported methods are 405 (collection DELETE, POST to all namespaces)', async () => {
    assertStatus(await request(pods(), { method: 'DELETE' }), 405, 'MethodNotAllowed');
    assertStatus(await request(`${f.url}/api/v1/pods`, { method: 'POST', body: pod('x') }), 405, 'MethodNotAllowed');
  });

  test('cluster-scoped resources (nodes) live at /api/v1/nodes/{name}', async () => {
    const c = await request(`${f.url}/api/v1/nodes`, {
      method: 'POST',
      body: { metadata: { name: 'node-1', namespace: 'ignored' } },
    });
    assert.equal(c.status, 201, c.text);
    const node = c.json<{ kind: string; metadata: { namespace?: string } }>();
    assert.equal(node.kind, 'Node');
    assert.equal(node.metadata.namespace, undefined);
    assert.equal((await request(`${f.url}/api/v1/nodes/node-1`)).status, 200);
    const list = (await request(`${f.url}/api/v1/nodes`)).json<{ kind: string; items: { kind: string }[] }>();
    assert.equal(list.kind, 'NodeList');
    assert.equal(list.items.length, 1);
    assert.equal(list.items[0]!.kind, 'Node');
  });

  test('list with limit + continue pages in key order; items carry kind and apiVersion', async () => {
    for (let i = 0; i < 5; i++)
      assert.equal(
        (
          await request(pods('paging'), {
            method: 'POST',
            body: pod(`p-${i}`, 'paging', 0, { app: i % 2 === 0 ? 'even' : 'odd' }),
          })
        ).status,
        201,
      );
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    let rv: string | undefined;
    do {
      const q = `limit=2${cont === undefined ? '' : `&continue=${encodeURIComponent(cont)}`}`;
      const r = await request(`${pods('paging')}?${q}`);
      assert.equal(r.status, 200, r.text);
      const list = r.json<{
        kind: string;
        apiVersion: string;
        metadata: { resourceVersion: string; continue?: string };
        items: { kind: string; apiVersion: string; metadata: { name: string } }[];
      }>();
      assert.equal(list.kind, 'PodList');
      assert.equal(list.apiVersion, 'v1');
      rv ??= list.metadata.resourceVersion;
      assert.equal(list.metadata.resourceVersion, rv, 'continue pins the RV of the first page');
      assert.ok(list.items.length <= 2);
      for (const it of list.items) {
        assert.equal(it.kind, 'Pod');
        assert.equal(it.apiVersion, 'v1');
        names.push(it.metadata.name);
      }
      cont = list.metadata.continue;
      pages++;
    } while (cont !== undefined && cont !== '');
    assert.deepEqual(names, ['p-0', 'p-1', 'p-2', 'p-3', 'p-4']);
    assert.equal(pages, 3);
    const sel = (await request(`${pods('paging')}?labelSelector=app%3Deven`)).json<{
      items: { metadata: { name: string } }[];
    }>();
    assert.deepEqual(
      sel.items.map((i) => i.metadata.name),
      ['p-0', 'p-2', 'p-4'],
    );
    const byName = (await request(`${f.url}/api/v1/pods?fieldSelector=metadata.name%3Dp-3`)).json<{
      items: { metadata: { name: string } }[];
    }>();
    assert.deepEqual(
      byName.items.map((i) => i.metadata.name),
      ['p-3'],
    );
  });

  test('malformed query parameters are 400 with clear messages', async () => {
    const cases: [string, RegExp][] = [
      ['resourceVersion=abc', /invalid resourceVersion "abc"/],
      ['resourceVersion=-1', /invalid resourceVersion/],
      ['resourceVersion=1&resourceVersionMatch=Bogus', /invalid resourceVersionMatch "Bogus"/],
      ['resourceVersionMatch=NotOlderThan', /resourceVersionMatch/],
      ['limit=-1', /invalid limit/],
      ['limit=ten', /invalid limit "ten"/],
      ['watch=maybe', /invalid watch "maybe"/],
      ['watch=true&timeoutSeconds=soon', /invalid timeoutSeconds "soon"/],
      ['watch=true&allowWatchBookmarks=yes', /invalid allowWatchBookmarks "yes"/],
      ['watch=true&sendInitialEvents=true', /sendInitialEvents requires resourceVersionMatch=NotOlderThan/],
      ['sendInitialEvents=true', /forbidden for list/],
      ['labelSelector=a%20in%20(', /invalid labelSelector/],
      ['fieldSelector=metadata.name', /invalid fieldSelector/],
      [`labelSelector=a%3D${'x'.repeat(10_001)}`, /invalid labelSelector: \d+ characters, the limit is 10000/],
      ['continue=garbage', /continue/i],
    ];
    for (const [q, message] of cases) assertStatus(await request(`${pods()}?${q}`), 400, 'BadRequest', message);
  });

  test('a list at a future RV waits, then 504 Timeout with Retry-After (TooLargeResourceVersion)', async () => {
    const r = await request(`${pods()}?resourceVersion=999999&resourceVersionMatch=NotOlderThan`);
    const s = assertStatus(r, 504, 'Timeout', /Too large resource version/);
    assert.equal(r.headers['retry-after'], '1');
    assert.equal(s.details?.retryAfterSeconds, 1);
    assert.equal(s.details?.causes?.[0]?.type, 'ResourceVersionTooLarge');
  });
});

describe('410 for an Exact list older than the history', () => {
  test('Exact RV below the history is 410 Expired', async () => {
    const f = await startFixture({ history: { lowerBound: 2, upperBound: 2 } });
    try {
      for (let i = 0; i < 6; i++)
        await request(`${f.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod(`e-${i}`) });
      const r = await request(`${f.url}/api/v1/pods?resourceVersion=1&resourceVersionMatch=Exact`);
      assertStatus(r, 410, 'Expired', /too old resource version/);
    } finally {
      await f.close();
    }
  });
});

describe('bearer token', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ token: 's3cret' });
  });
  after(() => f.close());

  test('every API path needs the token: 401 Status Unauthorized', async () => {
    for (const p of ['/api', '/api/v1', '/api/v1/pods', '/metrics', '/version', '/openapi/v2', '/nope']) {
      const r = await request(`${f.url}${p}`);
      assertStatus(r, 401, 'Unauthorized', /^Unauthorized$/);
    }
    assertStatus(
      await request(`${f.url}/api/v1/pods`, { headers: { authorization: 'Bearer wrong' } }),
      401,
      'Unauthorized',
    );
    assertStatus(await request(`${f.url}/api/v1/pods`, { headers: { authorization: 's3cret' } }), 401, 'Unauthorized');
    assertStatus(
      await request(`${f.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod('x') }),
      401,
      'Unauthorized',
    );
    assertStatus(await request(`${f.url}/api/v1/pods?watch=true`), 401, 'Unauthorized');
  });

  test('with the token everything works; health paths never need it', async () => {
    const auth = { authorization: 'Bearer s3cret' };
    assert.equal((await request(`${f.url}/api/v1/pods`, { headers: auth })).status, 200);
    assert.equal((await request(`${f.url}/metrics`, { headers: auth })).status, 200);
    for (const p of ['/healthz', '/readyz', '/livez']) assert.equal((await request(`${f.url}${p}`)).status, 200, p);
  });
});
