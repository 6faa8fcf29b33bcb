/**
 * The first pop that takes a reference out of a beta channel keeps every channel's hidden class (issue 13,
 * "the cold mass stall"). A fresh process registers 10,000 watchers (10,000 channels, none popped yet);
 * the first event's pushes wake their consumers, whose pops are the first that take a reference. That
 * pop's variant, stored as a heap number, once turned `popped` (a small integer until then) into a double
 * field: V8 deprecated the channels' map, deoptimized the code that knew it (the live push among it) and
 * migrated each of the 10,000 channels as the dispatch reached it (~90 ms for that one event, alpha ~20).
 * V8's own answers decide: the hidden class and the optimization status, never a timing. Its own file:
 * it needs a process in which no channel has been popped yet.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelSlabs } from '../../src/beta/channel-slabs.js';
import { SharedWatcherChannel } from '../../src/beta/shared-watcher-channel.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { Delivery } from '../../src/selection/selection.js';
import { WatchEvent } from '../../src/wire/watch-event.js';
import { pod } from './support/harness.js';
import { isOptimized, optimizeAfter, sameHiddenClass } from './support/jit.js';

test('beta channel: the first pop of a reference changes no channel hidden class and keeps the live push optimized', () => {
  const history = new EventHistory();
  history.append(new WatchCacheEvent('ADDED', pod('p'), undefined, 2, 0, undefined));
  const slabs = new ChannelSlabs(() => {});
  const make = (): SharedWatcherChannel => {
    const slot = slabs.allocate(4);
    return new SharedWatcherChannel(4, history, undefined, { slot, buffer: slabs.bufferOf(slot) });
  };
  // Registered before any pop, as at a mass registration: the live push is optimized on them.
  const channels = Array.from({ length: 8 }, make);
  const event = new WatchEvent('ADDED', pod('p'), 2, history.startIndex, Delivery.AsIs);
  const withRoom = (): void => {
    for (const ch of channels) assert.ok(ch.push(event));
    for (const ch of channels) ch.clear(); // no pop: the consumers have not read yet
  };
  for (let i = 0; i < 10; i++) withRoom();
  const push: unknown = Reflect.get(SharedWatcherChannel.prototype, 'push');
  optimizeAfter(push, withRoom);
  assert.ok(isOptimized(push), 'optimized before the first pop');

  // The first event: pushed to all, then each consumer's first pop takes it.
  for (const ch of channels) assert.ok(ch.push(event));
  const first = channels[0]!.shift();
  assert.ok(first instanceof WatchEvent && first.rv === 2, 'the pop resolves the reference through the history');
  assert.ok(sameHiddenClass(channels[1]!, make()), 'a channel not yet popped keeps the hidden class of a new one');
  for (const ch of channels.slice(1)) assert.ok(ch.shift() instanceof WatchEvent);
  assert.ok(sameHiddenClass(channels[0]!, make()), 'a popped channel keeps it too');
  for (const ch of channels) assert.ok(ch.push(event));
  assert.ok(isOptimized(push), 'the live push is still optimized after the first pops');
});
