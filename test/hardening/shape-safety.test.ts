/**
 * Shape safety (issue 15 item 1) and DELETE preconditions (item 4), case by
 * case, in every mode and on both stores:
 * - `metadata.labels: null` is stored as absent while label-selector
 *   watches are open; later label-selector lists and watches work;
 * - non-string label values, wrong metadata types: 400 over HTTP and from
 *   the library; a spec nested 1,500 levels deep: 400 (beta's ring mirror
 *   used to overflow the stack on it);
 * - objects already in etcd with odd shapes (written around the store)
 *   are invisible to list, watch and selection, a change into an odd shape
 *   reads as a deletion, and the odd value can still be deleted;
 * - DELETE with preconditions.uid / preconditions.resourceVersion: 409
 *   Conflict with kube-apiserver's message when stale, 200 when they match.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { MODES } from '../../src/cache/cache-options.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { BadRequestError, ConflictError } from '../../src/core/errors.js';
import type { KubeObject } from '../../src/core/types.js';
import type { CacheWatchEvent, ObjectWatchEvent } from '../../src/watch/watch.js';
import { EtcdStore } from '../../src/store/etcd-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { RawWatch, request } from '../support/http-client.js';
import { startEtcd, type EtcdServer } from '../support/etcd-server.js';
import { startFixture, type Fixture } from '../server/server-fixture.js';
import { nestedJson, nestedValue } from './fuzz-arbitraries.js';

/** Collect a watch's object events in the background (an ERROR event fails the test). */
function collect(w: AsyncIterable<CacheWatchEvent>): ObjectWatchEvent[] {
  const out: ObjectWatchEvent[] = [];
  void (async () => {
    for await (const ev of w) {
      if (ev.type === 'ERROR') throw new Error(`unexpected ERROR event: ${ev.object.message}`);
      out.push(ev);
    }
  })();
  return out;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const mode of MODES) {
  describe(`shape safety over HTTP, mode ${mode}`, () => {
    let f: Fixture;
    before(async () => {
      f = await startFixture({ mode });
    });
    after(() => f.close());
    const pods = (): string => `${f.url}/api/v1/namespaces/default/pods`;

    test('labels: null is stored as absent while a label-selector watch is open; selector reads work after', async () => {
      const w = new RawWatch(f.port, '/api/v1/pods?watch=true&resourceVersion=0&labelSelector=app%3Dx');
      const notApp = new RawWatch(f.port, '/api/v1/pods?watch=true&resourceVersion=0&labelSelector=!app');
      await Promise.all([w.response, notApp.response]);
      const r = await request(pods(), {
        method: 'POST',
        body: { metadata: { name: 'nulls', labels: null, annotations: null, finalizers: null }, spec: {} },
      });
      assert.equal(r.status, 201, r.text);
      const stored = r.json<{ metadata: Record<string, unknown> }>();
      assert.equal('labels' in stored.metadata, false);
      assert.equal('annotations' in stored.metadata, false);
      await notApp.waitFor(
        () => notApp.events.some((e) => e.object.metadata.name === 'nulls'),
        'the null-labels pod in the !app watch',
      );
      assert.equal(
        (await request(pods(), { method: 'POST', body: { metadata: { name: 'labelled', labels: { app: 'x' } } } }))
          .status,
        201,
      );
      await w.waitFor(
        () => w.events.some((e) => e.object.metadata.name === 'labelled'),
        'the labelled pod in the app=x watch',
      );
      assert.equal(
        w.events.some((e) => e.object.metadata.name === 'nulls'),
        false,
      );
      const list = await request(`${pods()}?labelSelector=app%3Dx`);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.json<{ items: KubeObject[] }>().items.map((i) => i.metadata.name),
        ['labelled'],
      );
      assert.equal((await request(`${pods()}?labelSelector=!app`)).status, 200);
      w.close();
      notApp.close();
    });

    test('wrong types are 400 BadRequest and nothing is stored', async () => {
      const bodies: object[] = [
        { metadata: { name: 'bad1', labels: { app: 1 } } },
        { metadata: { name: 'bad2', labels: { app: null } } },
        { metadata: { name: 'bad3', labels: ['app'] } },
        { metadata: { name: 'bad4', annotations: 'x' } },
        { metadata: { name: 'bad5', uid: 5 } },
        { metadata: { name: 'bad6', finalizers: [1] } },
        { metadata: { name: 'bad7', ownerReferences: {} } },
        { metadata: { name: 'bad8' }, kind: 7 },
      ];
      for (const body of bodies) {
        const r = await request(pods(), { method: 'POST', body });
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.equal(r.json<{ kind: string; reason: string }>().reason, 'BadRequest');
      }
      const list = await request(pods());
      assert.equal(
        list.json<{ items: KubeObject[] }>().items.some((i) => String(i.metadata.name).startsWith('bad')),
        false,
      );
    });

    test('a spec nested 1,500 (and 20,000) levels deep is 400 before it is stored; the server lives', async () => {
      const w = new RawWatch(f.port, '/api/v1/pods?watch=true&resourceVersion=0');
      await w.response;
      for (const depth of [1500, 20_000]) {
        const r = await request(pods(), {
          method: 'POST',
          body: `{"metadata":{"name":"deep"},"spec":${nestedJson(depth)}}`,
        });
        assert.equal(r.status, 400, r.text);
        assert.match(r.json<{ message: string }>().message, /nested deeper than 256 levels/);
      }
      assert.equal((await request(`${pods()}/deep`)).status, 404);
      // Within the limit is fine, and reaches watchers.
      assert.equal(
        (await request(pods(), { method: 'POST', body: `{"metadata":{"name":"deep"},"spec":${nestedJson(200)}}` }))
          .status,
        201,
      );
      await w.waitFor(() => w.events.some((e) => e.object.metadata.name === 'deep'), 'the 200-deep pod');
      assert.equal((await request(pods())).status, 200);
      w.close();
    });

    test('DELETE preconditions: a stale uid or resourceVersion is 409 Conflict, matching ones delete', async () => {
      const c = (await request(pods(), { method: 'POST', body: { metadata: { name: 'pre' } } })).json<{
        metadata: { uid: string; resourceVersion: string };
      }>();
      const stale = await request(`${pods()}/pre`, {
        method: 'DELETE',
        body: { preconditions: { uid: 'not-the-uid' } },
      });
      assert.equal(stale.status, 409, stale.text);
      const s = stale.json<{ reason: string; message: string; details: { name: string; kind: string } }>();
      assert.equal(s.reason, 'Conflict');
      assert.equal(
        s.message,
        `Operation cannot be fulfilled on pods "pre": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${c.metadata.uid}`,
      );
      assert.deepEqual(s.details, { name: 'pre', kind: 'pods' });
      const staleRV = await request(`${pods()}/pre`, {
        method: 'DELETE',
        body: { preconditions: { uid: c.metadata.uid, resourceVersion: '1' } },
      });
      assert.equal(staleRV.status, 409);
      assert.match(
        staleRV.json<{ message: string }>().message,
        /Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: \d+/,
      );
      assert.equal(
        (await request(`${pods()}/pre`, { method: 'DELETE', body: { preconditions: { uid: 5 } } })).status,
        400,
      );
      const ok = await request(`${pods()}/pre`, {
        method: 'DELETE',
        body: { preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion } },
      });
      assert.equal(ok.status, 200, ok.text);
    });
  });

  describe(`shape safety in the library, mode ${mode}`, () => {
    test('MemoryStore writes: null maps dropped, wrong types and deep nests are BadRequestError; watches survive', async () => {
      const store = new MemoryStore();
      const cache = new WatchCache({ store, mode });
      await cache.start();
      const events = collect(cache.watch({ resourceVersion: '0', labelSelector: 'app=x' }));
      const stored = await store.create({
        metadata: { namespace: 'd', name: 'n', labels: null as unknown as Record<string, string> },
      });
      assert.equal('labels' in stored.metadata, false);
      await assert.rejects(
        store.create({ metadata: { namespace: 'd', name: 'x', labels: { app: 1 as unknown as string } } }),
        BadRequestError,
      );
      await assert.rejects(
        store.create({ metadata: { namespace: 'd', name: 'x' }, spec: nestedValue(1500) }),
        BadRequestError,
      );
      await assert.rejects(store.create({ metadata: { namespace: 'd', name: 'x' }, spec: () => 1 }), BadRequestError);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await assert.rejects(store.create({ metadata: { namespace: 'd', name: 'x' }, spec: cyclic }), BadRequestError);
      await store.create({ metadata: { namespace: 'd', name: 'ok', labels: { app: 'x' } } });
      await until(() => events.some((e) => e.object.metadata.name === 'ok'), 'the ok pod');
      assert.deepEqual(
        (await cache.list({ labelSelector: 'app=x' })).items.map((i) => i.metadata.name),
        ['ok'],
      );
      await cache.stop();
    });

    test('DELETE preconditions in MemoryStore', async () => {
      const store = new MemoryStore();
      const p = await store.create({ metadata: { namespace: 'd', name: 'p' } });
      await assert.rejects(
        store.delete('d', 'p', { uid: 'other' }),
        (e: unknown) => e instanceof ConflictError && /UID in precondition: other/.test(e.message),
      );
      await assert.rejects(store.delete('d', 'p', { resourceVersion: '0' }), ConflictError);
      const last = await store.delete('d', 'p', { uid: p.metadata.uid, resourceVersion: p.metadata.resourceVersion });
      assert.equal(last.metadata.name, 'p');
    });
  });
}

describe('objects already in etcd with odd shapes', () => {
  let etcd: EtcdServer | null;
  let client: Etcd3;
  const stores: EtcdStore[] = [];
  before(async () => {
    etcd = await startEtcd();
    if (etcd !== null) client = new Etcd3({ hosts: [etcd.endpoint] });
  });
  after(async () => {
    for (const s of stores) s.close();
    client?.close();
    await etcd?.stop();
  });

  for (const mode of MODES) {
    test(`mode ${mode}: invisible to list, watch and selection; a change into an odd shape reads as a deletion; deletable`, async (t) => {
      if (etcd === null) return t.skip('etcd not installed');
      const prefix = `/registry/odd-${mode}/`;
      const store = new EtcdStore({ endpoints: [etcd.endpoint], prefix });
      stores.push(store);
      const good = await store.create({ metadata: { namespace: 'd', name: 'good', labels: { app: 'x' } } });
      // Written around the store, as an older or foreign writer might have.
      await client
        .put(`${prefix}d/nulls`)
        .value(JSON.stringify({ metadata: { namespace: 'd', name: 'nulls', labels: null } }));
      await client
        .put(`${prefix}d/deep`)
        .value(`{"metadata":{"namespace":"d","name":"deep"},"spec":${nestedJson(1500)}}`);
      await client
        .put(`${prefix}d/typed`)
        .value(JSON.stringify({ metadata: { namespace: 'd', name: 'typed', labels: { app: 7 } } }));
      const cache = new WatchCache({ store, mode });
      await cache.start();
      const all = collect(cache.watch({ resourceVersion: '0' }));
      const selected = collect(cache.watch({ resourceVersion: '0', labelSelector: 'app=x' }));
      const names = (await cache.list({})).items.map((i) => i.metadata.name).sort();
      assert.deepEqual(names, ['good', 'nulls']); // null labels are absent; too deep / wrong types are invisible
      assert.deepEqual(
        (await cache.list({ labelSelector: 'app=x' })).items.map((i) => i.metadata.name),
        ['good'],
      );
      // A change into an odd shape is seen as the deletion of the last readable state.
      await client
        .put(`${prefix}d/good`)
        .value(
          `{"metadata":{"namespace":"d","name":"good","uid":"${good.metadata.uid}","labels":{"app":"x"}},"spec":${nestedJson(2000)}}`,
        );
      await until(
        () => selected.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'good'),
        'DELETED good in the selector watch',
      );
      await until(
        () => all.some((e) => e.type === 'DELETED' && e.object.metadata.name === 'good'),
        'DELETED good in the plain watch',
      );
      assert.equal(
        (await cache.list({})).items.some((i) => i.metadata.name === 'good'),
        false,
      );
      // The odd values can still be deleted (without preconditions).
      await store.delete('d', 'deep');
      await store.delete('d', 'good');
      const ok = await store.create({ metadata: { namespace: 'd', name: 'after', labels: { app: 'x' } } });
      await until(() => selected.some((e) => e.object.metadata.name === 'after'), 'a clean write afterwards');
      assert.ok(Number(ok.metadata.resourceVersion) > 0);
      await cache.stop();
    });
  }

  test('DELETE preconditions in EtcdStore', async (t) => {
    if (etcd === null) return t.skip('etcd not installed');
    const store = new EtcdStore({ endpoints: [etcd.endpoint], prefix: '/registry/pre/' });
    stores.push(store);
    const p = await store.create({ metadata: { namespace: 'd', name: 'p' } });
    await assert.rejects(
      store.delete('d', 'p', { uid: 'other' }),
      (e: unknown) => e instanceof ConflictError && /UID in precondition: other, UID in object meta: /.test(e.message),
    );
    await assert.rejects(store.delete('d', 'p', { resourceVersion: '1' }), ConflictError);
    const last = await store.delete('d', 'p', { uid: p.metadata.uid, resourceVersion: p.metadata.resourceVersion });
    assert.equal(last.metadata.name, 'p');
  });
});
