/**
 * HistoryRingReader.indexAfterRV with a hint: the answer is the binary
 * search's for every RV (in the gaps between RVs, below the floor, past the
 * last event) and every hint (right, one off, anywhere, out of range); a
 * right hint costs at most two slot reads and no search, a wrong one falls
 * back to the search.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { HistoryRingReader, TOO_OLD } from '../../src/ring/ring-reader.js';
import { makeEvent, rvOf } from './ring-fixtures.js';

test('indexAfterRV(rv, hint): the search answer for any hint; a right hint skips the search', () => {
  const ring = new HistoryRing({ capacity: 64, arenaBytes: 256 * 1024 });
  for (let abs = 0; abs < 200; abs++) ring.appendEvent(makeEvent(abs), { rv: rvOf(abs) });
  ring.publish();
  const reader = new HistoryRingReader(ring.handle);
  const oldest = reader.oldestIndex;
  const published = reader.publishedIndex;
  assert.ok(oldest > 0, 'the ring evicted its first events');
  // Brute force over what the ring holds: the first held index with an RV above rv.
  const expected = (rv: number): number => {
    if (rv < reader.floorRV) return TOO_OLD;
    for (let i = oldest; i < published; i++) if (rvOf(i) > rv) return i;
    return published;
  };
  const rvs: number[] = [0, reader.floorRV - 1, reader.floorRV, rvOf(published - 1), rvOf(published - 1) + 5];
  for (let abs = oldest - 2; abs < published; abs += 7) rvs.push(rvOf(abs) - 1, rvOf(abs), rvOf(abs) + 1);
  for (const rv of rvs) {
    const want = expected(rv);
    assert.equal(reader.indexAfterRV(rv), want, `search, rv ${rv}`);
    const hints = [-1, want, want - 1, want + 1, oldest, published, published + 3, 0, 1e9];
    for (const hint of hints) assert.equal(reader.indexAfterRV(rv, hint), want, `rv ${rv}, hint ${hint}`);
  }
  // A right hint: two slot reads at most, no search.
  const rv = rvOf(oldest + 10);
  const searches = reader.searchReads;
  const hintReads = reader.hintReads;
  assert.equal(reader.indexAfterRV(rv, oldest + 11), oldest + 11);
  assert.equal(reader.searchReads, searches, 'no binary search');
  assert.ok(reader.hintReads - hintReads <= 2);
  // At the end of what is published (the resync point's usual answer): one read.
  assert.equal(reader.indexAfterRV(rvOf(published - 1), published), published);
  assert.equal(reader.searchReads, searches);
  // A wrong hint searches.
  assert.equal(reader.indexAfterRV(rv, oldest + 30), oldest + 11);
  assert.ok(reader.searchReads > searches, 'a wrong hint falls back to the search');
});
