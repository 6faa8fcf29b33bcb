/**
 * The editing API over HTTP: PATCH in its three types (and 415 for
 * server-side apply), the resourceVersion precondition of a patch, what a
 * patch cannot change, PATCH through a store that patches itself, and
 * validation (422 Invalid with field causes; 400 for a body that names
 * another namespace or object than the URL).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type HttpResult } from '../support/http-client.js';
import { pod, startFixture, type Fixture } from './server-fixture.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { PatchRequest } from '../../src/store/patch-request.js';
import type { KubeObject } from '../../src/core/types.js';
import { createWatchServer } from '../../src/server/server.js';

interface Obj {
  metadata: {
    name: string;
    resourceVersion: string;
    uid: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
  };
  spec?: { containers?: { name: string; image?: string }[]; nodeName?: string };
}
interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; kind?: string; causes?: { reason: string; field: string; message: string }[] };
}

function status(r: HttpResult, code: number, reason: string): Status {
  assert.equal(r.status, code, r.text);
  const s = r.json<Status>();
  assert.equal(s.kind, 'Status');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason);
  return s;
}

describe('PATCH', () => {
  let f: Fixture;
  const url = (name = ''): string => `${f.url}/api/v1/namespaces/default/pods${name === '' ? '' : `/${name}`}`;
  const patch = (name: string, type: string, body: unknown): Promise<HttpResult> =>
    request(url(name), {
      method: 'PATCH',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': type },
    });
  let created: Obj;
  before(async () => {
    f = await startFixture();
    created = (await request(url(), { method: 'POST', body: pod('p', 'default', 0, { app: 'web' }) })).json<Obj>();
  });
  after(() => f.close());

  test('merge patch, JSON patch and strategic merge patch each answer 200 with the stored object', async () => {
    const m = await patch('p', 'application/merge-patch+json', { metadata: { labels: { tier: 'front', app: null } } });
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.json<Obj>().metadata.labels, { tier: 'front' });
    const j = await patch('p', 'application/json-patch+json', [{ op: 'add', path: '/spec/nodeName', value: 'n1' }]);
    assert.equal(j.status, 200, j.text);
    assert.equal(j.json<Obj>().spec?.nodeName, 'n1');
    const s = await patch('p', 'application/strategic-merge-patch+json', {
      spec: {
        containers: [
          { name: 'c', image: 'nginx' },
          { name: 'd', image: 'redis' },
        ],
      },
    });
    assert.equal(s.status, 200, s.text);
    const stored = s.json<Obj>();
    assert.deepEqual(stored.spec?.containers, [
      { name: 'c', image: 'nginx' },
      { name: 'd', image: 'redis' },
    ]);
    assert.equal(stored.metadata.uid, created.metadata.uid);
    assert.ok(Number(stored.metadata.resourceVersion) > Number(created.metadata.resourceVersion));
    assert.deepEqual((await f.store().get('default', 'p')).spec, stored.spec, 'the store has what PATCH answered');
  });

  test('a stale metadata.resourceVersion in the patch is 409 Conflict; the current one succeeds', async () => {
    const current = (await request(url('p'))).json<Obj>();
    status(
      await patch('p', 'application/merge-patch+json', {
        metadata: { resourceVersion: created.metadata.resourceVersion, labels: { x: 'y' } },
      }),
      409,
      'Conflict',
    );
    status(
      await patch('p', 'application/json-patch+json', [
        { op: 'replace', path: '/metadata/resourceVersion', value: created.metadata.resourceVersion },
      ]),
      409,
      'Conflict',
    );
    const ok = await patch('p', 'application/strategic-merge-patch+json', {
      metadata: { resourceVersion: current.metadata.resourceVersion, labels: { x: 'y' } },
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test('a failed JSON patch test is 422; a malformed patch is 400; a missing object is 404', async () => {
    const s = status(
      await patch('p', 'application/json-patch+json', [{ op: 'test', path: '/metadata/name', value: 'other' }]),
      422,
      'Invalid',
    );
    assert.match(s.message, /test failed/);
    status(await patch('p', 'application/json-patch+json', { op: 'add' }), 400, 'BadRequest');
    status(await patch('p', 'application/merge-patch+json', '{nope'), 400, 'BadRequest');
    status(await patch('p', 'application/strategic-merge-patch+json', [1]), 400, 'BadRequest');
    status(await patch('nope', 'application/merge-patch+json', { metadata: { labels: { a: 'b' } } }), 404, 'NotFound');
  });

  test('server-side apply is 415 with a Status saying so; an unknown patch type is 415', async () => {
    const s = status(
      await patch('p', 'application/apply-patch+yaml', 'metadata:\n  name: p\n'),
      415,
      'UnsupportedMediaType',
    );
    assert.match(s.message, /server-side apply .* is not supported/);
    status(await patch('p', 'text/plain', 'x'), 415, 'UnsupportedMediaType');
  });

  test('uid is immutable (422), name and namespace cannot change (400), creationTimestamp is kept', async () => {
    const before = (await request(url('p'))).json<Obj>();
    const uid = status(
      await patch('p', 'application/merge-patch+json', { metadata: { uid: 'another' } }),
      422,
      'Invalid',
    );
    assert.deepEqual(
      uid.details?.causes?.map((c) => c.field),
      ['metadata.uid'],
    );
    status(await patch('p', 'application/merge-patch+json', { metadata: { name: 'q' } }), 400, 'BadRequest');
    status(
      await patch('p', 'application/merge-patch+json', { metadata: { namespace: 'kube-system' } }),
      400,
      'BadRequest',
    );
    const ts = await patch('p', 'application/merge-patch+json', {
      metadata: { creationTimestamp: '2001-01-01T00:00:00Z' },
    });
    assert.equal(ts.status, 200, ts.text);
    assert.equal(ts.json<Obj>().metadata.creationTimestamp, before.metadata.creationTimestamp);
    status(
      await patch('p', 'application/merge-patch+json', { metadata: { labels: { 'bad key!': 'x' } } }),
      422,
      'Invalid',
    );
  });
});

describe('PATCH retries a write in between, unless the patch named its resourceVersion', () => {
  /** A store where someone else updates the object right after each of the first `races` reads. */
  function racingStore(races: number): MemoryStore {
    const store = new MemoryStore();
    const get = store.get.bind(store);
    let left = races;
    store.get = async (namespace: string, name: string) => {
      const read = await get(namespace, name);
      if (left-- > 0)
        await store.update({
          ...read,
          metadata: { ...read.metadata, labels: { ...read.metadata.labels, racer: String(left) } },
        });
      return read;
    };
    return store;
  }
  async function serveStore(store: MemoryStore): Promise<{ url: string; close(): Promise<void> }> {
    await store.create({ metadata: { namespace: 'default', name: 'r' } });
    const cache = new WatchCache({ store, mode: 'alpha' });
    await cache.start();
    const server = createWatchServer({ caches: [cache], stores: { pods: store }, port: 0, shutdownGraceMs: 500 });
    await server.listen();
    return {
      url: `${server.url}/api/v1/namespaces/default/pods/r`,
      close: async () => (await server.close(), await cache.stop()),
    };
  }
  const mergeHeaders = { 'content-type': 'application/merge-patch+json' };

  test('a conflict from a write in between is retried on the new state (both changes kept)', async () => {
    const s = await serveStore(racingStore(2));
    try {
      const r = await request(s.url, {
        method: 'PATCH',
        body: '{"metadata":{"labels":{"mine":"yes"}}}',
        headers: mergeHeaders,
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json<Obj>().metadata.labels, { racer: '0', mine: 'yes' });
    } finally {
      await s.close();
    }
  });

  test('with its own resourceVersion the patch is not retried: 409', async () => {
    const store = racingStore(1);
    const s = await serveStore(store);
    try {
      const rv = (await store.list()).items[0]!.metadata.resourceVersion!;
      const r = await request(s.url, {
        method: 'PATCH',
        body: JSON.stringify({ metadata: { resourceVersion: rv, labels: { mine: 'yes' } } }),
        headers: mergeHeaders,
      });
      status(r, 409, 'Conflict');
    } finally {
      await s.close();
    }
  });

  test('a store that keeps conflicting gives up after MAX_ATTEMPTS with 409', async () => {
    const s = await serveStore(racingStore(100));
    try {
      status(
        await request(s.url, {
          method: 'PATCH',
          body: '{"metadata":{"labels":{"mine":"yes"}}}',
          headers: mergeHeaders,
        }),
        409,
        'Conflict',
      );
    } finally {
      await s.close();
    }
  });
});

describe('PATCH through a store that patches itself', () => {
  test('the request is handed over as is (content type, body, fieldManager, force), server-side apply included', async () => {
    const store = new MemoryStore();
    await store.create({ metadata: { namespace: 'default', name: 'up' } });
    const seen: PatchRequest[] = [];
    const patching = Object.assign(store, {
      async patch(namespace: string, name: string, req: PatchRequest): Promise<KubeObject> {
        seen.push(req);
        const current = await store.get(namespace, name);
        return { ...current, metadata: { ...current.metadata, labels: { patched: 'upstream' } } };
      },
    });
    const cache = new WatchCache({ store, mode: 'alpha' });
    await cache.start();
    const server = createWatchServer({ caches: [cache], stores: { pods: patching }, port: 0, shutdownGraceMs: 500 });
    await server.listen();
    try {
      const r = await request(`${server.url}/api/v1/namespaces/default/pods/up?fieldManager=me&force=true`, {
        method: 'PATCH',
        body: 'metadata:\n  labels: {a: b}\n',
        headers: { 'content-type': 'application/apply-patch+yaml' },
      });
      assert.equal(r.status, 200, 'an apply patch is handed over too: the upstream decides');
      const ok = await request(`${server.url}/api/v1/namespaces/default/pods/up?fieldManager=me`, {
        method: 'PATCH',
        body: '{"metadata":{"labels":{"a":"b"}}}',
        headers: { 'content-type': 'application/merge-patch+json; charset=utf-8' },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json<Obj>().metadata.labels, { patched: 'upstream' });
      assert.deepEqual(seen, [
        {
          contentType: 'application/apply-patch+yaml',
          body: 'metadata:\n  labels: {a: b}\n',
          fieldManager: 'me',
          force: true,
        },
        { contentType: 'application/merge-patch+json', body: '{"metadata":{"labels":{"a":"b"}}}', fieldManager: 'me' },
      ]);
      const other = await request(`${server.url}/api/v1/namespaces/default/pods/up`, {
        method: 'PATCH',
        body: 'x',
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(other.status, 415, 'an unknown media type is refused here');
    } finally {
      await server.close();
      await cache.stop();
    }
  });
});

describe('validation', () => {
  let f: Fixture;
  const url = (res = 'pods'): string => `${f.url}/api/v1/namespaces/default/${res}`;
  before(async () => {
    f = await startFixture({ resources: ['pods', 'configmaps'] });
  });
  after(() => f.close());

  test('an invalid name is 422 Invalid with a metadata.name cause, and nothing is stored', async () => {
    const s = status(await request(url(), { method: 'POST', body: pod('Bad_Name') }), 422, 'Invalid');
    assert.match(
      s.message,
      /^Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of/,
    );
    assert.deepEqual(s.details, {
      name: 'Bad_Name',
      kind: 'Pod',
      causes: [{ reason: 'FieldValueInvalid', message: s.details!.causes![0]!.message, field: 'metadata.name' }],
    });
    const cm = status(
      await request(url('configmaps'), { method: 'POST', body: { metadata: { name: 'x'.repeat(254) } } }),
      422,
      'Invalid',
    );
    assert.match(
      cm.message,
      /^ConfigMap ".*" is invalid: metadata.name: Invalid value: .*must be no more than 253 characters/,
    );
    assert.equal((await f.store().list()).items.length, 0);
  });

  test('a missing name, bad labels and annotations: one 422 with a cause each', async () => {
    status(await request(url(), { method: 'POST', body: { metadata: {} } }), 422, 'Invalid');
    const s = status(
      await request(url(), {
        method: 'POST',
        body: { metadata: { name: 'ok', labels: { 'a/b/c': 'v', good: 'not ok!' }, annotations: { '-bad': 'x' } } },
      }),
      422,
      'Invalid',
    );
    assert.deepEqual(
      s.details?.causes?.map((c) => c.field),
      ['metadata.labels', 'metadata.labels', 'metadata.annotations'],
    );
    assert.match(s.message, /^Pod "ok" is invalid: \[metadata.labels: Invalid value: "a\/b\/c": /);
  });

  test('an invalid namespace in the URL is 422; a body namespace or name that differs from the URL is 400', async () => {
    const s = status(
      await request(`${f.url}/api/v1/namespaces/Not_A_Namespace/pods`, {
        method: 'POST',
        body: pod('x', 'Not_A_Namespace'),
      }),
      422,
      'Invalid',
    );
    assert.deepEqual(
      s.details?.causes?.map((c) => c.field),
      ['metadata.namespace'],
    );
    status(await request(url(), { method: 'POST', body: pod('x', 'other') }), 400, 'BadRequest');
    const made = (await request(url(), { method: 'POST', body: pod('y') })).json<Obj>();
    status(await request(`${url()}/z`, { method: 'PUT', body: made }), 400, 'BadRequest');
  });

  test('a PUT with another uid is a 409 precondition failure', async () => {
    const made = (await request(`${url()}/y`)).json<Obj>();
    const s = status(
      await request(`${url()}/y`, { method: 'PUT', body: { ...made, metadata: { ...made.metadata, uid: 'other' } } }),
      409,
      'Conflict',
    );
    assert.match(s.message, /Precondition failed: UID in precondition: other/);
  });
});
