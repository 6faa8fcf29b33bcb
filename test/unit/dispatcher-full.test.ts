/**
 * The dispatcher's full channels (src/dispatch/dispatcher.ts): the offer
 * loop only records them, and the policy gets them once per event, after
 * every candidate was offered, in offer order (issue 13, deliverable 1: a
 * mass stall's code never runs inside the optimized offer loop).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { FullChannelPolicy } from '../../src/dispatch/full-channel-policy.js';
import { WatcherIndex } from '../../src/dispatch/watcher-index.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { Watcher } from '../../src/watch/watcher.js';
import { Selection } from '../../src/selection/selection.js';
import { WatchEvent } from '../../src/wire/watch-event.js';
import { activeWatcher, FakeOwner, pod } from './support/harness.js';

interface FullCall {
  ids: number[];
  rv: number;
  /** Positions of every watcher when the policy was called. */
  positions: number[];
}

function rig(n: number) {
  const index = new WatcherIndex(false);
  const calls: FullCall[] = [];
  const watchers: Watcher[] = [];
  const policy: FullChannelPolicy = {
    onFull: (full, count, event) => {
      const ids: number[] = [];
      for (let i = 0; i < count; i++) ids.push(full[i]!.id);
      calls.push({ ids, rv: event.rv, positions: watchers.map((w) => w.position) });
    },
    afterEvent: () => false,
    onRoom: () => {},
    onEnded: () => {},
    afterDispatch: () => {},
    close: () => {},
  };
  const owner = new FakeOwner();
  for (let id = 1; id <= n; id++) {
    const w = activeWatcher(id, owner, 1);
    index.add(w);
    watchers.push(w);
  }
  const dispatcher = new Dispatcher(index, policy, new CacheMetrics(DEFAULT_RESOURCE));
  const event = (rv: number): WatchCacheEvent =>
    new WatchCacheEvent('ADDED', pod(`p${rv}`), undefined, rv, 0, undefined);
  return { dispatcher, watchers, calls, event, index, owner };
}

test('dispatcher: the full channels of one event reach the policy in one call, after every offer, in offer order', () => {
  const { dispatcher, watchers, calls, event } = rig(6);
  // Channels of capacity 1: fill those of watchers 2, 3 and 5 first.
  for (const w of [watchers[1]!, watchers[2]!, watchers[4]!]) assert.ok(w.push(new WatchEvent('ADDED', pod('x'), 1)));
  dispatcher.dispatch(event(2));
  assert.equal(calls.length, 1, 'one policy call for the event');
  assert.deepEqual(calls[0]!.ids, [2, 3, 5], 'the full ones, in offer order');
  assert.equal(calls[0]!.rv, 2);
  assert.deepEqual(calls[0]!.positions, [2, 1, 1, 2, 1, 2], 'called after the last candidate was offered');

  // An event that finds nobody full does not call the policy; the next full ones are a fresh list.
  dispatcher.dispatch(event(3));
  assert.equal(calls.length, 2, 'everyone with room got event 2, so event 3 finds all six full');
  assert.deepEqual(calls[1]!.ids, [1, 2, 3, 4, 5, 6]);
  for (const w of watchers) void w.next(); // each takes one: every channel has room again (this policy marks nobody)
  dispatcher.dispatch(event(4));
  assert.equal(calls.length, 2, 'no full channel: no call');
});

test('dispatcher: watchers registered during an event (the index grows mid-loop) keep the full ones already recorded', () => {
  const { dispatcher, watchers, calls, event, index, owner } = rig(1);
  assert.ok(watchers[0]!.push(new WatchEvent('ADDED', pod('x'), 1))); // full, offered first
  let added = false;
  const grower = new Watcher({
    id: 2,
    selection: new Selection({}, {}, undefined),
    capacity: 1,
    allowBookmarks: false,
    owner,
    faults: {
      // Registers 100 watchers while the offer loop runs: the index outgrows the full list's room.
      offer: () => {
        if (!added) for (let id = 100; id < 200; id++) index.add(activeWatcher(id, owner, 1));
        added = true;
        return undefined;
      },
      bookmarkBelowPosition: () => false,
      resyncEarly: () => false,
    },
  });
  grower.activate(1, undefined);
  assert.ok(grower.push(new WatchEvent('ADDED', pod('x'), 1)));
  index.add(grower); // full too, and grows the index from inside its offer
  dispatcher.dispatch(event(2));
  assert.deepEqual(calls[0]!.ids, [1, 2], 'the full one recorded before the index grew still reaches the policy');
});
