/**
 * The live path stays optimized when many watchers arrive (issue 13, deliverable 1). A deoptimization
 * inside the dispatch runs the rest of that event's offers in the interpreter: with 10,000 watchers,
 * one event took 12-17 ms (every healthy watcher waited behind it). Two such deopts came from code that
 * had never run since the loop was optimized: the growth of the dispatcher's full list (and the new
 * list's elements kind), and Selection.deliveryFor's memo hit while a selection had one watcher.
 * V8's optimization status decides these tests, never a timing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { FullChannelPolicy } from '../../src/dispatch/full-channel-policy.js';
import { WatcherIndex } from '../../src/dispatch/watcher-index.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { Delivery, Selection } from '../../src/selection/selection.js';
import { ChannelSlabs } from '../../src/beta/channel-slabs.js';
import { SharedWatcherChannel } from '../../src/beta/shared-watcher-channel.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchEvent } from '../../src/wire/watch-event.js';
import { type Watcher } from '../../src/watch/watcher.js';
import { activeWatcher, FakeOwner, pod } from './support/harness.js';
import { isOptimized, optimizeAfter } from './support/jit.js';

const policy: FullChannelPolicy = {
  onFull: () => {},
  afterEvent: () => false,
  onRoom: () => {},
  onEnded: () => {},
  afterDispatch: () => {},
  close: () => {},
};

test('dispatcher: room for the full list grows when watchers register, not inside a dispatch', () => {
  const index = new WatcherIndex(false);
  const dispatcher = new Dispatcher(index, policy, new CacheMetrics(DEFAULT_RESOURCE));
  const owner = new FakeOwner();
  const watchers: Watcher[] = [];
  const add = (id: number): void => {
    const w = activeWatcher(id, owner, 1);
    index.add(w);
    watchers.push(w);
  };
  add(1);
  let rv = 1;
  const dispatchNext = (): void => {
    dispatcher.dispatch(new WatchCacheEvent('ADDED', pod(`p${++rv}`), undefined, rv, 0, undefined));
    for (const w of watchers) void w.next(); // room again in every channel
  };
  for (let i = 0; i < 10; i++) dispatchNext(); // the first calls run before V8 allocates their feedback
  const dispatchOne: unknown = Reflect.get(Dispatcher.prototype, 'dispatchOne');
  optimizeAfter(dispatchOne, dispatchNext);
  assert.ok(isOptimized(dispatchOne), 'optimized with one watcher');
  for (let id = 2; id <= 200; id++) add(id);
  dispatchNext();
  assert.ok(isOptimized(dispatchOne), 'still optimized after its first event to 200 watchers');
  // Every candidate still has room to be recorded: all 200 full at once reach the policy.
  let fullCount = 0;
  const counting = new Dispatcher(
    index,
    { ...policy, onFull: (_full, count) => (fullCount = count) },
    new CacheMetrics(DEFAULT_RESOURCE),
  );
  counting.dispatch(new WatchCacheEvent('ADDED', pod(`p${++rv}`), undefined, rv, 0, undefined));
  counting.dispatch(new WatchCacheEvent('ADDED', pod(`p${++rv}`), undefined, rv, 0, undefined));
  assert.equal(fullCount, 200, 'the second event finds every capacity-1 channel full');
});

test('selection: the memo hit of deliveryFor needs no code the misses did not run', () => {
  const selection = new Selection({}, {}, undefined);
  let rv = 0;
  const next = (): WatchCacheEvent => new WatchCacheEvent('ADDED', pod(`p${++rv}`), undefined, rv, 0, undefined);
  // One watcher per selection: every call is a miss (a new event each time).
  for (let i = 0; i < 10; i++) selection.deliveryFor(next());
  const deliveryFor: unknown = Reflect.get(Selection.prototype, 'deliveryFor');
  optimizeAfter(deliveryFor, () => selection.deliveryFor(next()));
  assert.ok(isOptimized(deliveryFor), 'optimized on misses');
  // Many watchers come to share it: the same event, asked again.
  const event = next();
  const first = selection.deliveryFor(event);
  assert.equal(selection.deliveryFor(event), first, 'the memo answers the same');
  assert.ok(isOptimized(deliveryFor), 'still optimized after its first hit');
});

test('beta live push: the first push into a full channel needs no code the pushes with room did not run', () => {
  const slabs = new ChannelSlabs(() => {});
  const channels = Array.from({ length: 8 }, () => {
    const slot = slabs.allocate(4);
    return new SharedWatcherChannel(4, new EventHistory(), undefined, { slot, buffer: slabs.bufferOf(slot) });
  });
  const event = new WatchEvent('MODIFIED', pod('p'), 2, 1, Delivery.AsIs);
  const pushAll = (): number => {
    let refused = 0;
    for (const ch of channels) if (!ch.push(event)) refused++;
    return refused;
  };
  const withRoom = (): void => {
    pushAll();
    for (const ch of channels) ch.clear();
  };
  for (let i = 0; i < 10; i++) withRoom();
  const push: unknown = Reflect.get(SharedWatcherChannel.prototype, 'push');
  optimizeAfter(push, withRoom);
  assert.ok(isOptimized(push), 'optimized on pushes with room');
  for (let i = 0; i < 4; i++) assert.equal(pushAll(), 0);
  assert.equal(pushAll(), channels.length, 'every channel full: refused');
  assert.ok(isOptimized(push), 'still optimized after its first refusal');
});
