/**
 * MemoryStore (API.md "Stores" and "Store interface").
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ConflictError,
  MemoryStore,
  NotFoundError,
  BadRequestError,
  StoreCompactedError,
  type StoreEvent,
} from '../../src/index.js';
import { VirtualClock, flush, pod, rejection } from './support/harness.js';

function record(store: MemoryStore, afterRV: number): { events: StoreEvent[]; errors: Error[]; stop: () => void } {
  const events: StoreEvent[] = [];
  const errors: Error[] = [];
  const w = store.watch(
    afterRV,
    (e) => events.push(e),
    (e) => errors.push(e),
  );
  return { events, errors, stop: () => w.stop() };
}

describe('MemoryStore writes', () => {
  test('an empty store is at RV 0; each write gets the next RV, the first 1', async () => {
    const s = new MemoryStore();
    assert.equal(await s.currentResourceVersion(), 0);
    assert.deepEqual(await s.list(), { items: [], resourceVersion: 0 });
    const a = await s.create(pod('a'));
    assert.equal(a.metadata.resourceVersion, '1');
    const b = await s.create(pod('b'));
    assert.equal(b.metadata.resourceVersion, '2');
    const a2 = await s.update({ ...a, spec: { x: 1 } });
    assert.equal(a2.metadata.resourceVersion, '3');
    const del = await s.delete('default', 'b');
    assert.equal(del.metadata.resourceVersion, '4');
    assert.equal(await s.currentResourceVersion(), 4);
    assert.equal(s.resourceVersion, 4);
  });

  test('create sets a UUID uid and a creationTimestamp from the clock; update keeps them', async () => {
    const clock = new VirtualClock(Date.UTC(2030, 0, 2, 3, 4, 5, 678));
    const s = new MemoryStore({ clock });
    const a = await s.create(pod('a'));
    assert.match(a.metadata.uid!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(a.metadata.creationTimestamp, '2030-01-02T03:04:05Z');
    await clock.advance(60_000);
    const a2 = await s.update({
      ...a,
      metadata: { ...a.metadata, uid: 'forged', creationTimestamp: 'x' },
      spec: { v: 2 },
    });
    assert.equal(a2.metadata.uid, a.metadata.uid);
    assert.equal(a2.metadata.creationTimestamp, a.metadata.creationTimestamp);
    const b = await s.create(pod('b'));
    assert.notEqual(b.metadata.uid, a.metadata.uid);
  });

  test('409 AlreadyExists for a duplicate create; the RV does not move', async () => {
    const s = new MemoryStore();
    await s.create(pod('a'));
    const err = await rejection(s.create(pod('a')));
    assert.ok(err instanceof ConflictError);
    assert.equal(err.code, 409);
    assert.equal(err.reason, 'AlreadyExists');
    assert.equal(s.resourceVersion, 1);
    await s.create(pod('a', { ns: 'other' })); // another namespace is another object
  });

  test('409 Conflict when a given resourceVersion is stale (update and delete)', async () => {
    const s = new MemoryStore();
    const a = await s.create(pod('a'));
    await s.update({ ...a, spec: { v: 2 } });
    const err = await rejection(s.update({ ...a, spec: { v: 3 } })); // carries RV 1
    assert.ok(err instanceof ConflictError);
    assert.equal(err.reason, 'Conflict');
    assert.equal(err.code, 409);
    await assert.rejects(
      s.delete('default', 'a', { resourceVersion: '1' }),
      (e: unknown) => e instanceof ConflictError && e.reason === 'Conflict',
    );
    const ok = await s.update({ ...a, metadata: { ...a.metadata, resourceVersion: '2' }, spec: { v: 3 } });
    assert.equal(ok.metadata.resourceVersion, '3');
    const noRV = await s.update({ ...ok, metadata: { ...ok.metadata, resourceVersion: undefined }, spec: { v: 4 } });
    assert.equal(noRV.metadata.resourceVersion, '4', 'no precondition without an RV');
    await s.delete('default', 'a', { resourceVersion: '4' });
  });

  test('404 for a missing object (get, update, delete)', async () => {
    const s = new MemoryStore();
    for (const p of [s.get('default', 'x'), s.update(pod('x')), s.delete('default', 'x')]) {
      const err = await rejection(p);
      assert.ok(err instanceof NotFoundError);
      assert.equal(err.code, 404);
    }
  });

  test('malformed objects are 400', async () => {
    const s = new MemoryStore();
    await assert.rejects(s.create({ metadata: {} }), BadRequestError);
    await assert.rejects(s.create({} as never), BadRequestError);
  });

  test('delete returns the last state at the deletion RV, exactly what the DELETED event carries', async () => {
    const s = new MemoryStore();
    const rec = record(s, 0);
    const a = await s.create(pod('a', { labels: { k: 'v' } }));
    await s.update({ ...a, spec: { last: true } });
    const del = await s.delete('default', 'a');
    assert.equal(del.metadata.resourceVersion, '3');
    assert.deepEqual(del.spec, { last: true });
    assert.equal(del.metadata.uid, a.metadata.uid);
    await flush();
    const ev = rec.events[2]!;
    assert.equal(ev.type, 'DELETED');
    assert.equal(ev.resourceVersion, 3);
    assert.deepEqual(ev.object, del);
    assert.equal(ev.prevObject?.metadata.resourceVersion, '2');
    await assert.rejects(s.get('default', 'a'), NotFoundError);
    rec.stop();
  });

  test('list is a consistent snapshot in key order', async () => {
    const s = new MemoryStore();
    await s.create(pod('b'));
    await s.create(pod('a', { ns: 'z' }));
    await s.create(pod('a'));
    const l = await s.list();
    assert.equal(l.resourceVersion, 3);
    assert.deepEqual(
      l.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
      ['default/a', 'default/b', 'z/a'],
    );
  });
});

describe('MemoryStore watch', () => {
  test('replays the kept log after afterRV, then streams live, in RV order, asynchronously', async () => {
    const s = new MemoryStore();
    const a = await s.create(pod('a')); // 1
    await s.create(pod('b')); // 2
    await s.update({ ...a, spec: { v: 1 } }); // 3
    const rec = record(s, 1);
    assert.equal(rec.events.length, 0, 'delivered asynchronously');
    await flush();
    assert.deepEqual(
      rec.events.map((e) => `${e.type}:${e.resourceVersion}`),
      ['ADDED:2', 'MODIFIED:3'],
    );
    assert.equal(rec.events[1]!.prevObject?.metadata.resourceVersion, '1');
    await s.delete('default', 'b'); // 4
    await flush();
    assert.deepEqual(
      rec.events.map((e) => e.resourceVersion),
      [2, 3, 4],
    );
    rec.stop();
    await s.create(pod('c'));
    await flush();
    assert.equal(rec.events.length, 3, 'nothing after stop');
  });

  test('watching from the current RV gets only later changes', async () => {
    const s = new MemoryStore();
    await s.create(pod('a'));
    const rec = record(s, 1);
    await flush();
    assert.equal(rec.events.length, 0);
    await s.create(pod('b'));
    await flush();
    assert.deepEqual(
      rec.events.map((e) => e.resourceVersion),
      [2],
    );
    rec.stop();
  });

  test('compact(rv) drops the log at and below rv; a watch from below it fails with StoreCompactedError', async () => {
    const s = new MemoryStore();
    for (const n of ['a', 'b', 'c', 'd', 'e']) await s.create(pod(n));
    s.compact(3);
    const bad = record(s, 2);
    await flush();
    assert.equal(bad.events.length, 0);
    assert.equal(bad.errors.length, 1);
    const err = bad.errors[0]!;
    assert.ok(err instanceof StoreCompactedError);
    assert.equal(err.requestedRV, 2);
    assert.equal(err.compactedRV, 3);
    const ok = record(s, 3);
    await flush();
    assert.deepEqual(
      ok.events.map((e) => e.resourceVersion),
      [4, 5],
    );
    assert.deepEqual(ok.errors, []);
    ok.stop();
    assert.throws(() => s.compact(-1), BadRequestError);
  });

  test('a running watch keeps its place across a compaction', async () => {
    const s = new MemoryStore();
    await s.create(pod('a'));
    const rec = record(s, 0);
    await flush();
    await s.create(pod('b'));
    s.compact(1);
    await s.create(pod('c'));
    await flush();
    assert.deepEqual(
      rec.events.map((e) => e.resourceVersion),
      [1, 2, 3],
    );
    rec.stop();
  });

  test('stored objects are immutable', async () => {
    const s = new MemoryStore();
    const a = await s.create(pod('a'));
    assert.ok(Object.isFrozen(a));
    assert.ok(Object.isFrozen(a.metadata));
  });
});
