/**
 * The dispatcher's live-first batches (src/dispatch/dispatcher.ts, "Live
 * first"): a consumer waiting in next() gets an event before the walk offers
 * it to the other candidates, and every watcher still gets every event once,
 * in order, whoever parks during a batch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { realClock } from '../../src/core/clock.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { FullChannelPolicy } from '../../src/dispatch/full-channel-policy.js';
import { WatcherIndex } from '../../src/dispatch/watcher-index.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import type { Watcher } from '../../src/watch/watcher.js';
import type { WatchEvent } from '../../src/wire/watch-event.js';
import { activeWatcher, FakeOwner, pod } from './support/harness.js';

/** A FakeOwner that lists parked consumers with the dispatcher, as the cache's owner does. */
class ParkingOwner extends FakeOwner {
  dispatcher: Dispatcher | undefined;
  watcherParked(w: Watcher): void {
    this.dispatcher?.watcherParked(w);
  }
}

function rig(
  n: number,
  options: { liveFirst?: boolean; minWatchers?: number; maxBatchNumber?: number; walkChunk?: number } = {},
) {
  const index = new WatcherIndex(false);
  const dispatched: number[] = [];
  const policy: FullChannelPolicy = {
    liveFirst: options.liveFirst ?? true,
    onFull: () => {},
    afterEvent: () => false,
    onRoom: () => {},
    onEnded: () => {},
    afterDispatch: () => dispatched.push(dispatcher.lastDispatchedRV),
    close: () => {},
  };
  const owner = new ParkingOwner();
  const watchers: Watcher[] = [];
  for (let id = 1; id <= n; id++) {
    const w = activeWatcher(id, owner, 100);
    index.add(w);
    watchers.push(w);
  }
  const metrics = new CacheMetrics(DEFAULT_RESOURCE);
  const dispatcher = new Dispatcher(index, policy, metrics, {
    minWatchers: options.minWatchers ?? 1,
    clock: realClock, // its setImmediate
    ...(options.maxBatchNumber === undefined ? {} : { maxBatchNumber: options.maxBatchNumber }),
    ...(options.walkChunk === undefined ? {} : { walkChunk: options.walkChunk }),
  });
  owner.dispatcher = dispatcher;
  /** Events the live path found already delivered (a walk that offered one again to a watcher served ahead). */
  const skipped = async (): Promise<number> =>
    (await metrics.registry.getSingleMetric('apiserver_watch_cache_watcher_skipped_events_total')!.get()).values[0]
      ?.value ?? 0;
  const event = (rv: number): WatchCacheEvent =>
    new WatchCacheEvent('ADDED', pod(`p${rv}`), undefined, rv, 0, undefined);
  return { dispatcher, watchers, event, dispatched, skipped, index, owner };
}

/** The RV an iterator result delivers (undefined: the watch ended). */
function rvOf(r: IteratorResult<WatchEvent>): number | undefined {
  return r.done === true ? undefined : r.value.rv;
}

/** The rest of this turn: the consumers' microtasks, then a batch's walk (the rig's clock: setImmediate). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The RVs a watcher's consumer takes without waiting (what is queued now). */
async function takeQueued(w: Watcher): Promise<number[]> {
  const rvs: number[] = [];
  while (w.queue.size > 0) {
    const r = await w.next();
    if (r.done === true) break;
    rvs.push(r.value.rv);
  }
  return rvs;
}

test('live first: a waiting consumer gets the event before the walk offers it to the others', async () => {
  const { dispatcher, watchers, event, dispatched, skipped } = rig(4);
  const [waiter, ...others] = watchers as [Watcher, Watcher, Watcher, Watcher];
  // The first event is walked at once: no walk has counted candidates that do not wait yet.
  dispatcher.dispatch(event(2));
  for (const w of watchers) assert.equal(w.queue.size, 1, 'walked at once');
  assert.deepEqual(await takeQueued(waiter), [2]);
  let othersQueuedWhenServed = -1;
  const got = waiter.next().then((r) => {
    othersQueuedWhenServed = others.reduce((sum, w) => sum + w.queue.size, 0);
    return r;
  });
  // That walk found 3 consumers not waiting (at least the rig's threshold, 1): event 3 is a batch.
  dispatcher.dispatch(event(3));
  assert.equal(waiter.waiting, false, 'offered ahead: woken synchronously');
  assert.equal(others[0].queue.size, 1, 'the walk has not run yet');
  assert.equal(dispatcher.lastDispatchedRV, 2, 'the last dispatched RV moves at the walk');
  const r = await got;
  assert.equal(rvOf(r), 3);
  assert.equal(othersQueuedWhenServed, 3, "the waiting consumer's continuation ran before the walk");
  assert.equal(others[0].queue.size, 1, 'the walk comes after the microtasks');
  await turn();
  for (const w of others) assert.equal(w.queue.size, 2, 'the walk offered the event to everyone else');
  assert.equal(dispatcher.lastDispatchedRV, 3);
  assert.deepEqual(dispatched, [2, 3], 'the policy heard of the batch once, after its walk');
  assert.equal(await skipped(), 0, 'the walk skipped the watcher served ahead (no second offer)');
});

test('live first: a consumer that parks during a batch gets its events from the walk, in order, once', async () => {
  const { dispatcher, watchers, event } = rig(3);
  const [waiter, late, idle] = watchers as [Watcher, Watcher, Watcher];
  // `late` has an event queued: its consumer does not wait when the batch begins.
  dispatcher.dispatch(event(2));
  await turn();
  const waiting = waiter.next();
  assert.deepEqual(await takeQueued(late), [2]);
  assert.deepEqual(rvOf(await waiting), 2);
  assert.deepEqual(await takeQueued(idle), [2]);
  // Batch: event 3 offered ahead to the waiting consumers (waiter, idle), then `late` parks before the walk,
  // then event 4 comes in the same batch. Offering 4 to `late` ahead would put it before 3.
  const w1 = waiter.next();
  const i1 = idle.next();
  assert.ok(waiter.waiting && idle.waiting && !late.waiting);
  dispatcher.dispatch(event(3));
  const l1 = late.next(); // parks now, mid-batch
  assert.ok(late.waiting);
  dispatcher.dispatch(event(4));
  assert.ok(late.waiting, 'not offered ahead: it was not waiting when the batch began');
  assert.equal(rvOf(await w1), 3);
  assert.equal(rvOf(await i1), 3);
  assert.equal(rvOf(await l1), 3, 'the walk gave it 3 first');
  assert.deepEqual(await takeQueued(late), [4]);
  assert.deepEqual(await takeQueued(waiter), [4]);
  assert.deepEqual(await takeQueued(idle), [4]);
  for (const w of watchers) assert.equal(w.position, 4);
});

test('live first: progress and settle walk a batch first; off (liveFirst false) and small walks walk at once', async () => {
  const { dispatcher, watchers, event } = rig(2);
  dispatcher.dispatch(event(2)); // walked at once; it counts watchers[1] as not waiting
  assert.deepEqual(await takeQueued(watchers[0]!), [2]);
  const got = watchers[0]!.next();
  dispatcher.dispatch(event(3));
  assert.equal(watchers[1]!.queue.size, 1, 'event 3 waits for the walk');
  dispatcher.progress(5); // a progress notification (bookmark RVs) comes after the batch's walk
  assert.equal(watchers[1]!.queue.size, 2);
  assert.equal(dispatcher.lastDispatchedRV, 5);
  assert.equal(rvOf(await got), 3);

  // Off mode's policy has no liveFirst; with a threshold of 3, the 2 busy consumers of 3 watchers stay below it.
  for (const options of [{ liveFirst: false }, { minWatchers: 3 }]) {
    const r = rig(3, options);
    void r.watchers[0]!.next();
    r.dispatcher.dispatch(r.event(2));
    void r.watchers[0]!.next();
    r.dispatcher.dispatch(r.event(3));
    for (const w of r.watchers.slice(1)) assert.equal(w.queue.size, 2, `walked at once (${JSON.stringify(options)})`);
    assert.equal(r.dispatcher.lastDispatchedRV, 3);
  }

  const s = rig(2);
  s.dispatcher.dispatch(s.event(2));
  await takeQueued(s.watchers[0]!);
  void s.watchers[0]!.next();
  s.dispatcher.dispatch(s.event(3));
  s.dispatcher.stop();
  await turn();
  assert.equal(s.watchers[1]!.queue.size, 1, 'a stopped dispatcher drops the batch (its cache ended every watch)');
});

test('live first: batch numbers wrap without a stale mark skipping anyone', async () => {
  // Numbers wrap after 2 (1, 2, 1, ...): a watcher marked in one batch must not be skipped by a later batch of the
  // same number while another consumer is the one waiting (fails if the wrap keeps the old marks).
  const { dispatcher, watchers, event } = rig(3, { maxBatchNumber: 2 });
  const [a, b, c] = watchers as [Watcher, Watcher, Watcher];
  const got: Record<number, number[]> = { 1: [], 2: [], 3: [] };
  let rv = 1;
  for (let round = 0; round < 9; round++) {
    // Round by round a different consumer waits (marked ahead); the others read only what the walk queued.
    const waiter = watchers[round % 3]!;
    const waiting = waiter.next();
    dispatcher.dispatch(event(++rv));
    dispatcher.dispatch(event(++rv));
    const first = await waiting;
    got[waiter.id]!.push(rvOf(first)!);
    await turn();
    for (const w of [a, b, c]) got[w.id]!.push(...(await takeQueued(w)));
  }
  const all = Array.from({ length: rv - 1 }, (_, i) => i + 2);
  for (const w of [a, b, c]) assert.deepEqual(got[w.id], all, `watcher ${w.id}: every event once, in order`);
});

test('live first: a walk in chunks goes on over turns; a consumer that parks meanwhile joins the batch at its next turn, the earlier events first', async () => {
  const { dispatcher, watchers, event, dispatched, skipped } = rig(6, { walkChunk: 2 });
  const [waiter, ...others] = watchers as [Watcher, ...Watcher[]];
  const got = new Map<Watcher, number[]>(watchers.map((w) => [w, []]));
  const take = async (w: Watcher): Promise<void> => void got.get(w)!.push(...(await takeQueued(w)));
  dispatcher.dispatch(event(2)); // walked at once
  await take(waiter);
  const ahead = waiter.next();
  dispatcher.dispatch(event(3)); // a batch: offered ahead to the waiter, walked 2 candidates a turn
  got.get(waiter)!.push(rvOf(await ahead)!);
  await turn();
  assert.equal(dispatcher.lastDispatchedRV, 2, 'the walk of 3 stopped after its first chunk');
  const unvisited = others.filter((w) => w.queue.size === 1);
  assert.ok(unvisited.length >= 2, `${unvisited.length} not offered 3 yet`);
  // A consumer the walk has not reached parks now; event 4 comes while the batch's walk is still due.
  const late = unvisited[unvisited.length - 1]!;
  await take(late);
  const lateNext = late.next();
  dispatcher.dispatch(event(4));
  assert.equal(late.waiting, true, 'not offered 4 ahead: it has not been offered 3');
  await turn();
  // The walk's next turn: it joined the batch first (3, then 4), while the walk is still at event 3.
  got.get(late)!.push(rvOf(await lateNext)!);
  await take(late);
  assert.deepEqual(got.get(late), [2, 3, 4]);
  assert.equal(dispatcher.lastDispatchedRV, 2, 'the walk has not finished event 3');
  const event5 = late.next();
  dispatcher.dispatch(event(5));
  assert.equal(late.waiting, false, 'marked: offered the next event ahead');
  got.get(late)!.push(rvOf(await event5)!);
  for (let i = 0; i < 20 && dispatcher.lastDispatchedRV < 5; i++) await turn();
  assert.equal(dispatcher.lastDispatchedRV, 5);
  for (const w of watchers) await take(w);
  for (const w of watchers) assert.deepEqual(got.get(w), [2, 3, 4, 5], `watcher ${w.id}: every event once, in order`);
  assert.deepEqual(dispatched, [2, 5], 'the policy heard of the batch once, after the walk of its last event');
  assert.equal(await skipped(), 0);
});

test('live first: watchers registered since the last walk count as not waiting (a mass registration batches its first event)', async () => {
  const { dispatcher, watchers, event, index, owner } = rig(2, { minWatchers: 3 });
  const [waiter] = watchers as [Watcher, Watcher];
  dispatcher.dispatch(event(2)); // walked at once: 1 candidate not waiting, below the threshold of 3
  assert.deepEqual(await takeQueued(waiter), [2]);
  // Three watchers register (their consumers have not asked for anything): 1 + 3 not waiting now.
  const joined = [3, 4, 5].map((id) => activeWatcher(id, owner, 100));
  for (const w of joined) index.add(w);
  const got = waiter.next();
  dispatcher.dispatch(event(3));
  for (const w of joined) assert.equal(w.queue.size, 0, 'a batch: the walk comes later in the turn');
  assert.equal(rvOf(await got), 3, 'offered ahead');
  await turn();
  for (const w of joined) assert.deepEqual(await takeQueued(w), [3]);
});
