/**
 * The stored shape's 400s name the path of the value that does not fit (src/store/stored-shape.ts);
 * the walk builds that path only when it finds one, as it unwinds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BadRequestError, MemoryStore } from '../../src/index.js';
import { storableObject } from '../../src/store/stored-shape.js';

const message = (object: unknown): string => {
  try {
    storableObject(object);
  } catch (err) {
    assert.ok(err instanceof BadRequestError, `a 400, not ${String(err)}`);
    return err.message;
  }
  return 'fits';
};

test('stored shape: each 400 names the dotted path of the value that does not fit (arrays add no key)', () => {
  assert.equal(message({ metadata: {}, spec: { a: [{ b: Number.NaN }] } }), 'spec.a.b is not a finite number');
  assert.equal(message({ metadata: {}, spec: { a: { f: () => 1 } } }), 'spec.a.f is a function, not a JSON value');
  assert.equal(message({ metadata: {}, status: { at: new Date(0) } }), 'status.at is not a JSON object');
  const deep = JSON.parse('['.repeat(300) + ']'.repeat(300)) as unknown;
  assert.equal(message({ metadata: {}, d: deep }), 'd is nested deeper than 256 levels');
  assert.equal(message({ metadata: { name: 'p' }, spec: { ok: [1, 'x', true, null] } }), 'fits');
});

test('stored shape: a store write of a misshaped object is a 400 and leaves no trace', async () => {
  const store = new MemoryStore();
  await assert.rejects(
    store.create({ metadata: { name: 'p' }, spec: { n: Number.POSITIVE_INFINITY } }),
    (err: unknown) => err instanceof BadRequestError && err.message === 'spec.n is not a finite number',
  );
  assert.equal(store.resourceVersion, 0);
});
