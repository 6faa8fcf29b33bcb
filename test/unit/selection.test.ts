/**
 * Label and field selectors (full Kubernetes grammar), Selection.classify,
 * and the ADDED/DELETED transitions a watcher sees when an object moves into
 * or out of its selection.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError, parseFieldSelector, parseLabelSelector, type KubeObject } from '../../src/index.js';
import { Delivery, Selection } from '../../src/selection/selection.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { Reader, flush, pod, setup } from './support/harness.js';
import { asWatcher } from '../../src/watch/watcher.js';

const L = (s: string, labels: Record<string, string> | undefined): boolean => parseLabelSelector(s).matches(labels);

describe('label selectors', () => {
  const web = { app: 'web', tier: 'fe' };
  test('= and ==', () => {
    assert.equal(L('app=web', web), true);
    assert.equal(L('app==web', web), true);
    assert.equal(L('app=db', web), false);
    assert.equal(L('app=web', undefined), false);
    assert.equal(L('missing=x', web), false);
  });
  test('!= (also matches when the key is absent)', () => {
    assert.equal(L('app!=db', web), true);
    assert.equal(L('app!=web', web), false);
    assert.equal(L('missing!=x', web), true);
    assert.equal(L('app!=web', undefined), true);
  });
  test('in and notin', () => {
    assert.equal(L('app in (web,db)', web), true);
    assert.equal(L('app in (db, batch)', web), false);
    assert.equal(L('app in(web)', web), true);
    assert.equal(L('missing in (x)', web), false);
    assert.equal(L('app notin (db,batch)', web), true);
    assert.equal(L('app notin (web)', web), false);
    assert.equal(L('missing notin (x)', web), true);
  });
  test('key and !key', () => {
    assert.equal(L('app', web), true);
    assert.equal(L('missing', web), false);
    assert.equal(L('!missing', web), true);
    assert.equal(L('!app', web), false);
    assert.equal(L('!app', undefined), true);
    assert.equal(L('example.com/role', { 'example.com/role': '' }), true);
  });
  test('comma is AND (commas inside parentheses are not separators)', () => {
    assert.equal(L('app=web,tier=fe', web), true);
    assert.equal(L('app=web,tier=db', web), false);
    assert.equal(L('app in (web,db),tier notin (db),!gone', web), true);
    assert.equal(L('app in (web,db),tier in (db,be)', web), false);
    assert.equal(L(' app = web , tier = fe ', web), true);
  });
  test('empty selector matches everything', () => {
    assert.equal(L('', undefined), true);
    assert.equal(parseLabelSelector(undefined).empty, true);
  });
  test('an empty value is a value', () => {
    assert.equal(L('app=', { app: '' }), true);
    assert.equal(L('app=', { app: 'x' }), false);
  });
  test('malformed selectors are BadRequestError', () => {
    for (const bad of [
      'app in (web',
      'app in web)',
      '=web',
      'app=web=x',
      'a b',
      '!',
      'app,,tier',
      'app=web,',
      ',app',
      '-bad=x',
      'app=(x)',
      'app in (a b)',
      'app notin x',
      'x/y/z=1',
      'app==web==x',
    ]) {
      assert.throws(() => parseLabelSelector(bad), BadRequestError, `selector ${JSON.stringify(bad)}`);
    }
  });
});

describe('field selectors', () => {
  const indexers = { 'spec.nodeName': (o: KubeObject) => (o.spec as { nodeName?: string } | undefined)?.nodeName };
  const obj = pod('a', { ns: 'ns1', nodeName: 'n1', status: { phase: 'Running', ready: true, count: 3 } });
  const F = (s: string, o: KubeObject = obj): boolean => parseFieldSelector(s).matches(o, indexers);

  test('metadata.name and metadata.namespace', () => {
    assert.equal(F('metadata.name=a'), true);
    assert.equal(F('metadata.name=b'), false);
    assert.equal(F('metadata.name!=b'), true);
    assert.equal(F('metadata.namespace=ns1'), true);
    assert.equal(F('metadata.namespace==ns1'), true);
    assert.equal(F('metadata.namespace!=ns1'), false);
  });
  test('an indexer field uses the indexer', () => {
    const viaIndexer = { 'spec.host': (o: KubeObject) => `host-${(o.spec as { nodeName?: string }).nodeName}` };
    assert.equal(parseFieldSelector('spec.host=host-n1').matches(obj, viaIndexer), true);
    assert.equal(F('spec.nodeName=n1'), true);
    assert.equal(F('spec.nodeName=n2'), false);
  });
  test('a dot path into the object (string comparison)', () => {
    assert.equal(F('status.phase=Running'), true);
    assert.equal(F('status.phase!=Running'), false);
    assert.equal(F('status.ready=true'), true);
    assert.equal(F('status.count=3'), true);
    assert.equal(parseFieldSelector('spec.nodeName=n1').matches(obj, {}), true, 'dot path without an indexer');
  });
  test('a missing field equals ""', () => {
    assert.equal(F('status.reason='), true);
    assert.equal(F('status.reason!='), false);
    assert.equal(F('status.reason!=x'), true);
    assert.equal(F('no.such.path='), true);
    assert.equal(F('status.phase.deeper='), true, 'path through a string');
  });
  test('comma is AND', () => {
    assert.equal(F('metadata.name=a,status.phase=Running'), true);
    assert.equal(F('metadata.name=a,status.phase=Pending'), false);
  });
  test('escapes', () => {
    const o = pod('a', { status: { msg: 'x,y=z' } });
    assert.equal(parseFieldSelector('status.msg=x\\,y\\=z').matches(o, {}), true);
  });
  test('malformed field selectors are BadRequestError', () => {
    for (const bad of ['metadata.name', '=a', 'metadata.name=a=b', 'bad field=x', 'metadata.name=a,,x=y', 'a=\\q']) {
      assert.throws(() => parseFieldSelector(bad), BadRequestError, `selector ${JSON.stringify(bad)}`);
    }
  });
});

describe('Selection.classify', () => {
  const sel = new Selection({ labelSelector: 'app=x' }, {}, undefined);
  const inSel = pod('a', { labels: { app: 'x' } });
  const outSel = pod('a', { labels: { app: 'y' } });
  const e = (type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject, prev?: KubeObject): WatchCacheEvent =>
    new WatchCacheEvent(type, o, prev, 7, 0, undefined);
  test('the four transitions of a MODIFIED event', () => {
    assert.equal(sel.classify(e('MODIFIED', inSel, inSel)), Delivery.AsIs);
    assert.equal(sel.classify(e('MODIFIED', inSel, outSel)), Delivery.Added);
    assert.equal(sel.classify(e('MODIFIED', outSel, inSel)), Delivery.Deleted);
    assert.equal(sel.classify(e('MODIFIED', outSel, outSel)), Delivery.None);
  });
  test('ADDED and DELETED', () => {
    assert.equal(sel.classify(e('ADDED', inSel)), Delivery.AsIs);
    assert.equal(sel.classify(e('ADDED', outSel)), Delivery.None);
    assert.equal(sel.classify(e('DELETED', outSel, inSel)), Delivery.AsIs, 'DELETED is judged on the previous state');
    assert.equal(sel.classify(e('DELETED', inSel, outSel)), Delivery.None);
  });
  test('the shared forms: DELETED on leaving carries the previous object at the event RV; one wrap per form', () => {
    const ev = e('MODIFIED', outSel, { ...inSel, metadata: { ...inSel.metadata, resourceVersion: '3' } });
    const d1 = ev.deliver(Delivery.Deleted);
    const d2 = ev.deliver(Delivery.Deleted);
    assert.equal(d1, d2);
    assert.equal(d1.type, 'DELETED');
    assert.equal(d1.object.metadata.resourceVersion, '7');
    assert.deepEqual(d1.object.metadata.labels, { app: 'x' });
    assert.equal(ev.wraps, 1);
    assert.equal(ev.deliver(Delivery.Added).type, 'ADDED');
    assert.equal(ev.wraps, 2);
  });
  test('namespace and name scope', () => {
    const scoped = new Selection({ namespace: 'ns1', name: 'a' }, {}, undefined);
    assert.equal(scoped.matches(pod('a', { ns: 'ns1' })), true);
    assert.equal(scoped.matches(pod('a', { ns: 'ns2' })), false);
    assert.equal(scoped.matches(pod('b', { ns: 'ns1' })), false);
    const viaFields = new Selection({ fieldSelector: 'metadata.namespace=ns1,metadata.name=a' }, {}, undefined);
    assert.equal(viaFields.namespace, 'ns1');
    assert.equal(viaFields.name, 'a');
  });
});

describe('selection transitions on a watch', () => {
  for (const mode of ['off', 'alpha', 'beta'] as const) {
    test(`${mode}: moving into a label selection is ADDED, out of it DELETED with the previous object at the event RV`, async () => {
      const { cache, store } = await setup({ mode });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', labelSelector: 'app=x' })));
      const a = await store.create(pod('a', { labels: { app: 'y' } })); // 1: not selected
      const a2 = await store.update({ ...a, metadata: { ...a.metadata, labels: { app: 'x' } } }); // 2: enters
      const a3 = await store.update({ ...a2, spec: { v: 3 } }); // 3: stays
      await store.update({ ...a3, metadata: { ...a3.metadata, labels: { app: 'z' } } }); // 4: leaves
      await store.delete('default', 'a'); // 5: deleted while out: nothing
      const b = await store.create(pod('b', { labels: { app: 'x' } })); // 6: ADDED
      void b;
      await store.delete('default', 'b'); // 7: DELETED
      await flush();
      const got = await r.drain();
      assert.deepEqual(
        got.map((ev) => `${ev.type}:${ev.object.metadata.name}:${ev.object.metadata.resourceVersion}`),
        ['ADDED:a:2', 'MODIFIED:a:3', 'DELETED:a:4', 'ADDED:b:6', 'DELETED:b:7'],
      );
      const leave = got[2]!;
      assert.deepEqual(leave.object.metadata.labels, { app: 'x' }, 'DELETED carries the previous state');
      assert.deepEqual(leave.object.spec, { v: 3 });
      assert.equal(got[0]!.object.metadata.labels!.app, 'x', 'ADDED carries the new state');
      r.w.stop();
      await cache.stop();
    });

    test(`${mode}: field selector transitions on a dot path`, async () => {
      const { cache, store } = await setup({ mode });
      const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'status.phase=Running' })));
      const a = await store.create(pod('a', { status: { phase: 'Pending' } }));
      const a2 = await store.update({ ...a, status: { phase: 'Running' } });
      await store.update({ ...a2, status: { phase: 'Succeeded' } });
      await flush();
      await r.drain();
      assert.deepEqual(r.summary, ['ADDED:2', 'DELETED:3']);
      assert.deepEqual(r.events[1]!.object.status, { phase: 'Running' });
      r.w.stop();
      await cache.stop();
    });
  }

  test('malformed selectors on a watch throw BadRequestError synchronously', async () => {
    const { cache } = await setup();
    assert.throws(() => asWatcher(cache.watch({ labelSelector: 'a in (' })), BadRequestError);
    assert.throws(() => asWatcher(cache.watch({ fieldSelector: 'x' })), BadRequestError);
    assert.equal(cache.watcherCount, 0, 'nothing was registered');
    await cache.stop();
  });

  test('DELETED events carry the last state with the deletion RV', async () => {
    const { cache, store } = await setup();
    const r = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
    const a = await store.create(pod('a', { labels: { k: 'v' } }));
    await store.update({ ...a, spec: { last: true } });
    await store.delete('default', 'a');
    await flush();
    await r.drain();
    const del = r.events.at(-1)!;
    assert.equal(del.type, 'DELETED');
    assert.equal(del.object.metadata.resourceVersion, '3');
    assert.deepEqual(del.object.spec, { last: true });
    r.w.stop();
    await cache.stop();
  });
});
