/**
 * The objects a store hands out share hidden classes (issue 13, deliverable 3): a frozen copy made
 * with an object spread got a V8 map of its own per object, so every reader (indexers, selection,
 * JSON.stringify, the ring mirror's msgpack pack) went megamorphic and each write built a new map.
 * V8's own answer (%HaveSameMap) decides these tests, never a timing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, type KubeObject } from '../../src/index.js';
import { withRevision } from '../../src/store/etcd-codec.js';
import { plainCopy } from '../../src/store/stored-copy.js';
import { sameHiddenClass } from './support/jit.js';

function pod(i: number, seq: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: 'default', name: `pod-${i}`, labels: { app: `a${i % 3}` }, annotations: { seq: `${seq}` } },
    spec: { nodeName: `node-${i % 4}` },
    status: { phase: 'Running' },
  };
}

function assertOneClass(objects: KubeObject[], what: string): void {
  const [first, ...rest] = objects;
  for (const [i, o] of rest.entries()) {
    assert.ok(sameHiddenClass(first!, o), `${what} ${i + 1}: object has a hidden class of its own`);
    assert.ok(sameHiddenClass(first!.metadata, o.metadata), `${what} ${i + 1}: metadata has a hidden class of its own`);
  }
}

test('MemoryStore: updates of different objects with the same keys share one hidden class, frozen', async () => {
  const store = new MemoryStore();
  const created: KubeObject[] = [];
  for (let i = 0; i < 20; i++) created.push(await store.create(pod(i, 0)));
  assertOneClass(created, 'create');
  const updated: KubeObject[] = [];
  for (let round = 1; round <= 3; round++) {
    for (let i = 0; i < 20; i++) {
      const { resourceVersion: _rv, ...meta } = created[i]!.metadata; // a client's body: the stored keys, no RV
      updated.push(await store.update({ ...pod(i, round), metadata: { ...meta, annotations: { seq: `${round}` } } }));
    }
  }
  assertOneClass(updated, 'update');
  for (const o of updated) {
    assert.ok(Object.isFrozen(o) && Object.isFrozen(o.metadata), 'frozen as before');
  }
  const last = updated.at(-1)!;
  assert.equal(last.metadata.resourceVersion, String(store.resourceVersion));
  assert.equal(last.metadata.uid, created[19]!.metadata.uid);
  assert.equal(last.metadata.creationTimestamp, created[19]!.metadata.creationTimestamp);
  assert.deepEqual(Object.keys(last.metadata), [
    'namespace',
    'name',
    'labels',
    'annotations',
    'uid',
    'creationTimestamp',
    'resourceVersion',
  ]);
});

test('etcd revisions: each decoded revision shares the hidden class of the others', () => {
  const revisions: KubeObject[] = [];
  for (let i = 0; i < 20; i++) {
    const o = pod(i, i);
    revisions.push(withRevision(o, o.metadata, 100 + i));
  }
  assertOneClass(revisions, 'revision');
  assert.equal(revisions[7]!.metadata.resourceVersion, '107');
  assert.ok(Object.isFrozen(revisions[7]) && Object.isFrozen(revisions[7]!.metadata));
});

test('plainCopy: an own "__proto__" key stays a field, never the copy\'s prototype', () => {
  const source = JSON.parse('{"a":1,"__proto__":{"polluted":true}}') as Record<string, unknown>;
  const copy = plainCopy(source);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.deepEqual(Object.keys(copy), ['a', '__proto__']);
  assert.equal((copy as { polluted?: unknown }).polluted, undefined);
});
