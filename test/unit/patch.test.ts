/**
 * The three patch types against the examples of the Kubernetes docs
 * ("Update API Objects in Place Using kubectl patch", the strategic merge
 * patch and preserve-order design documents) and RFC 7386 / RFC 6902.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonValue } from '../../src/server/patch/json-values.js';
import { applyMergePatch } from '../../src/server/patch/merge-patch.js';
import { applyJsonPatch, jsonPatchOperations } from '../../src/server/patch/json-patch.js';
import { patchSchemaFor } from '../../src/server/patch/patch-strategies.js';
import { applyStrategicMergePatch } from '../../src/server/patch/strategic-merge-patch.js';

const pods = patchSchemaFor('pods');
const smp = (original: unknown, patch: unknown, resource = 'pods'): unknown =>
  applyStrategicMergePatch(
    original as JsonValue,
    patch as JsonValue,
    resource === 'pods' ? pods : patchSchemaFor(resource),
  );

describe('merge patch (RFC 7386)', () => {
  test('the RFC 7386 example', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    assert.deepEqual(applyMergePatch(target, patch), {
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
    assert.equal(target.author.familyName, 'Doe', 'the target is not modified');
  });
  test('RFC 7386 appendix cases: non-object patches replace, nulls inside new maps are dropped', () => {
    assert.deepEqual(applyMergePatch({ a: 'b' }, { a: 'c' }), { a: 'c' });
    assert.deepEqual(applyMergePatch({ a: [{ b: 'c' }] }, { a: [1] }), { a: [1] });
    assert.deepEqual(applyMergePatch(['a', 'b'], ['c', 'd']), ['c', 'd']);
    assert.deepEqual(applyMergePatch({ a: 'b' }, ['c']), ['c']);
    assert.deepEqual(applyMergePatch({ e: null }, { a: 1 }), { e: null, a: 1 });
    assert.deepEqual(applyMergePatch({}, { a: { bb: { ccc: null } } }), { a: { bb: {} } });
  });
  test('a __proto__ key is data, not the prototype', () => {
    const out = applyMergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}') as JsonValue) as Record<
      string,
      unknown
    >;
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(Object.keys(out), ['__proto__']);
  });
  test('lists of containers are replaced (the docs: merge patch replaces the containers list)', () => {
    const pod = { spec: { containers: [{ name: 'patch-demo-ctr', image: 'nginx' }] } };
    assert.deepEqual(
      applyMergePatch(pod, {
        spec: { containers: [{ name: 'patch-demo-ctr-3', image: 'gcr.io/google-samples/hello-app:2.0' }] },
      }),
      {
        spec: { containers: [{ name: 'patch-demo-ctr-3', image: 'gcr.io/google-samples/hello-app:2.0' }] },
      },
    );
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { name: 'a', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  test('add, remove, replace, move, copy and test, in order', () => {
    const ops = jsonPatchOperations([
      { op: 'test', path: '/metadata/labels/app', value: 'x' },
      { op: 'add', path: '/metadata/labels/tier', value: 'web' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:1.25' },
      { op: 'copy', from: '/spec/containers/0', path: '/spec/containers/-' },
      { op: 'replace', path: '/spec/containers/1/name', value: 'd' },
      { op: 'move', from: '/metadata/labels/app', path: '/metadata/labels/application' },
      { op: 'remove', path: '/metadata/labels/tier' },
    ]);
    assert.deepEqual(applyJsonPatch(doc, ops), {
      metadata: { name: 'a', labels: { application: 'x' } },
      spec: {
        containers: [
          { name: 'c', image: 'nginx:1.25' },
          { name: 'd', image: 'nginx:1.25' },
        ],
      },
    });
    assert.equal(doc.metadata.labels.app, 'x', 'the target is not modified');
  });
  test('a failed test is 422 Invalid; a missing path is 422; a non-array is 400', () => {
    const ops = jsonPatchOperations([{ op: 'test', path: '/metadata/labels/app', value: 'y' }]);
    assert.throws(
      () => applyJsonPatch(doc, ops),
      (e: { code: number; reason: string; message: string }) =>
        e.code === 422 && e.reason === 'Invalid' && /test failed/.test(e.message),
    );
    const missing = jsonPatchOperations([{ op: 'remove', path: '/spec/nodeName' }]);
    assert.throws(
      () => applyJsonPatch(doc, missing),
      (e: { code: number }) => e.code === 422,
    );
    assert.throws(
      () => jsonPatchOperations({ op: 'add' }),
      (e: { code: number }) => e.code === 400,
    );
    assert.throws(
      () => jsonPatchOperations([{ path: '/a' }]),
      (e: { code: number }) => e.code === 400,
    );
  });
});

describe('strategic merge patch', () => {
  const pod = {
    metadata: { name: 'patch-demo' },
    spec: {
      containers: [{ name: 'patch-demo-ctr', image: 'nginx' }],
      tolerations: [{ effect: 'NoSchedule', key: 'dedicated', value: 'test-team' }],
    },
  };

  test('containers merge by name (docs: the patch adds patch-demo-ctr-2, listed first, as the docs show)', () => {
    // Without $setElementOrder a patch item the server did not have goes before the server-only ones
    // (apimachinery's mergeSortedSlice); the docs' output lists patch-demo-ctr-2 first too.
    assert.deepEqual(smp(pod, { spec: { containers: [{ name: 'patch-demo-ctr-2', image: 'redis' }] } }), {
      metadata: { name: 'patch-demo' },
      spec: {
        containers: [
          { name: 'patch-demo-ctr-2', image: 'redis' },
          { name: 'patch-demo-ctr', image: 'nginx' },
        ],
        tolerations: pod.spec.tolerations,
      },
    });
  });
  test('tolerations have no merge strategy: the list is replaced (docs)', () => {
    const out = smp(pod, {
      spec: { tolerations: [{ effect: 'NoSchedule', key: 'disktype', value: 'ssd' }] },
    }) as typeof pod;
    assert.deepEqual(out.spec.tolerations, [{ effect: 'NoSchedule', key: 'disktype', value: 'ssd' }]);
    assert.deepEqual(out.spec.containers, pod.spec.containers);
  });
  test('a matching container is merged, env by name, ports by containerPort, volumeMounts by mountPath', () => {
    const live = {
      spec: {
        containers: [
          {
            name: 'c',
            image: 'a',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, name: 'http' }],
            volumeMounts: [{ mountPath: '/data', name: 'd' }],
          },
        ],
      },
    };
    const out = smp(live, {
      spec: {
        containers: [
          {
            name: 'c',
            env: [
              { name: 'B', value: '3' },
              { name: 'C', value: '4' },
            ],
            ports: [{ containerPort: 443, name: 'https' }],
            volumeMounts: [{ mountPath: '/data', readOnly: true }],
          },
        ],
      },
    });
    assert.deepEqual(out, {
      spec: {
        containers: [
          {
            name: 'c',
            image: 'a',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '3' },
              { name: 'C', value: '4' },
            ],
            ports: [
              { containerPort: 443, name: 'https' },
              { containerPort: 80, name: 'http' },
            ],
            volumeMounts: [{ mountPath: '/data', name: 'd', readOnly: true }],
          },
        ],
      },
    });
  });
  test('$patch: delete removes a list element by its merge key; $patch: replace replaces the list', () => {
    const live = {
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'b', image: '2' },
        ],
      },
    };
    assert.deepEqual(smp(live, { spec: { containers: [{ name: 'a', $patch: 'delete' }] } }), {
      spec: { containers: [{ name: 'b', image: '2' }] },
    });
    assert.deepEqual(smp(live, { spec: { containers: [{ name: 'z', image: '9' }, { $patch: 'replace' }] } }), {
      spec: { containers: [{ name: 'z', image: '9' }] },
    });
  });
  test('$patch: replace and delete in a map; $patch: merge is the default', () => {
    const live = { metadata: { labels: { a: '1', b: '2' } }, data: { x: '1' } };
    assert.deepEqual(smp(live, { metadata: { labels: { $patch: 'replace', c: '3' } } }), {
      metadata: { labels: { c: '3' } },
      data: { x: '1' },
    });
    assert.deepEqual(smp(live, { data: { $patch: 'delete' } }), { metadata: live.metadata, data: {} });
    assert.deepEqual(smp(live, { metadata: { labels: { $patch: 'merge', c: '3' } } }), {
      metadata: { labels: { a: '1', b: '2', c: '3' } },
      data: { x: '1' },
    });
    assert.throws(
      () => smp(live, { data: { $patch: 'explode' } }),
      (e: { code: number }) => e.code === 400,
    );
  });
  test('a null deletes a key; maps merge recursively (configmap data)', () => {
    assert.deepEqual(smp({ data: { a: '1', b: '2' } }, { data: { a: null, c: '3' } }, 'configmaps'), {
      data: { b: '2', c: '3' },
    });
  });
  test('finalizers merge as a set; $deleteFromPrimitiveList removes values', () => {
    const live = { metadata: { finalizers: ['a', 'b'] } };
    assert.deepEqual(smp(live, { metadata: { finalizers: ['b', 'c'] } }), {
      metadata: { finalizers: ['a', 'b', 'c'] },
    });
    assert.deepEqual(smp(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }), {
      metadata: { finalizers: ['b'] },
    });
  });
  test('$setElementOrder orders the merged list; server-only items keep their place (preserve-order design)', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const out = smp(live, {
      spec: {
        '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }],
        containers: [{ name: 'a', image: 'new' }],
      },
    });
    assert.deepEqual(out, { spec: { containers: [{ name: 'b' }, { name: 'c' }, { name: 'a', image: 'new' }] } });
    const reordered = smp(live, {
      spec: { '$setElementOrder/containers': [{ name: 'c' }, { name: 'b' }, { name: 'a' }] },
    });
    assert.deepEqual(reordered, { spec: { containers: [{ name: 'c' }, { name: 'b' }, { name: 'a' }] } });
    assert.throws(
      () => smp(live, { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'z' }] } }),
      (e: { code: number }) => e.code === 400,
      'a patch item missing from the order list',
    );
    const prim = smp(
      { metadata: { finalizers: ['x', 'y'] } },
      { metadata: { '$setElementOrder/finalizers': ['z', 'y', 'x'], finalizers: ['z'] } },
    );
    assert.deepEqual(prim, { metadata: { finalizers: ['z', 'y', 'x'] } });
  });
  test('$retainKeys clears the fields not listed (docs: a volume switching from hostPath to emptyDir)', () => {
    const live = {
      spec: {
        volumes: [
          { name: 'v', hostPath: { path: '/tmp' } },
          { name: 'w', emptyDir: {} },
        ],
      },
    };
    const out = smp(live, { spec: { volumes: [{ name: 'v', $retainKeys: ['emptyDir', 'name'], emptyDir: {} }] } });
    assert.deepEqual(out, {
      spec: {
        volumes: [
          { name: 'v', emptyDir: {} },
          { name: 'w', emptyDir: {} },
        ],
      },
    });
    assert.throws(
      () => smp(live, { spec: { volumes: [{ name: 'v', $retainKeys: ['name'], emptyDir: {} }] } }),
      (e: { code: number }) => e.code === 400,
    );
  });
  test('what kubectl apply sends: last-applied annotation, $setElementOrder and a changed image', () => {
    const live = {
      metadata: {
        name: 'web',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"old":1}' },
        labels: { app: 'web' },
      },
      spec: { containers: [{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 80 }] }], nodeName: 'n1' },
    };
    const patch = {
      metadata: {
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":1}' },
        labels: { tier: 'front' },
      },
      spec: { '$setElementOrder/containers': [{ name: 'c' }], containers: [{ name: 'c', image: 'nginx:2' }] },
    };
    assert.deepEqual(smp(live, patch), {
      metadata: {
        name: 'web',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":1}' },
        labels: { app: 'web', tier: 'front' },
      },
      spec: { containers: [{ name: 'c', image: 'nginx:2', ports: [{ containerPort: 80 }] }], nodeName: 'n1' },
    });
  });
  test('a list element without its merge key is 400; the target is not modified', () => {
    const live = { spec: { containers: [{ name: 'a', image: '1' }] } };
    assert.throws(
      () => smp(live, { spec: { containers: [{ image: '2' }] } }),
      (e: { code: number }) => e.code === 400,
    );
    smp(live, { spec: { containers: [{ name: 'a', image: '2' }] } });
    assert.equal(live.spec.containers[0]!.image, '1');
  });
});
