/**
 * MemoryStore's startResourceVersion (the server's restart-safe RV epoch):
 * an empty store is at the start RV, the first write gets one more, and a
 * watch from below the start is compacted (so the cache answers 410).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StoreCompactedError } from '../../src/store/store-errors.js';
import { resourceVersionEpoch } from '../../src/cli/resource-version-epoch.js';

test('a store starting at an RV writes above it and treats older RVs as compacted', async () => {
  const store = new MemoryStore({ startResourceVersion: 1000 });
  assert.equal(await store.currentResourceVersion(), 1000);
  assert.equal((await store.list()).resourceVersion, 1000);
  const created = await store.create({ metadata: { namespace: 'default', name: 'a' } });
  assert.equal(created.metadata.resourceVersion, '1001');
  const err = await new Promise<Error>((resolve) =>
    store.watch(5, () => assert.fail('no event from below the start'), resolve),
  );
  assert.ok(err instanceof StoreCompactedError);
  const events: string[] = [];
  const w = store.watch(
    1000,
    (e) => events.push(e.object.metadata.name!),
    () => assert.fail('a watch from the start RV is fine'),
  );
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(events, ['a']);
  w.stop();
});

test('the RV epoch is microseconds since 1970 and grows with the clock', () => {
  assert.equal(resourceVersionEpoch(1_700_000_000_123), 1_700_000_000_123_000);
  assert.ok(resourceVersionEpoch(2) > resourceVersionEpoch(1) + 999);
  assert.throws(() => new MemoryStore({ startResourceVersion: -1 }));
});
