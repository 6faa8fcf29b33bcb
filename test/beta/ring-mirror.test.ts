/**
 * RingMirror (src/beta/ring-mirror.ts): every mirrored event reads back from
 * the ring with exactly its object and previous object, the previous object
 * referencing the payload that carried it while that payload is in the ring
 * and copied otherwise (an object from the initial list, or one whose last
 * event left the ring); the frame → carrier table stays bounded by the ring.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Unpackr } from 'msgpackr';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import type { KubeObject } from '../../src/core/types.js';
import { RingMirror } from '../../src/beta/ring-mirror.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { decodeRingPayload } from '../../src/protocol/ring-payload.js';
import { HistoryRingReader, ReadStatus, createRingRecord } from '../../src/ring/ring-reader.js';

const node = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

for (const keys of [5, 40]) {
  test(`ring mirror: previous objects referenced while their carrier is in the ring, else copied (${keys} keys, 16 held)`, () => {
    const history = new EventHistory({ lowerBound: 16, upperBound: 16 });
    const mirror = new RingMirror({
      history,
      metrics: new CacheMetrics(DEFAULT_RESOURCE),
      indexers: { 'spec.nodeName': node },
      onDesync: (message) => assert.fail(message),
    });
    const reader = new HistoryRingReader(mirror.handle);
    const unpackr = new Unpackr({ useRecords: false });
    const rec = createRingRecord();
    const current = new Map<string, { object: KubeObject; frame: Uint8Array }>();
    for (let k = 0; k < keys; k++) {
      const object: KubeObject = {
        metadata: { namespace: 'ns', name: `p${k}`, resourceVersion: '1' },
        spec: { nodeName: 'n0' },
      };
      current.set(`p${k}`, { object, frame: mirror.encodeFrame(object) }); // the initial list
    }
    let referenced = 0;
    let copied = 0;
    for (let i = 0; i < 400; i++) {
      const name = `p${(i * 7) % keys}`;
      const prev = current.get(name)!;
      const rv = i + 2;
      const object: KubeObject = {
        metadata: { namespace: 'ns', name, resourceVersion: String(rv) },
        spec: { nodeName: `n${i % 3}`, pad: 'x'.repeat(i % 97) },
      };
      const ev = new WatchCacheEvent('MODIFIED', object, prev.object, rv, 0, node);
      history.append(ev);
      const frame = mirror.appended(ev, prev.frame)!;
      current.set(name, { object, frame });

      assert.equal(reader.read(ev.index, rec), ReadStatus.OK);
      assert.equal(rec.hasPrev, true);
      const d = decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength);
      assert.deepEqual(d.frame.object, object);
      assert.deepEqual(d.prevObject, prev.object);
      if (rec.prevStart >= rec.length) referenced++;
      else copied++;
      // Every held event still reads back its previous object (the oldest ones' carriers left first).
      for (let abs = reader.oldestIndex; abs < reader.publishedIndex; abs++) {
        assert.equal(reader.read(abs, rec), ReadStatus.OK);
        assert.ok(decodeRingPayload(unpackr, rec.payload, rec.prevStart, rec.prevLength).prevObject !== undefined);
      }
      const carriers = (mirror as unknown as { carriers: Map<Uint8Array, number> }).carriers;
      // Events still in the ring, and the one this append evicted (dropped on the next append).
      assert.ok(carriers.size <= 17, `carriers ${carriers.size}: only events still in the ring`);
    }
    if (keys === 5) {
      assert.equal(copied, keys, 'only the first event per key (its previous object from the list) copies');
      assert.equal(referenced, 400 - keys);
    } else {
      // 40 keys, 16 held: the previous event on a key has always left the ring.
      assert.equal(referenced, 0);
      assert.equal(copied, 400);
    }
  });
}
