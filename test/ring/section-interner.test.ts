/**
 * SectionInterner: the sync worker's strings and label maps of payload
 * selection sections, decoded once while held. Interned or not, every
 * section reads back exactly as written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { KubeObject } from '../../src/index.js';
import {
  readRingSelection,
  readSelectionSection,
  RingPayloadWriter,
  selectionLength,
  selectionStart,
} from '../../src/protocol/ring-payload.js';
import { SectionInterner } from '../../src/protocol/section-interner.js';
import { msgpack } from '../../src/wire/watch-event.js';

const utf8 = new TextEncoder();

test('section interner: a string reads back exactly, and the same bytes give the same string', () => {
  const interner = new SectionInterner();
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 80 }), { minLength: 1, maxLength: 50 }), (strings) => {
      for (const s of strings) {
        // At an offset inside a larger buffer, as in a section.
        const bytes = new Uint8Array([7, 7, 7, ...utf8.encode(s), 9]);
        const n = bytes.length - 4;
        assert.equal(interner.string(bytes, 3, n), s);
        assert.equal(interner.string(bytes, 3, n), s); // a hit, or the same decode
      }
    }),
    { numRuns: 200 },
  );
  // Found by the property above on a random seed (CI, 2026-12-07): a leading U+FEFF was dropped, as the
  // default TextDecoder strips a byte-order mark. Short strings take the ASCII path, so one long one too.
  for (const s of ['\uFEFF', '\uFEFFnode-1', `\uFEFF${'é'.repeat(70)}`]) {
    const bytes = new Uint8Array([7, ...utf8.encode(s), 9]);
    assert.equal(interner.string(bytes, 1, bytes.length - 2), s);
  }
  // More distinct strings than the table has slots: collisions replace entries, never confuse them.
  for (let i = 0; i < 20_000; i++) {
    const s = `pod-${i}`;
    assert.equal(interner.string(utf8.encode(s), 0, s.length), s);
  }
  const before = interner.hits.strings;
  const b = utf8.encode('default');
  interner.string(b, 0, b.length);
  interner.string(b, 0, b.length);
  assert.equal(interner.hits.strings, before + 1, 'the second read of the same bytes is a hit');
});

test('section interner: label maps are shared, frozen, and never confused with another map', () => {
  const interner = new SectionInterner();
  const writer = new RingPayloadWriter({});
  const withLabels = (name: string, labels: Record<string, string> | undefined): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: 'ns', name, labels },
  });
  const sectionOf = (o: KubeObject, prev: KubeObject | undefined): Uint8Array => {
    const bytes = writer.set(msgpack.pack({ type: 'MODIFIED', object: o }), o, prev).toBytes();
    return bytes.slice(selectionStart(bytes), selectionStart(bytes) + selectionLength(bytes));
  };
  const a = readSelectionSection(sectionOf(withLabels('a', { app: 'x', tier: 'db' }), undefined), 0, 0, interner);
  const b = readSelectionSection(sectionOf(withLabels('b', { app: 'x', tier: 'db' }), undefined), 0, 0, interner);
  assert.equal(a.labels, b.labels, 'the same label bytes: the same map');
  assert.ok(Object.isFrozen(a.labels));
  assert.deepEqual({ ...a.labels }, { app: 'x', tier: 'db' });
  const c = readSelectionSection(
    sectionOf(withLabels('a', { app: 'x', tier: 'web' }), withLabels('a', { app: 'x', tier: 'db' })),
    0,
    0,
    interner,
  );
  assert.deepEqual({ ...c.labels }, { app: 'x', tier: 'web' });
  assert.equal(c.prevLabels, a.labels, 'the previous labels are the same bytes too');
  // A map too large to keep is decoded each time, and still exact.
  const big: Record<string, string> = {};
  for (let i = 0; i < 40; i++) big[`key-${i}`] = 'v'.repeat(30);
  const d = readSelectionSection(sectionOf(withLabels('a', big), undefined), 0, 0, interner);
  assert.deepEqual({ ...d.labels }, big);
  // Many distinct maps (more than the table's slots), each read twice: always its own.
  for (let i = 0; i < 3_000; i++) {
    const labels = { app: `app-${i % 1500}`, n: String(i) };
    const bytes = sectionOf(withLabels('a', labels), undefined);
    for (let k = 0; k < 2; k++) assert.deepEqual({ ...readSelectionSection(bytes, 0, 0, interner).labels }, labels);
  }
});

const labelMap = fc.dictionary(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  { maxKeys: 4 },
);
const objectArb = fc.record({
  name: fc.oneof(fc.constantFrom('a', 'b', 'pod-1'), fc.string({ unit: 'binary', maxLength: 20 })),
  node: fc.option(fc.constantFrom('node-1', 'node-ü', 'node-2'), { nil: undefined }),
  labels: fc.option(labelMap, { nil: undefined }),
});

test('section interner: an interned read of any section equals the plain read', () => {
  const interner = new SectionInterner();
  const writer = new RingPayloadWriter({
    node: (o: KubeObject) => (o.spec as { nodeName?: string } | undefined)?.nodeName,
  });
  const toObject = (o: { name: string; node: string | undefined; labels: Record<string, string> | undefined }) =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'ns', name: o.name, labels: o.labels },
      spec: { nodeName: o.node },
    }) as KubeObject;
  fc.assert(
    fc.property(fc.array(fc.tuple(objectArb, fc.option(objectArb, { nil: undefined })), { maxLength: 30 }), (pairs) => {
      for (const [o, p] of pairs) {
        const object = toObject(o);
        const prev = p === undefined ? undefined : toObject({ ...p, name: o.name });
        const bytes = writer.set(msgpack.pack({ type: 'MODIFIED', object }), object, prev).toBytes();
        const plain = readRingSelection(bytes, 1);
        const interned = readSelectionSection(bytes, selectionStart(bytes), 1, interner);
        assert.deepEqual(
          {
            ...interned,
            labels: interned.labels && { ...interned.labels },
            prevLabels: interned.prevLabels && { ...interned.prevLabels },
          },
          {
            ...plain,
            labels: plain.labels && { ...plain.labels },
            prevLabels: plain.prevLabels && { ...plain.prevLabels },
          },
        );
      }
    }),
    { numRuns: 150 },
  );
});
