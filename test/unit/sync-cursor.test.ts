/**
 * SyncCursor: the per-watcher state moves only through its methods, and two
 * cursors over one shared cell (beta: the main thread's watcher and the sync
 * worker's member) see one position and one drained flag.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CELL_SLOTS } from '../../src/protocol/cursor-cell.js';
import { SyncCursor } from '../../src/sync/sync-cursor.js';
import { Selection } from '../../src/selection/selection.js';
import { Watcher } from '../../src/watch/watcher.js';
import { FakeOwner } from './support/harness.js';

/** One cursor's mass-stall mark (SyncCursor.stallAll of a list of one): true when it was synced. */
function stalledAt(c: SyncCursor, rv: number): boolean {
  return SyncCursor.stallAll([c], 1, rv, []) === 1;
}
test('position: accepted sets, raiseTo and missed never go back', () => {
  const c = new SyncCursor();
  c.startAt(10);
  assert.equal(c.startPosition, 10);
  c.missed(8);
  assert.equal(c.position, 10, 'a miss below the position does not lower it');
  c.missed(15);
  assert.equal(c.position, 14, 'X - 1');
  c.raiseTo(12);
  assert.equal(c.position, 14);
  c.accepted(20);
  assert.equal(c.position, 20);
});

test('an unsynced episode: new once, pushes counted, served clears new and drained', () => {
  const c = new SyncCursor();
  assert.equal(c.markUnsynced(), true);
  assert.equal(c.markUnsynced(), false, 'the same episode');
  assert.equal(c.newUnsynced, true);
  c.pushedByPass();
  c.pushedByPass();
  assert.equal(c.passPushes, 2);
  c.drained();
  c.served();
  assert.equal(c.newUnsynced, false);
  assert.equal(c.drainedSinceService, false);
  c.markSynced();
  assert.equal(c.unsynced, false);
  assert.equal(c.markUnsynced(), true, 'a new episode');
  assert.equal(c.passPushes, 0);
});

test('two cursors over one shared cell: the worker sees the consumer drain and the position it wrote', () => {
  const cell = new Float64Array(new SharedArrayBuffer(8 * CELL_SLOTS));
  const main = new SyncCursor(cell);
  const worker = new SyncCursor(new Float64Array(cell.buffer));
  main.startAt(5);
  assert.equal(worker.position, 5);
  main.drained(); // the consumer emptied its channel
  assert.equal(worker.drainedSinceService, true, 'candidate order key 2 reaches the worker');
  worker.accepted(9);
  worker.served();
  assert.equal(main.position, 9, 'one position, no reconciliation');
  assert.equal(main.drainedSinceService, false);
  assert.throws(() => new SyncCursor(new Float64Array(1)), RangeError);
});

test('the main thread keeps the position while synced: published at markUnsynced, taken back at markSynced', () => {
  const cell = new Float64Array(new SharedArrayBuffer(8 * CELL_SLOTS));
  const main = new SyncCursor(cell, true); // a Watcher's cursor
  main.startAt(5);
  main.accepted(7); // the live path
  main.raiseTo(6); // never back
  assert.equal(main.position, 7);
  // A stall: the position reaches the cell before the writer side (and the position) goes to the worker.
  assert.equal(stalledAt(main, 9), true);
  const worker = new SyncCursor(new Float64Array(cell.buffer)); // the worker's member, over the same cell
  assert.equal(worker.position, 8, 'X - 1 is what the worker starts from');
  worker.accepted(12); // a pass
  assert.equal(main.position, 12, 'while unsynced the main thread reads the cell');
  main.markSynced(); // the hand-back: the worker's last position comes back
  worker.accepted(99); // (a worker never writes after its hand-back; if it did, the main thread would not see it)
  assert.equal(main.position, 12);
  main.accepted(13);
  assert.equal(main.position, 13);
  main.markUnsynced();
  assert.equal(worker.position, 13, 'published again at the next stall');
});

test('the sync worker holds the position: the shared cell moves only at publishPosition, never per push', () => {
  const cell = new Float64Array(CELL_SLOTS);
  const main = new SyncCursor(cell, true);
  main.startAt(5);
  main.markUnsynced(); // published into the cell for the worker
  const worker = new SyncCursor(cell);
  worker.startAt(5);
  worker.markUnsynced();
  worker.holdPosition();
  worker.accepted(6);
  worker.accepted(7);
  assert.equal(worker.position, 7, 'the worker reads its own position');
  assert.equal(main.position, 5, 'the cell (what survives the worker) is not ahead of what was published');
  worker.publishPosition();
  assert.equal(main.position, 7);
  worker.raiseTo(9);
  assert.equal(main.position, 7);
  worker.publishPosition();
  assert.equal(main.position, 9);
  assert.throws(() => main.holdPosition(), /keeps its position/, 'not for the main thread’s cursor');
});

test('a watcher is its own cursor: the live path reads one object per watcher (issue 13)', () => {
  const w = new Watcher({
    id: 1,
    selection: new Selection({}, {}, undefined),
    capacity: 2,
    allowBookmarks: false,
    owner: new FakeOwner(),
  });
  assert.equal(w.cursor, w, 'no second object between the watcher and its position');
  assert.ok(w instanceof SyncCursor);
  assert.equal(w.state, 'pending');
  w.activate(5, undefined);
  assert.equal(w.state, 'active');
  assert.equal(w.accepting, true);
  assert.equal(w.position, 5);
  assert.equal(w.startPosition, 5);
  w.stop('client');
  assert.equal(w.state, 'stopped');
  assert.equal(w.accepting, false);
});

test('the flags are independent: stalled, joining, new and the kept position move apart', () => {
  const cell = new Float64Array(new SharedArrayBuffer(8 * CELL_SLOTS));
  const c = new SyncCursor(cell, true);
  c.startAt(3);
  assert.equal(stalledAt(c, 7), true);
  assert.deepEqual([c.unsynced, c.joinPending, c.newUnsynced, cell[0]], [true, true, true, 6]);
  c.setJoinPending(false);
  assert.deepEqual([c.unsynced, c.joinPending, c.newUnsynced], [true, false, true]);
  c.served();
  assert.deepEqual([c.unsynced, c.joinPending, c.newUnsynced], [true, false, false]);
  cell[0] = 11; // the worker's pass
  c.setJoinPending(true);
  c.markSynced();
  assert.deepEqual([c.unsynced, c.joinPending, c.position], [false, true, 11], 'markSynced leaves joinPending alone');
  cell[0] = 50; // after the hand-back the cell is not the position any more
  c.accepted(12);
  assert.equal(c.position, 12);
  assert.equal(cell[0], 50);
  assert.equal(stalledAt(c, 20), true, 'a new episode');
  assert.deepEqual([c.position, c.newUnsynced, c.passPushes], [19, true, 0]);
});

test('stallAll: cell-backed and held cursors, synced or already unsynced, each at X - 1 at most and never lower', () => {
  // A cell-backed cursor (the sync worker's side, a remote consumer): the cell is its position.
  const shared = new SyncCursor();
  shared.cell[0] = 10;
  // Already unsynced and holding its position (a worker member between passes).
  const held = new SyncCursor();
  held.cell[0] = 4;
  assert.equal(held.markUnsynced(), true);
  held.holdPosition();
  // Already unsynced, cell-backed, ahead of the stall's X - 1.
  const ahead = new SyncCursor();
  ahead.cell[0] = 30;
  assert.equal(ahead.markUnsynced(), true);
  const into: SyncCursor[] = [];
  assert.equal(SyncCursor.stallAll([shared, held, ahead], 3, 16, into), 1, 'only the synced one is fresh');
  assert.deepEqual(into, [shared]);
  assert.deepEqual([shared.position, shared.cell[0], shared.unsynced, shared.joinPending], [15, 15, true, true]);
  assert.deepEqual([held.position, held.cell[0]], [15, 4], 'a held position moves, the cell waits for its publish');
  assert.equal(ahead.position, 30, 'never lowered');
  held.publishPosition();
  assert.equal(held.cell[0], 15);
});
