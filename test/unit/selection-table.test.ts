/**
 * Shared selections (src/selection/selection-table.ts): watchers that ask for
 * the same selection share one Selection, which classifies each event once
 * (Selection.deliveryFor). Sharing must change nothing a watcher receives:
 * every watcher gets exactly what a private Selection of its own request
 * selects (invariant 4), transitions included, in every mode.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/index.js';
import { Delivery, Selection, type SelectionInput } from '../../src/selection/selection.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { Reader, flush, pod, setup } from './support/harness.js';

/** Requests with overlapping and disjoint selections; each is made by two watchers. */
const REQUESTS: SelectionInput[] = [
  {},
  { labelSelector: 'app=a' },
  { labelSelector: 'app=b' },
  { labelSelector: 'app in (a,b)' },
  { labelSelector: 'app!=a' },
  { namespace: 'ns1' },
  { namespace: 'ns1', labelSelector: 'app=a' },
  { namespace: 'ns2', labelSelector: 'app=a' },
  { fieldSelector: 'spec.nodeName=n1' },
  { fieldSelector: 'spec.nodeName=n1', labelSelector: 'app=b' },
];

const relabel = (o: KubeObject, app: string | undefined): KubeObject => {
  const { resourceVersion: _rv, labels: _l, ...meta } = o.metadata;
  return { ...o, metadata: app === undefined ? meta : { ...meta, labels: { app } } };
};

describe('shared selections', () => {
  for (const mode of ['off', 'alpha', 'beta'] as const) {
    test(`${mode}: every watcher receives what a private Selection of its request selects`, async () => {
      const { cache, store } = await setup({ mode, channelCapacity: 1000 });
      const watchers = REQUESTS.flatMap((req) =>
        [0, 1].map(() => ({ req, r: new Reader(asWatcher(cache.watch({ ...req, resourceVersion: '0' }))) })),
      );
      // One Selection per distinct request, shared by its two watchers.
      for (let i = 0; i < watchers.length; i += 2) {
        assert.equal(watchers[i]!.r.w.selection, watchers[i + 1]!.r.w.selection, 'the same request shares one');
        for (let j = i + 2; j < watchers.length; j += 2)
          assert.notEqual(watchers[i]!.r.w.selection, watchers[j]!.r.w.selection, 'different requests do not');
      }
      // Writes that move objects into and out of the selections (labels, node, namespace scope).
      const history: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; prev: KubeObject | undefined }[] =
        [];
      const live = new Map<string, KubeObject>();
      const create = async (o: KubeObject): Promise<void> => {
        const got = await store.create(o);
        history.push({ type: 'ADDED', object: got, prev: undefined });
        live.set(`${got.metadata.namespace}/${got.metadata.name}`, got);
      };
      const update = async (key: string, f: (o: KubeObject) => KubeObject): Promise<void> => {
        const prev = live.get(key)!;
        const got = await store.update(f(prev));
        history.push({ type: 'MODIFIED', object: got, prev });
        live.set(key, got);
      };
      const remove = async (key: string): Promise<void> => {
        const prev = live.get(key)!;
        const got = await store.delete(prev.metadata.namespace!, prev.metadata.name!);
        history.push({ type: 'DELETED', object: got, prev });
        live.delete(key);
      };
      await create(pod('x', { ns: 'ns1', labels: { app: 'a' }, nodeName: 'n1' }));
      await create(pod('y', { ns: 'ns2', labels: { app: 'b' }, nodeName: 'n2' }));
      await create(pod('z', { ns: 'ns1' }));
      await update('ns1/x', (o) => relabel(o, 'b')); // a -> b
      await update('ns2/y', (o) => relabel(o, 'a')); // b -> a
      await update('ns1/z', (o) => relabel(o, 'a')); // none -> a
      await update('ns1/x', (o) => ({ ...relabel(o, 'b'), spec: { nodeName: 'n2' } })); // leaves node n1
      await update('ns2/y', (o) => ({ ...relabel(o, 'b'), spec: { nodeName: 'n1' } })); // a -> b, enters n1
      await update('ns1/z', (o) => relabel(o, undefined)); // a -> none
      await remove('ns1/x');
      await remove('ns2/y');
      await flush();
      for (const { req, r } of watchers) {
        const own = new Selection(req, {}, undefined); // the request's private Selection
        const expected: string[] = [];
        for (const h of history) {
          const rv = Number(h.object.metadata.resourceVersion);
          const d = own.classify(new WatchCacheEvent(h.type, h.object, h.prev, rv, 0, undefined));
          if (d === Delivery.None) continue;
          const type = d === Delivery.Added ? 'ADDED' : d === Delivery.Deleted ? 'DELETED' : h.type;
          expected.push(`${type}:${h.object.metadata.name}:${rv}`);
        }
        const got = (await r.drain()).map(
          (ev) => `${ev.type}:${ev.object.metadata.name}:${ev.object.metadata.resourceVersion}`,
        );
        assert.deepEqual(got, expected, `request ${JSON.stringify(req)}`);
      }
      // The last user lets a Selection go: the same request after that gets a new one.
      const first = watchers[2]!.r.w.selection;
      watchers[2]!.r.w.stop();
      const again = asWatcher(cache.watch({ ...REQUESTS[1]!, resourceVersion: '0' }));
      assert.equal(again.selection, first, 'still in use by the second watcher');
      watchers[3]!.r.w.stop();
      again.stop();
      const fresh = asWatcher(cache.watch({ ...REQUESTS[1]!, resourceVersion: '0' }));
      assert.notEqual(fresh.selection, first, 'released with its last user');
      fresh.stop();
      for (const { r } of watchers) r.w.stop();
      await cache.stop();
    });
  }

  test('deliveryFor answers for each event, not the first one it saw', () => {
    const sel = new Selection({ labelSelector: 'app=a' }, {}, undefined);
    const a = { metadata: { namespace: 'd', name: 'p', labels: { app: 'a' }, resourceVersion: '1' } };
    const b = { metadata: { namespace: 'd', name: 'p', labels: { app: 'b' }, resourceVersion: '2' } };
    const enter = new WatchCacheEvent('MODIFIED', a, b, 2, 0, undefined);
    const leave = new WatchCacheEvent('MODIFIED', b, a, 3, 0, undefined);
    assert.equal(sel.deliveryFor(enter), Delivery.Added);
    assert.equal(sel.deliveryFor(enter), Delivery.Added);
    assert.equal(sel.deliveryFor(leave), Delivery.Deleted);
    assert.equal(sel.deliveryFor(enter), Delivery.Added);
  });
});
