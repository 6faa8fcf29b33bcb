/**
 * Lists and gets from the cache (API.md "Lists", semantics §3.6).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BadRequestError,
  NotFoundError,
  ResourceExpiredError,
  ServiceUnavailableError,
  type KubeObject,
} from '../../src/index.js';
import { churn, flush, pod, rejection, setup } from './support/harness.js';

const names = (items: KubeObject[]): string[] => items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

describe('list resourceVersion semantics', () => {
  test("'0': the current state at the cache RV", async () => {
    const { cache, store } = await setup();
    await store.create(pod('a'));
    await store.create(pod('b'));
    await flush();
    const l = await cache.list({ resourceVersion: '0' });
    assert.equal(l.metadata.resourceVersion, '2');
    assert.equal(l.kind, 'PodList');
    assert.equal(l.apiVersion, 'v1');
    assert.deepEqual(names(l.items), ['default/a', 'default/b']);
    assert.ok(
      l.items.every((o) => o.kind === 'Pod' && o.apiVersion === 'v1'),
      'items carry kind and apiVersion',
    );
    await cache.stop();
  });

  test("'' and no RV: consistent, at the store's current RV", async () => {
    const { cache, store } = await setup();
    await store.create(pod('a'));
    await flush();
    assert.equal((await cache.list({ resourceVersion: '' })).metadata.resourceVersion, '1');
    assert.equal((await cache.list({})).metadata.resourceVersion, '1');
    await cache.stop();
  });

  test("'N' NotOlderThan: the current state, at an RV >= N", async () => {
    const { cache, store } = await setup();
    const a = await store.create(pod('a'));
    await store.update({ ...a, spec: { v: 2 } });
    await flush();
    const l = await cache.list({ resourceVersion: '1', resourceVersionMatch: 'NotOlderThan' });
    assert.equal(l.metadata.resourceVersion, '2');
    assert.deepEqual(l.items[0]!.spec, { v: 2 });
    const legacy = await cache.list({ resourceVersion: '1' });
    assert.equal(legacy.metadata.resourceVersion, '2');
    await cache.stop();
  });

  test("'N' Exact: the state at N, reconstructed from the history", async () => {
    const { cache, store } = await setup();
    const snapshots: string[][] = [];
    const snap = async (): Promise<void> => {
      await flush();
      snapshots[store.resourceVersion] = (await store.list()).items.map(
        (o) => `${o.metadata.name}@${o.metadata.resourceVersion}:${JSON.stringify(o.metadata.labels ?? {})}`,
      );
    };
    const a = await store.create(pod('a', { labels: { v: '1' } }));
    await snap(); // 1
    const b = await store.create(pod('b'));
    await snap(); // 2
    await store.update({ ...a, metadata: { ...a.metadata, labels: { v: '2' } } });
    await snap(); // 3
    await store.delete('default', 'b');
    await snap(); // 4
    await store.create(pod('b', { labels: { again: 'yes' } }));
    await snap(); // 5
    await store.delete('default', 'a');
    await snap(); // 6
    void b;
    for (let rv = 1; rv <= 6; rv++) {
      const l = await cache.list({ resourceVersion: String(rv), resourceVersionMatch: 'Exact' });
      assert.equal(l.metadata.resourceVersion, String(rv));
      assert.deepEqual(
        l.items.map(
          (o) => `${o.metadata.name}@${o.metadata.resourceVersion}:${JSON.stringify(o.metadata.labels ?? {})}`,
        ),
        snapshots[rv],
        `state at ${rv}`,
      );
    }
    await cache.stop();
  });

  test("'N' Exact older than the history: 410 Expired", async () => {
    const { cache, store } = await setup({ history: { lowerBound: 4, upperBound: 4 } });
    await churn(store, 10);
    const err = await rejection(cache.list({ resourceVersion: '3', resourceVersionMatch: 'Exact' }));
    assert.ok(err instanceof ResourceExpiredError);
    assert.equal(err.code, 410);
    assert.equal(err.reason, 'Expired');
    await cache.stop();
  });

  test('Exact with a selector filters the reconstructed state', async () => {
    const { cache, store } = await setup();
    const a = await store.create(pod('a', { labels: { app: 'x' } }));
    await store.create(pod('b', { labels: { app: 'y' } }));
    await store.update({ ...a, metadata: { ...a.metadata, labels: { app: 'y' } } });
    await flush();
    const at2 = await cache.list({ resourceVersion: '2', resourceVersionMatch: 'Exact', labelSelector: 'app=x' });
    assert.deepEqual(names(at2.items), ['default/a']);
    const now = await cache.list({ resourceVersion: '0', labelSelector: 'app=x' });
    assert.deepEqual(names(now.items), []);
    await cache.stop();
  });
});

describe('limit and continue', () => {
  test('pages in key order with a continue token; later pages are pinned to the first page RV', async () => {
    const { cache, store } = await setup();
    for (const n of ['a', 'c', 'e', 'g', 'i']) await store.create(pod(n));
    await flush();
    const p1 = await cache.list({ resourceVersion: '0', limit: 2 });
    assert.deepEqual(names(p1.items), ['default/a', 'default/c']);
    assert.equal(p1.metadata.resourceVersion, '5');
    assert.ok(p1.metadata.continue);
    assert.equal(p1.metadata.remainingItemCount, 3);
    // writes between pages must not show
    await store.create(pod('d'));
    const e = await store.get('default', 'e');
    await store.update({ ...e, spec: { changed: true } });
    await store.delete('default', 'g');
    await store.create(pod('z'));
    await flush();
    const p2 = await cache.list({ continue: p1.metadata.continue, limit: 2 });
    assert.equal(p2.metadata.resourceVersion, '5');
    assert.deepEqual(names(p2.items), ['default/e', 'default/g']);
    assert.deepEqual(p2.items[0]!.spec, {}, 'e as it was at RV 5');
    assert.ok(p2.metadata.continue);
    const p3 = await cache.list({ continue: p2.metadata.continue, limit: 2 });
    assert.deepEqual(names(p3.items), ['default/i']);
    assert.equal(p3.metadata.continue, undefined);
    assert.equal(p3.metadata.resourceVersion, '5');
    await cache.stop();
  });

  test('limit is honoured for every RV (also consistent and Exact)', async () => {
    const { cache, store } = await setup();
    for (const n of ['a', 'b', 'c']) await store.create(pod(n));
    await flush();
    assert.equal((await cache.list({ resourceVersion: '', limit: 1 })).items.length, 1);
    assert.equal((await cache.list({ resourceVersion: '2', resourceVersionMatch: 'Exact', limit: 1 })).items.length, 1);
    assert.equal(
      (await cache.list({ resourceVersion: '1', resourceVersionMatch: 'NotOlderThan', limit: 2 })).items.length,
      2,
    );
    await cache.stop();
  });

  test('a continue token whose RV left the history is 410', async () => {
    const { cache, store } = await setup({ history: { lowerBound: 4, upperBound: 4 } });
    for (const n of ['a', 'b', 'c']) await store.create(pod(n));
    await flush();
    const p1 = await cache.list({ limit: 1 });
    await churn(store, 10);
    const err = await rejection(cache.list({ continue: p1.metadata.continue }));
    assert.ok(err instanceof ResourceExpiredError);
    await cache.stop();
  });

  test('a limit with a selector counts matching items only and omits remainingItemCount', async () => {
    const { cache, store } = await setup();
    for (const [n, app] of [
      ['a', 'x'],
      ['b', 'y'],
      ['c', 'x'],
      ['d', 'x'],
    ] as const)
      await store.create(pod(n, { labels: { app } }));
    await flush();
    const p1 = await cache.list({ labelSelector: 'app=x', limit: 2 });
    assert.deepEqual(names(p1.items), ['default/a', 'default/c']);
    assert.equal(p1.metadata.remainingItemCount, undefined);
    const p2 = await cache.list({ labelSelector: 'app=x', limit: 2, continue: p1.metadata.continue });
    assert.deepEqual(names(p2.items), ['default/d']);
    await cache.stop();
  });

  test('malformed continue token and RV with continue are 400', async () => {
    const { cache } = await setup();
    await assert.rejects(cache.list({ continue: 'not-a-token!!' }), BadRequestError);
    const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: 'default/a\u0000' })).toString(
      'base64url',
    );
    await assert.rejects(cache.list({ continue: token, resourceVersion: '5' }), BadRequestError);
    await cache.stop();
  });
});

describe('list validation', () => {
  test('resourceVersionMatch without an RV is 400', async () => {
    const { cache } = await setup();
    for (const match of ['NotOlderThan', 'Exact'] as const) {
      const err = await rejection(cache.list({ resourceVersionMatch: match }));
      assert.ok(err instanceof BadRequestError, `${match} without RV`);
      assert.equal(err.code, 400);
    }
    await cache.stop();
  });

  test('malformed RVs are 400', async () => {
    const { cache } = await setup();
    for (const rv of ['abc', '-1', '1.5', ' 1', '0x10', '99999999999999999999']) {
      const err = await rejection(cache.list({ resourceVersion: rv }));
      assert.ok(err instanceof BadRequestError, `RV ${JSON.stringify(rv)}`);
    }
    await assert.rejects(cache.get('default', 'a', { resourceVersion: 'x' }), BadRequestError);
    await assert.rejects(
      cache.list({ resourceVersion: '1', resourceVersionMatch: 'Sometimes' as never }),
      BadRequestError,
    );
    await assert.rejects(cache.list({ limit: -1 }), BadRequestError);
    await cache.stop();
  });

  test('Exact with RV 0 is 400', async () => {
    const { cache } = await setup();
    await assert.rejects(cache.list({ resourceVersion: '0', resourceVersionMatch: 'Exact' }), BadRequestError);
    await cache.stop();
  });

  test('after stop, lists and gets reject with 503', async () => {
    const { cache } = await setup();
    await cache.stop();
    const err = await rejection(cache.list({}));
    assert.ok(err instanceof ServiceUnavailableError);
    assert.equal(err.code, 503);
    await assert.rejects(cache.get('default', 'a'), ServiceUnavailableError);
  });
});

describe('list order, scope and selectors', () => {
  test('key order: namespace, then name, whatever the write order', async () => {
    const { cache, store } = await setup();
    for (const [ns, n] of [
      ['zeta', 'a'],
      ['alpha', 'z'],
      ['beta', 'm'],
      ['alpha', 'b'],
      ['beta', 'a'],
    ])
      await store.create(pod(n!, { ns: ns! }));
    await flush();
    const l = await cache.list({ resourceVersion: '0' });
    assert.deepEqual(names(l.items), ['alpha/b', 'alpha/z', 'beta/a', 'beta/m', 'zeta/a']);
    await cache.stop();
  });

  test('namespace scoping', async () => {
    const { cache, store } = await setup();
    for (const [ns, n] of [
      ['a', 'x'],
      ['ab', 'x'],
      ['a', 'y'],
      ['b', 'x'],
      ['a-b', 'q'],
    ])
      await store.create(pod(n!, { ns: ns! }));
    await flush();
    assert.deepEqual(names((await cache.list({ namespace: 'a' })).items), ['a/x', 'a/y']);
    assert.deepEqual(names((await cache.list({ namespace: 'ab' })).items), ['ab/x']);
    assert.deepEqual(names((await cache.list({ namespace: 'a-b' })).items), ['a-b/q']);
    assert.deepEqual(names((await cache.list({ namespace: 'nope' })).items), []);
    assert.deepEqual(names((await cache.list({ fieldSelector: 'metadata.namespace=b' })).items), ['b/x']);
    await cache.stop();
  });

  test('label and field selectors', async () => {
    const { cache, store } = await setup();
    await store.create(pod('a', { labels: { app: 'web', tier: 'fe' }, nodeName: 'n1' }));
    await store.create(pod('b', { labels: { app: 'web', tier: 'db' }, nodeName: 'n2' }));
    await store.create(pod('c', { labels: { app: 'batch' }, nodeName: 'n1' }));
    await flush();
    assert.deepEqual(names((await cache.list({ labelSelector: 'app=web,tier!=db' })).items), ['default/a']);
    assert.deepEqual(names((await cache.list({ fieldSelector: 'spec.nodeName=n1' })).items), [
      'default/a',
      'default/c',
    ]);
    assert.deepEqual(names((await cache.list({ fieldSelector: 'metadata.name!=a', labelSelector: 'app' })).items), [
      'default/b',
      'default/c',
    ]);
    await assert.rejects(cache.list({ labelSelector: 'app in (' }), BadRequestError);
    await assert.rejects(cache.list({ fieldSelector: 'nonsense' }), BadRequestError);
    await cache.stop();
  });
});

describe('get', () => {
  test('returns the current object; 404 when missing or deleted', async () => {
    const { cache, store } = await setup();
    await store.create(pod('a', { ns: 'n1' }));
    await store.create(pod('gone'));
    await store.delete('default', 'gone');
    await flush();
    const a = await cache.get('n1', 'a');
    assert.equal(a.metadata.name, 'a');
    assert.equal(a.metadata.resourceVersion, '1');
    assert.equal(a.kind, 'Pod');
    const err = await rejection(cache.get('default', 'gone', { resourceVersion: '0' }));
    assert.ok(err instanceof NotFoundError);
    assert.equal(err.code, 404);
    await assert.rejects(cache.get('n1', 'missing'), NotFoundError);
    await assert.rejects(cache.get('default', 'a'), NotFoundError, 'namespaced lookup');
    await assert.rejects(cache.get('default', ''), BadRequestError);
    await cache.stop();
  });
});

describe('ENGINE BUG (request-options): resourceVersionMatch with an empty resourceVersion', () => {
  // Kubernetes ValidateListOptions: `len(options.ResourceVersion) == 0` -> "resourceVersionMatch is
  // forbidden unless resourceVersion is provided". An empty RV is "not provided" (API.md: '' = unset).
  test("resourceVersion '' with resourceVersionMatch is 400", async () => {
    const { cache, store } = await setup();
    await store.create(pod('a'));
    await flush();
    for (const match of ['NotOlderThan', 'Exact'] as const) {
      const err = await rejection(cache.list({ resourceVersion: '', resourceVersionMatch: match }));
      assert.ok(err instanceof BadRequestError, `'' with ${match} must be 400, got ${String(err)}`);
    }
    await cache.stop();
  });
});
