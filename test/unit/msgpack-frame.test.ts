/**
 * The msgpack frame every stream and beta's ring carry (src/wire/watch-event.ts):
 * standard msgpack that any decoder reads back exactly, each map with the
 * smallest header for its size (fixmap below 16 keys, map16 from 16), not
 * msgpackr's default of a map16 header on every map.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Unpackr } from 'msgpackr';
import { msgpack, WatchEvent } from '../../src/wire/watch-event.js';
import type { KubeObject } from '../../src/core/types.js';

test('msgpack frame: each map has the smallest header for its size, and decodes to the same event', () => {
  const many: Record<string, number> = {};
  for (let i = 0; i < 20; i++) many[`k${i}`] = i;
  const object = { metadata: { name: 'p', namespace: 'ns', labels: many }, spec: {} } as unknown as KubeObject;
  const ev = new WatchEvent('MODIFIED', object, 7);
  const frame = ev.msgpackFrame({ encoded: () => {} });
  assert.equal(frame[0], 0x82, 'the event {type, object}: a fixmap of 2');
  const bytes = Buffer.from(frame);
  // metadata: a fixmap of 3; labels: 20 keys, a map16 (0xde 0x00 0x14); spec: an empty fixmap.
  assert.ok(bytes.includes(Buffer.from([0xa8, ...Buffer.from('metadata'), 0x83])), 'metadata: fixmap 3');
  assert.ok(bytes.includes(Buffer.from([0xa6, ...Buffer.from('labels'), 0xde, 0x00, 0x14])), 'labels: map16 of 20');
  assert.ok(bytes.includes(Buffer.from([0xa4, ...Buffer.from('spec'), 0x80])), 'spec: fixmap 0');
  assert.deepEqual(new Unpackr({ useRecords: false }).unpack(frame), { type: 'MODIFIED', object });
  assert.deepEqual(msgpack.unpack(frame), { type: 'MODIFIED', object });
});
