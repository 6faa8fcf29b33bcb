/**
 * Beta's live push stores the slot word its event carries (issue 13, deliverable 2): WatchEvent.slotWord is
 * made once per delivered form (slotWordOf), and SharedWatcherChannel.push writes it as is while the main
 * thread owns and consumes the channel. An event without a ready word (a bookmark, or a reference whose
 * word is not a small integer) takes the push that packs the word itself: the same slot either way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelSlabs } from '../../src/beta/channel-slabs.js';
import { SharedWatcherChannel } from '../../src/beta/shared-watcher-channel.js';
import { EventHistory } from '../../src/history/event-history.js';
import { slotWordOf, Variant, variantOf } from '../../src/protocol/channel-variants.js';
import { MAX_SLOT_REF } from '../../src/ring/spsc-channel.js';
import { Delivery } from '../../src/selection/selection.js';
import { WatchEvent } from '../../src/wire/watch-event.js';

const DELIVERIES = [Delivery.AsIs, Delivery.Added, Delivery.Deleted] as const;
/** Around the small-word bound (2^28 − 1), the channel's small-integer check (2^30 − 1) and the slot bound. */
const REFS = [0, 1, 2 ** 28 - 2, 2 ** 28 - 1, 2 ** 28, 2 ** 30 - 1, 2 ** 30, 2 ** 40 + 3, MAX_SLOT_REF];

function pooledChannel(capacity: number): SharedWatcherChannel {
  const slabs = new ChannelSlabs(() => {});
  const slot = slabs.allocate(capacity);
  return new SharedWatcherChannel(capacity, new EventHistory(), undefined, { slot, buffer: slabs.bufferOf(slot) });
}

const obj = { metadata: { name: 'p', namespace: 'ns', resourceVersion: '1' } };

test('slotWordOf: 4·ref + variant for a history reference whose word is a small integer, -1 otherwise', () => {
  for (const d of DELIVERIES) {
    assert.equal(slotWordOf(0, d), variantOf(d));
    assert.equal(slotWordOf(12345, d), 12345 * 4 + variantOf(d));
    assert.equal(slotWordOf(2 ** 28 - 1, d), (2 ** 28 - 1) * 4 + variantOf(d));
    assert.ok(slotWordOf(2 ** 28 - 1, d) <= 2 ** 30 - 1, 'a small integer');
    assert.equal(slotWordOf(2 ** 28, d), -1);
    assert.equal(slotWordOf(-1, d), -1, 'not from the history');
  }
  assert.equal(new WatchEvent('MODIFIED', obj, 7, 41, Delivery.Added).slotWord, 41 * 4 + Variant.ADDED);
  assert.equal(new WatchEvent('BOOKMARK', obj, 7).slotWord, -1);
});

test('live push: every reference and delivery comes back as pushed, with or without a ready word', () => {
  const ch = pooledChannel(8);
  for (const ref of REFS) {
    for (const d of DELIVERIES) {
      const ev = new WatchEvent('MODIFIED', obj, 1, ref, d);
      assert.equal(ch.push(ev), true);
      assert.equal(ch.lastPushedRef(), ref);
      assert.equal(ch.popLocal(), ref, `ref ${ref}`);
      assert.equal(ch.lastVariant, variantOf(d), `ref ${ref} delivery ${d}`);
    }
  }
});

test('live push of ready words: full refuses and keeps what it holds, FIFO across the wrap', () => {
  const ch = pooledChannel(3);
  let next = 0;
  let read = 0;
  for (let round = 0; round < 5; round++) {
    while (ch.push(new WatchEvent('MODIFIED', obj, 1, next, Delivery.AsIs))) next++;
    assert.equal(ch.size, 3, 'full');
    assert.equal(
      ch.push(new WatchEvent('MODIFIED', obj, 1, 2 ** 29, Delivery.AsIs)),
      false,
      'full: the slow path refuses too',
    );
    for (let k = 0; k < 2; k++) assert.equal(ch.popLocal(), read++);
  }
  while (ch.size > 0) assert.equal(ch.popLocal(), read++);
  assert.equal(read, next);
});
