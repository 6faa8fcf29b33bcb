/**
 * Trigger-index dispatch (semantics §5) and the per-watcher channel size
 * heuristic (§1.6).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { suggestedChannelSize, type KubeObject } from '../../src/index.js';
import { CandidateWalk, UNBOUNDED } from '../../src/dispatch/candidate-walk.js';
import { WatcherIndex } from '../../src/dispatch/watcher-index.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { Selection } from '../../src/selection/selection.js';
import { Watcher, asWatcher } from '../../src/watch/watcher.js';
import { FakeOwner, Reader, flush, pod, setup } from './support/harness.js';

const nodeName = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;
const indexers = { 'spec.nodeName': nodeName };

describe('trigger-index dispatch through the cache', () => {
  for (const mode of ['off', 'alpha', 'beta'] as const) {
    test(`${mode}: a node watcher gets only its node's events; a pod moving n1->n2 gives n1 DELETED and n2 ADDED`, async () => {
      const { cache, store } = await setup({ mode, indexers });
      const n1 = new Reader(asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n1' })));
      const n2 = new Reader(asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n2' })));
      const all = new Reader(asWatcher(cache.watch({ resourceVersion: '0' })));
      const a = await store.create(pod('a', { nodeName: 'n1' })); // 1
      await store.create(pod('b', { nodeName: 'n2' })); // 2
      await store.create(pod('c', { ns: 'other', nodeName: 'n3' })); // 3
      const a2 = await store.update({ ...a, spec: { nodeName: 'n1', v: 2 } }); // 4
      await store.update({ ...a2, spec: { nodeName: 'n2' } }); // 5: moves
      await store.delete('default', 'b'); // 6
      await flush();
      await n1.drain();
      await n2.drain();
      await all.drain();
      assert.deepEqual(
        n1.events.map((e) => `${e.type}:${e.object.metadata.name}:${e.object.metadata.resourceVersion}`),
        ['ADDED:a:1', 'MODIFIED:a:4', 'DELETED:a:5'],
      );
      assert.deepEqual(n1.events[2]!.object.spec, { nodeName: 'n1', v: 2 }, 'the DELETED carries the state on n1');
      assert.deepEqual(
        n2.events.map((e) => `${e.type}:${e.object.metadata.name}:${e.object.metadata.resourceVersion}`),
        ['ADDED:b:2', 'ADDED:a:5', 'DELETED:b:6'],
      );
      assert.deepEqual(all.summary, ['ADDED:1', 'ADDED:2', 'ADDED:3', 'MODIFIED:4', 'MODIFIED:5', 'DELETED:6']);
      for (const r of [n1, n2, all]) r.w.stop();
      await cache.stop();
    });
  }

  test('initial state and history replay of a node watcher follow the trigger too', async () => {
    const { cache, store } = await setup({ mode: 'alpha', indexers });
    const a = await store.create(pod('a', { nodeName: 'n1' }));
    await store.create(pod('b', { nodeName: 'n2' }));
    await store.update({ ...a, spec: { nodeName: 'n2' } });
    await flush();
    const state = new Reader(asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n2' })));
    await state.drain();
    assert.deepEqual(
      state.events.map((e) => e.object.metadata.name),
      ['a', 'b'],
    );
    const hist = new Reader(asWatcher(cache.watch({ resourceVersion: '1', fieldSelector: 'spec.nodeName=n1' })));
    await hist.drain();
    assert.deepEqual(hist.summary, ['DELETED:3']);
    state.w.stop();
    hist.w.stop();
    await cache.stop();
  });

  test('channel size: exactly 10 for a watcher that uses the trigger, the heuristic otherwise', async () => {
    // A history of 7500 events at 75 s is 100 events per second: non-trigger watchers get 100.
    const { cache } = await setup({ indexers, history: { lowerBound: 7500, upperBound: 102400 } });
    const trig = asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n1' }));
    const other = asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'metadata.name=x' }));
    const plain = asWatcher(cache.watch({ resourceVersion: '0' }));
    const explicit = asWatcher(
      cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n1', channelCapacity: 33 }),
    );
    assert.equal(trig.capacity, 10);
    assert.equal(other.capacity, 100);
    assert.equal(plain.capacity, 100);
    assert.equal(explicit.capacity, 33, 'a per-watch override wins');
    for (const w of [trig, other, plain, explicit]) w.stop();
    await cache.stop();
  });

  test('channel size without a trigger index is clamped to [10, 100]', async () => {
    const { cache } = await setup({ history: { lowerBound: 75000, upperBound: 102400 } });
    const w = asWatcher(cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n1' }));
    assert.equal(w.capacity, 100);
    w.stop();
    await cache.stop();
  });
});

describe('suggestedChannelSize (Kubernetes suggestedWatchChannelSize)', () => {
  test('clamps', () => {
    assert.equal(suggestedChannelSize(100, 75_000, false, false), 10);
    assert.equal(suggestedChannelSize(7500, 75_000, false, false), 100);
    assert.equal(suggestedChannelSize(102400, 75_000, false, false), 100);
    assert.equal(suggestedChannelSize(102400, 75_000, true, false), 1000);
    assert.equal(suggestedChannelSize(30000, 75_000, true, false), 400);
    assert.equal(suggestedChannelSize(102400, 75_000, true, true), 10);
    assert.equal(suggestedChannelSize(100, 75_000, true, true), 10);
    assert.equal(suggestedChannelSize(1000, 75_000, false, false), 14, 'ceil(1000 / 75)');
  });
});

describe('WatcherIndex routing', () => {
  const owner = new FakeOwner();
  let id = 1;
  const mk = (input: ConstructorParameters<typeof Selection>[0]): Watcher =>
    new Watcher({
      id: id++,
      selection: new Selection(input, indexers, 'spec.nodeName'),
      capacity: 10,
      allowBookmarks: false,
      owner,
    });
  const event = (o: KubeObject, prev?: KubeObject): WatchCacheEvent =>
    new WatchCacheEvent(prev ? 'MODIFIED' : 'ADDED', o, prev, 1, 0, nodeName);

  test('visits exactly the buckets that can select the event, each watcher once', () => {
    const index = new WatcherIndex(true);
    const everything = mk({});
    const nsA = mk({ namespace: 'a' });
    const nsB = mk({ namespace: 'b' });
    const nameX = mk({ name: 'x' });
    const nsAnameX = mk({ namespace: 'a', name: 'x' });
    const nsAnameY = mk({ namespace: 'a', name: 'y' });
    const n1 = mk({ fieldSelector: 'spec.nodeName=n1' });
    const n2 = mk({ fieldSelector: 'spec.nodeName=n2' });
    const n3 = mk({ fieldSelector: 'spec.nodeName=n3' });
    for (const w of [everything, nsA, nsB, nameX, nsAnameX, nsAnameY, n1, n2, n3]) index.add(w);
    assert.equal(index.size, 9);
    const visit = (e: WatchCacheEvent): Watcher[] => {
      const seen: Watcher[] = [];
      const walk = new CandidateWalk();
      walk.begin(index, e);
      walk.run(UNBOUNDED, (w) => seen.push(w));
      assert.equal(walk.active, false);
      return seen;
    };
    const ax = pod('x', { ns: 'a', nodeName: 'n1' });
    const seen = visit(event(ax));
    assert.deepEqual(new Set(seen), new Set([everything, nsA, nameX, nsAnameX, n1]));
    assert.equal(seen.length, 5, 'no watcher visited twice');
    // a move n1 -> n2 reaches both trigger buckets
    const moved = visit(event(pod('x', { ns: 'a', nodeName: 'n2' }), ax));
    assert.ok(moved.includes(n1) && moved.includes(n2) && !moved.includes(n3));
    // removal
    index.remove(nsA);
    index.remove(n1);
    assert.deepEqual(new Set(visit(event(ax))), new Set([everything, nameX, nsAnameX]));
    assert.equal(index.has(nsA), false);
  });

  test('a watcher removed during the visit does not make the loop skip another', () => {
    const index = new WatcherIndex(false);
    const ws = [mk({}), mk({}), mk({}), mk({})];
    for (const w of ws) index.add(w);
    const seen: Watcher[] = [];
    const walk = new CandidateWalk();
    walk.begin(index, event(pod('q')));
    walk.run(UNBOUNDED, (w) => {
      seen.push(w);
      if (w === ws[1]) index.remove(w);
    });
    assert.equal(new Set(seen).size, 4);
    assert.equal(seen.length, 4);
  });

  test('a walk stopped by its budget goes on where it stopped: each watcher that stays visited once, whoever leaves or joins between turns', () => {
    // Every pattern of leaving between two chunks, for every stopping point: the visited one just before
    // the cursor, one further below, the one at the cursor, one above it, the last one; then a joiner.
    const n = 7;
    for (let stopAt = 1; stopAt < n; stopAt++) {
      for (let leave = 0; leave < n; leave++) {
        const index = new WatcherIndex(false);
        const ws = Array.from({ length: n }, () => mk({}));
        for (const w of ws) index.add(w);
        const seen: Watcher[] = [];
        const walk = new CandidateWalk();
        walk.begin(index, event(pod('q')));
        assert.equal(
          walk.run(stopAt, (w) => seen.push(w)),
          0,
        );
        assert.equal(walk.active, true, `stopped after ${stopAt}`);
        const gone = ws[leave]!;
        const joiner = mk({});
        index.remove(gone);
        index.add(joiner);
        const left = walk.run(100, (w) => seen.push(w));
        assert.equal(walk.active, false);
        const goneVisited = seen.slice(0, stopAt).includes(gone);
        // The second run visits the unvisited ones that stayed, and the joiner.
        assert.equal(left, 100 - (n - stopAt - (goneVisited ? 0 : 1) + 1));
        const expected = new Set([...ws.filter((w) => w !== gone || goneVisited), joiner]);
        assert.deepEqual(new Set(seen), expected, `stop ${stopAt}, leave ${leave}`);
        assert.equal(seen.length, expected.size, `stop ${stopAt}, leave ${leave}: no watcher twice`);
        // The bucket is left as a plain swap-remove list: the next walk visits everyone once.
        const again: Watcher[] = [];
        walk.begin(index, event(pod('q')));
        walk.run(UNBOUNDED, (w) => again.push(w));
        assert.deepEqual(new Set(again), new Set([...ws.filter((w) => w !== gone), joiner]));
        assert.equal(again.length, n);
      }
    }
  });

  test('a walk goes bucket by bucket across turns, and abandon leaves the buckets as if it never began', () => {
    const index = new WatcherIndex(true);
    const everything = [mk({}), mk({})];
    const nsA = [mk({ namespace: 'a' }), mk({ namespace: 'a' })];
    const n1 = [mk({ fieldSelector: 'spec.nodeName=n1' })];
    for (const w of [...everything, ...nsA, ...n1]) index.add(w);
    const e = event(pod('x', { ns: 'a', nodeName: 'n1' }));
    const seen: Watcher[] = [];
    const walk = new CandidateWalk();
    walk.begin(index, e);
    for (let turn = 0; turn < 10 && walk.active; turn++) walk.run(1, (w) => seen.push(w));
    assert.equal(walk.active, false);
    assert.deepEqual(new Set(seen), new Set([...everything, ...nsA, ...n1]));
    assert.equal(seen.length, 5);
    // Stop in the middle of a bucket and abandon: the next walk starts every bucket from its first slot.
    walk.begin(index, e);
    walk.run(1, () => {});
    walk.abandon();
    assert.equal(walk.active, false);
    const after: Watcher[] = [];
    walk.begin(index, e);
    walk.run(UNBOUNDED, (w) => after.push(w));
    assert.deepEqual(new Set(after), new Set([...everything, ...nsA, ...n1]));
    assert.equal(after.length, 5);
  });
});
