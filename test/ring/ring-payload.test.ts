/**
 * The ring payload format (src/protocol/ring-payload.ts): what the mirror
 * writes into a slot comes back exactly through the ring, the previous
 * object only with the slot's HAS_PREV bit, indexer values without msgpack;
 * and a trigger-hash collision never makes the sync worker deliver an event
 * its watcher does not select (the hash is only a candidate test).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Unpackr } from 'msgpackr';
import { MemoryStore, WatchCache, type KubeObject } from '../../src/index.js';
import { decodeRingPayload, readRingSelection, RingPayloadWriter } from '../../src/protocol/ring-payload.js';
import { hash32 } from '../../src/ring/hash32.js';
import { EventTypeCode } from '../../src/ring/ring-layout.js';
import { createRingRecord, HistoryRingReader, ReadStatus } from '../../src/ring/ring-reader.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { msgpack } from '../../src/wire/watch-event.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { betaSyncOf } from '../../src/cache/cache-internals.js';

const pod = (name: string, node: unknown, extra = ''): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns-ü', name, resourceVersion: '5' },
  spec: { nodeName: node, extra },
});
const byNode = { node: (o: KubeObject) => (o.spec as { nodeName?: unknown }).nodeName as string | undefined };

test('ring payload: frame, previous object and indexer values round-trip through the ring', () => {
  const ring = new HistoryRing({ capacity: 4 });
  const reader = ring.reader();
  const unpackr = new Unpackr({ useRecords: false });
  const writer = new RingPayloadWriter(byNode);
  const prev = pod('a', 'node-€', 'p'.repeat(300));
  const obj = pod('a', 'node-2', 'o'.repeat(500));
  const frame = msgpack.pack({ type: 'MODIFIED', object: obj });
  const prevFrame = msgpack.pack({ type: 'ADDED', object: prev });
  const meta = { rv: 5, type: EventTypeCode.MODIFIED, nsHash: 1, nameHash: 2, triggerHash: 3, prevTriggerHash: 4 };
  ring.appendPayload({ ...meta, hasPrev: true, prevBytes: prevFrame }, writer.set(frame, obj, prev));
  // Without a previous object, and with a non-string indexer value (written as absent).
  const lone = pod('b', 42);
  ring.appendPayload(
    { ...meta, rv: 6, type: EventTypeCode.ADDED },
    writer.set(msgpack.pack({ type: 'ADDED', object: lone }), lone, undefined),
  );
  ring.publish();

  const rec = createRingRecord(16);
  assert.equal(reader.read(0, rec), ReadStatus.OK);
  assert.equal(rec.hasPrev, true);
  let bytes = rec.payload.subarray(0, rec.length);
  assert.equal(rec.prevLength, prevFrame.length);
  const d = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
  assert.deepEqual(d.frame, { type: 'MODIFIED', object: obj });
  assert.deepEqual(d.prevObject, prev);
  assert.deepEqual(readRingSelection(bytes, 1), {
    exact: true,
    namespace: 'ns-ü',
    name: 'a',
    values: ['node-2'],
    prevValues: ['node-€'],
    labelsExact: true,
    labels: undefined,
    prevLabels: undefined,
  });

  assert.equal(reader.read(1, rec), ReadStatus.OK);
  assert.equal(rec.hasPrev, false);
  bytes = rec.payload.subarray(0, rec.length);
  assert.equal(rec.prevLength, 0);
  const d2 = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
  assert.deepEqual(d2.frame.object, lone);
  assert.equal(d2.prevObject, undefined);
  assert.deepEqual(readRingSelection(bytes, 1).values, [undefined]);
});

test('ring payload: the selection section is not exact when name or namespace differ between object and previous', () => {
  const writer = new RingPayloadWriter({});
  const a = pod('a', 'n');
  const renamed = { ...a, metadata: { ...a.metadata, name: 'other' } };
  const bytes = writer.set(msgpack.pack({ type: 'MODIFIED', object: a }), a, renamed).toBytes();
  assert.equal(readRingSelection(bytes, 0).exact, false);
  const numeric = { ...a, metadata: { ...a.metadata, name: 7 as unknown as string } };
  const b2 = writer.set(msgpack.pack({ type: 'ADDED', object: numeric }), numeric, undefined).toBytes();
  const sel = readRingSelection(b2, 0);
  assert.equal(sel.exact, false);
  assert.equal(sel.name, undefined);
});

test('ring payload: labels travel in the selection section: changed, unchanged, absent, or not a map of strings', () => {
  const writer = new RingPayloadWriter({});
  const withLabels = (name: string, labels: unknown): KubeObject =>
    ({ ...pod(name, 'n'), metadata: { namespace: 'ns', name, labels } }) as KubeObject;
  const section = (object: KubeObject, prev: KubeObject | undefined) =>
    readRingSelection(writer.set(msgpack.pack({ type: 'MODIFIED', object }), object, prev).toBytes(), 0);
  // Changed labels: both maps, in their key order (UTF-8 beyond ASCII included).
  const a = withLabels('a', { app: 'x', tier: 'ü-db' });
  const b = withLabels('a', { app: 'y' });
  let sel = section(a, b);
  assert.equal(sel.labelsExact, true);
  assert.deepEqual({ ...sel.labels }, { app: 'x', tier: 'ü-db' });
  assert.deepEqual({ ...sel.prevLabels }, { app: 'y' });
  // The same keys and values in another object: written once (SAME), read back as the object's.
  sel = section(a, withLabels('a', { tier: 'ü-db', app: 'x' }));
  assert.equal(sel.labelsExact, true);
  assert.equal(sel.prevLabels, sel.labels);
  // No labels (and no previous object): exact, none.
  sel = section(withLabels('a', undefined), undefined);
  assert.equal(sel.labelsExact, true);
  assert.equal(sel.labels, undefined);
  assert.equal(sel.prevLabels, undefined);
  // Labels gained: none before.
  sel = section(a, withLabels('a', undefined));
  assert.deepEqual({ ...sel.labels }, { app: 'x', tier: 'ü-db' });
  assert.equal(sel.prevLabels, undefined);
  // A value that is not a string, in the object or in the previous one: not exact (the worker decodes).
  assert.equal(section(withLabels('a', { app: 5 }), b).labelsExact, false);
  assert.equal(section(a, withLabels('a', { app: ['x'] })).labelsExact, false);
  assert.equal(section(withLabels('a', 'app=x'), undefined).labelsExact, false);
  // A key such as __proto__ is a label like any other.
  const proto = JSON.parse('{"__proto__":"p","app":"x"}') as Record<string, string>;
  sel = section(withLabels('a', proto), undefined);
  assert.equal(sel.labelsExact, true);
  assert.deepEqual(Object.entries(sel.labels!), [
    ['__proto__', 'p'],
    ['app', 'x'],
  ]);
  // Name and namespace exactness is its own flag.
  assert.equal(section(a, b).exact, true);
});

/** Two node names whose hash32 collide (FNV-1a over 32 bits: a birthday search finds one fast). */
function collidingNodes(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const s = `node-${i}`;
    const h = hash32(s);
    const other = seen.get(h);
    if (other !== undefined) return [other, s];
    seen.set(h, s);
  }
}

for (const [how, labelSelector, otherField, decodes] of [
  ['from the selection section, no decode', undefined, '', false],
  ['from the selection section with its labels, no decode', 'app!=none', '', false],
  ['on the decoded objects (a field the section does not hold)', undefined, ',spec.zone!=none', true],
] as const)
  test(
    `beta worker: a trigger-hash collision never delivers an unselected event (exact check ${how})`,
    { timeout: 60_000 },
    async (t) => {
      const [nodeA, nodeB] = collidingNodes();
      assert.equal(hash32(nodeA), hash32(nodeB));
      const store = new MemoryStore();
      // Hand-off distance 0: the worker serves the watcher until it reaches the last dispatched RV it knows
      // (with the default 16 it may hand back after its first pass: all of this history is within 16 events).
      const cache = new WatchCache({
        store,
        mode: 'beta',
        indexers: { 'spec.nodeName': byNode.node },
        pass: { handOffDistance: 0 },
      });
      await cache.start();
      t.after(() => cache.stop());
      await store.create({ metadata: { namespace: 'ns', name: 'first' }, spec: { nodeName: 'x' } });
      while (cache.resourceVersion < 1) await sleep(1);
      const start = String(cache.resourceVersion);
      // On A, on B (colliding hash), then moved from A to B (DELETED for A's watcher), then from B to A (ADDED).
      const a1 = await store.create({ metadata: { namespace: 'ns', name: 'a1' }, spec: { nodeName: nodeA } });
      await store.create({ metadata: { namespace: 'ns', name: 'b1' }, spec: { nodeName: nodeB } });
      const mv = await store.create({ metadata: { namespace: 'ns', name: 'mv' }, spec: { nodeName: nodeA } });
      await store.update({ ...mv, spec: { nodeName: nodeB } });
      await store.update({ ...a1, spec: { nodeName: nodeB, again: 1 } });
      const b2 = await store.create({ metadata: { namespace: 'ns', name: 'b2' }, spec: { nodeName: nodeB } });
      await store.update({ ...b2, spec: { nodeName: nodeA } });
      await store.create({ metadata: { namespace: 'ns', name: 'end' }, spec: { nodeName: 'x' } });
      const last = 9;
      while (cache.resourceVersion < last) await sleep(1);
      // From an old RV: the sync worker serves it from the ring (one resync path).
      const w = asWatcher(
        cache.watch({
          resourceVersion: start,
          fieldSelector: `spec.nodeName=${nodeA}${otherField}`,
          labelSelector,
          channelCapacity: 1,
        }),
      );
      await sleep(300); // not reading yet: its one-slot channel fills and the sync worker takes it over
      const got: string[] = [];
      const wait = (async () => {
        for await (const ev of w) {
          if (ev.type === 'BOOKMARK') continue;
          // A DELETED for a move shows the previous object (on A), read through the slot's reference.
          const on = ev.type === 'DELETED' ? ` on ${String((ev.object.spec as { nodeName?: string }).nodeName)}` : '';
          got.push(`${ev.type} ${ev.object.metadata.name} ${ev.object.metadata.resourceVersion}${on}`);
          if (got.length === 5) break;
        }
      })();
      await Promise.race([wait, sleep(20_000)]);
      assert.deepEqual(got, [
        'ADDED a1 2',
        'ADDED mv 4',
        `DELETED mv 5 on ${nodeA}`,
        `DELETED a1 6 on ${nodeA}`,
        'ADDED b2 8',
      ]);
      // The worker's totals reach this thread in its notices: wait for them (bounded) with the watch open.
      for (let i = 0; i < 200 && betaSyncOf(cache)!.workerStats.pushes < 1; i++) await sleep(50);
      w.stop();
      // Those previous objects are references to the payloads that carried them, not copies.
      const reader = new HistoryRingReader(betaSyncOf(cache)!.ringHandle);
      const rec = createRingRecord();
      for (const rv of [5, 6, 8]) {
        assert.equal(reader.read(reader.indexAfterRV(rv - 1), rec), ReadStatus.OK);
        assert.equal(rec.rv, rv);
        assert.ok(rec.prevLength > 0 && rec.prevStart >= rec.length, `RV ${rv}: previous object referenced`);
      }
      // Served by the worker: it pushed them, deciding the hash candidates (the colliding ones included)
      // without a decode when the selection section holds what the selection reads, else by decoding.
      // How many of the five the worker pushed before handing the watcher back depends on scheduling (its
      // first push, into the full one-slot channel, is certain; the hand-back delivers the rest exactly once,
      // which `got` checks): the counts below hold whoever delivered the last ones.
      const stats = betaSyncOf(cache)!.workerStats;
      assert.ok(stats.pushes >= 1, JSON.stringify(stats));
      if (!decodes) assert.equal(stats.decodes, 0, JSON.stringify(stats));
      else assert.ok(stats.decodes >= 1, JSON.stringify(stats));
    },
  );
