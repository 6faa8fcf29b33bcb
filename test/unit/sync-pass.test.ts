/**
 * SyncPass (KEP-6268 "Sync pass", steps 1-6), host-agnostic: driven here with
 * fake PassHost / PassMember objects so every rule is observed directly.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Offer,
  SyncPass,
  type PassCursor,
  type PassHost,
  type PassMember,
  type PassStats,
} from '../../src/sync/sync-pass.js';
import { resolvePassOptions, type PassOptions } from '../../src/sync/pass-options.js';
import { SyncCursor } from '../../src/sync/sync-cursor.js';

interface FEvent {
  rv: number;
  /** Member ids that select it (undefined = every member). */
  only?: Set<string>;
}

class FMember implements PassMember {
  readonly cursor = new SyncCursor();
  reachedLive = true;
  accepting = true;
  queue: FEvent[] = [];
  constructor(
    readonly id: string,
    position: number,
    readonly capacity = 100,
    queued = 0,
  ) {
    this.cursor.startAt(position);
    this.cursor.markUnsynced();
    this.cursor.served(); // not new: tests mark new or drained members explicitly
    for (let i = 0; i < queued; i++) this.queue.push({ rv: 0 });
  }
  get position(): number {
    return this.cursor.position;
  }
  get unsynced(): boolean {
    return this.cursor.unsynced;
  }
  get passPushes(): number {
    return this.cursor.passPushes;
  }
  get free(): number {
    return this.capacity - this.queue.length;
  }
  /** RVs this member received from passes. */
  get got(): number[] {
    return this.queue.filter((e) => e.rv > 0).map((e) => e.rv);
  }
}

class FHost implements PassHost<FEvent, FMember> {
  opens: number[] = [];
  offers: { id: string; rv: number; ev: FEvent; result: Offer }[] = [];
  expired: { id: string; oldest: number }[] = [];
  resynced: string[] = [];
  dropped: string[] = [];
  deferred: (() => void)[] = [];
  oldest: number | undefined;
  point: number;
  constructor(readonly events: FEvent[]) {
    this.oldest = events.length > 0 ? events[0]!.rv : undefined;
    this.point = events.length > 0 ? events[events.length - 1]!.rv : 0;
  }
  oldestServableRV(): number | undefined {
    return this.oldest;
  }
  resyncPoint(): number {
    return this.point;
  }
  open(afterRV: number): PassCursor<FEvent> {
    this.opens.push(afterRV);
    let i = this.events.findIndex((e) => e.rv > afterRV);
    if (i < 0) i = this.events.length;
    return { next: () => this.events[i++] };
  }
  offer(m: FMember, ev: FEvent): Offer {
    let result: Offer;
    if (ev.only !== undefined && !ev.only.has(m.id)) result = Offer.NotSelected;
    else if (m.free === 0) result = Offer.Full;
    else {
      m.queue.push(ev);
      result = Offer.Pushed;
    }
    this.offers.push({ id: m.id, rv: ev.rv, ev, result });
    return result;
  }
  expire(m: FMember, oldest: number): void {
    this.expired.push({ id: m.id, oldest });
  }
  resync(m: FMember): void {
    m.cursor.markSynced();
    this.resynced.push(m.id);
  }
  drop(m: FMember): void {
    this.dropped.push(m.id);
  }
  defer(fn: () => void): void {
    this.deferred.push(fn);
  }
  /** Run deferred retry rounds until none are left. */
  runDeferred(before?: () => void): number {
    let rounds = 0;
    while (this.deferred.length > 0) {
      before?.();
      this.deferred.shift()!();
      rounds++;
    }
    return rounds;
  }
  offeredTo(id: string): number[] {
    return this.offers.filter((o) => o.id === id && o.result === Offer.Pushed).map((o) => o.rv);
  }
}

function events(from: number, to: number, only?: (rv: number) => Set<string> | undefined): FEvent[] {
  const out: FEvent[] = [];
  for (let rv = from; rv <= to; rv++) {
    const o = only?.(rv);
    out.push(o === undefined ? { rv } : { rv, only: o });
  }
  return out;
}

function run(pass: SyncPass<FEvent, FMember>, members: FMember[]): PassStats[] {
  const done: PassStats[] = [];
  pass.run(members, (s) => done.push(s));
  return done;
}

function mkPass(host: FHost, opts: Partial<PassOptions> = {}): SyncPass<FEvent, FMember> {
  return new SyncPass(resolvePassOptions(opts), host);
}

describe('step 1: oldest servable RV, stopped members, expiry, candidates', () => {
  test('a stopped member is dropped: never offered, never expired', () => {
    const host = new FHost(events(11, 20));
    const a = new FMember('a', 12);
    a.accepting = false;
    const old = new FMember('old', 1);
    old.accepting = false;
    const [stats] = run(mkPass(host), [a, old]);
    assert.deepEqual(host.dropped, ['a', 'old']);
    assert.deepEqual(host.offers, []);
    assert.deepEqual(host.expired, []);
    assert.equal(stats!.candidates, 0);
  });

  test('every member below oldest - 1 expires, with or without room; oldest - 1 itself is served', () => {
    const host = new FHost(events(11, 20));
    const edge = new FMember('edge', 10);
    const below = new FMember('below', 9);
    const belowFull = new FMember('belowFull', 5, 2, 2);
    const full = new FMember('full', 15, 2, 2);
    const [stats] = run(mkPass(host), [edge, below, belowFull, full]);
    assert.deepEqual(host.expired.map((e) => e.id).sort(), ['below', 'belowFull']);
    assert.ok(host.expired.every((e) => e.oldest === 11));
    assert.equal(stats!.expired, 2);
    assert.deepEqual(
      edge.got,
      events(11, 20).map((e) => e.rv),
    );
    assert.equal(stats!.candidates, 1, 'a full member is not a candidate');
    assert.deepEqual(
      host.offers.filter((o) => o.id === 'full'),
      [],
    );
  });

  test('an empty history (no oldest servable RV) expires everyone', () => {
    const host = new FHost([]);
    const a = new FMember('a', 3);
    run(mkPass(host), [a]);
    assert.deepEqual(
      host.expired.map((e) => e.id),
      ['a'],
    );
  });
});

describe('step 1: candidate order', () => {
  test('(a) free share of the channel comes first (a share, not a count)', () => {
    const host = new FHost(events(1, 50));
    const bigChannel = new FMember('big', 5, 100, 60); // 40 free, share 0.4
    const smallChannel = new FMember('small', 30, 10, 2); // 8 free, share 0.8
    run(mkPass(host, { maxWatchers: 1 }), [bigChannel, smallChannel]);
    assert.deepEqual(host.opens, [30], 'the member with the larger free share leads');
    assert.deepEqual(host.offeredTo('big'), []);
    assert.ok(host.offeredTo('small').length > 0);
  });

  test('(b) then new to the unsynced set or drained since its last service', () => {
    for (const flag of ['newUnsynced', 'drainedSinceService'] as const) {
      const host = new FHost(events(1, 50));
      const old = new FMember('old', 5);
      const fresh = new FMember('fresh', 30);
      if (flag === 'newUnsynced') {
        fresh.cursor.markSynced();
        fresh.cursor.markUnsynced(); // a new episode
      } else fresh.cursor.drained();
      assert.equal(fresh.cursor[flag], true, flag);
      run(mkPass(host, { maxWatchers: 1 }), [old, fresh]);
      assert.deepEqual(host.opens, [30], flag);
      assert.equal(fresh.cursor[flag], false, `${flag} is cleared once served`);
    }
  });

  test('(c) then rotation from the persistent cursor: positions at or above it first', () => {
    const host = new FHost(events(1, 100));
    const pass = mkPass(host, { maxWatchers: 1 });
    pass.cursor = 50;
    const low = new FMember('low', 10);
    const high = new FMember('high', 60);
    const atCursor = new FMember('at', 50);
    run(pass, [low, high]);
    assert.deepEqual(host.opens, [60]);
    host.opens = [];
    high.cursor.markUnsynced();
    pass.cursor = 50;
    run(pass, [low, atCursor]);
    assert.deepEqual(host.opens, [50], 'at the cursor counts as at or above');
  });

  test("the order reads each candidate's free room once (beta: shared-memory loads), not once per comparison", () => {
    // 64 members in every order-key combination; the member cap keeps one, the others are only ordered.
    const host = new FHost(events(1, 100));
    class Counted extends FMember {
      reads = 0;
      override get free(): number {
        this.reads++;
        return super.free;
      }
    }
    const members: Counted[] = [];
    for (let i = 0; i < 64; i++) {
      const m = new Counted(`m${i}`, 1 + ((i * 37) % 60), 100, (i * 13) % 50);
      if (i % 3 === 0) m.cursor.drained();
      members.push(m);
    }
    const pass = mkPass(host, { maxWatchers: 1 });
    pass.cursor = 30;
    run(pass, members);
    const unserved = members.filter((m) => m.got.length === 0);
    assert.equal(unserved.length, 63);
    assert.deepEqual(
      unserved.filter((m) => m.reads !== 1).map((m) => `${m.id}: ${m.reads}`),
      [],
      'a member the pass only ordered had its room read once',
    );
    // The order itself is the KEP's: the largest free share leads.
    const served = members.find((m) => m.got.length > 0)!;
    assert.equal(Math.min(...members.map((m) => (m.queue.length - m.got.length) / m.capacity)), 0);
    assert.equal(served.queue.length - served.got.length, 0, 'the served member had the largest free share');
  });

  test('the cursor becomes the last scanned RV of the last cohort served, and persists', () => {
    const host = new FHost(events(1, 300));
    const pass = mkPass(host, { scanBudget: 64 + 40, maxWatchers: 1 });
    const a = new FMember('a', 10);
    run(pass, [a]);
    assert.equal(pass.cursor, 50);
    assert.equal(a.position, 50);
    // a laggard below the cursor waits behind a member at or above it
    const lag = new FMember('lag', 20);
    const b = new FMember('b', 200);
    run(pass, [lag, b]);
    assert.deepEqual(host.opens, [10, 200]);
    assert.equal(pass.cursor, 240);
    // now both are below the cursor: position order decides
    run(pass, [lag, b]);
    assert.deepEqual(host.opens, [10, 200, 20]);
  });

  test('a slow member left owed falls below the cursor and another member gets the next pass', () => {
    const host = new FHost(events(1, 100));
    const pass = mkPass(host, { maxWatchers: 1, scanBudget: 64 + 30 });
    const slow = new FMember('slow', 10, 5);
    const other = new FMember('other', 12, 5);
    run(pass, [slow, other]);
    assert.deepEqual(host.opens, [10]);
    // slow took 5 and is owed; its channel drains completely, other's too
    slow.queue = [];
    slow.cursor.drained();
    other.cursor.drained();
    host.deferred = [];
    run(pass, [slow, other]);
    assert.deepEqual(host.opens, [10, 12], 'rotation: other (at or above the cursor) leads');
  });

  test('member cap: only the first maxWatchers candidates are served', () => {
    const host = new FHost(events(1, 20));
    const ms = [new FMember('a', 1), new FMember('b', 2), new FMember('c', 3)];
    const [stats] = run(mkPass(host, { maxWatchers: 2 }), ms);
    assert.equal(stats!.candidates, 2);
    assert.deepEqual(host.offeredTo('c'), []);
    assert.equal(ms[2]!.position, 3);
    assert.deepEqual(host.resynced.sort(), ['a', 'b']);
  });
});

describe('step 2: cohorts', () => {
  test('followers join as the scan passes their position: one interval for the whole cohort', () => {
    const host = new FHost(events(1, 40));
    const a = new FMember('a', 10);
    const b = new FMember('b', 20);
    const c = new FMember('c', 30);
    const [stats] = run(mkPass(host), [c, a, b]);
    assert.deepEqual(host.opens, [10]);
    assert.equal(stats!.cohorts, 1);
    assert.deepEqual(
      host.offeredTo('a'),
      events(11, 40).map((e) => e.rv),
    );
    assert.deepEqual(
      host.offeredTo('b'),
      events(21, 40).map((e) => e.rv),
    );
    assert.deepEqual(
      host.offeredTo('c'),
      events(31, 40).map((e) => e.rv),
    );
    assert.ok(
      host.offers.every((o) => o.id !== 'b' || o.rv > 20),
      'nothing at or below a position is offered',
    );
    // one history read: every member is offered the same event object
    const e35 = host.offers.filter((o) => o.rv === 35).map((o) => o.ev);
    assert.equal(e35.length, 3);
    assert.ok(e35.every((e) => e === e35[0]));
    assert.deepEqual(host.resynced.sort(), ['a', 'b', 'c']);
  });

  test('a candidate below the lead is never in its cohort: it leads its own', () => {
    const host = new FHost(events(1, 40));
    const lead = new FMember('lead', 20, 100, 0); // free share 1.0
    const below = new FMember('below', 5, 100, 50); // free share 0.5: ordered after the lead
    const [stats] = run(mkPass(host), [below, lead]);
    assert.deepEqual(host.opens, [20, 5]);
    assert.equal(stats!.cohorts, 2);
    assert.deepEqual(
      host.offeredTo('lead'),
      events(21, 40).map((e) => e.rv),
    );
    assert.deepEqual(
      host.offeredTo('below'),
      events(6, 40).map((e) => e.rv),
    );
    assert.deepEqual(host.resynced, ['lead', 'below']);
  });

  test('each open costs intervalOpenCost scan units', () => {
    const host = new FHost(events(1, 200));
    // two members far apart in different cohorts (the second has a smaller share, below the lead)
    const a = new FMember('a', 150, 100, 0);
    const b = new FMember('b', 10, 100, 50);
    const [stats] = run(mkPass(host, { scanBudget: 64 + 50 + 64 + 5, intervalOpenCost: 64 }), [a, b]);
    assert.deepEqual(host.opens, [150, 10]);
    assert.equal(stats!.scanned, 50 + 5);
  });
});

describe('bounds: scan and push budgets', () => {
  test('scan budget: a pass stops scanning when its units are spent; no resync short of the end', () => {
    const host = new FHost(events(1, 100));
    const a = new FMember('a', 0);
    const [stats] = run(mkPass(host, { scanBudget: 64 + 10 }), [a]);
    assert.equal(stats!.scanned, 10);
    assert.equal(a.position, 10);
    assert.equal(a.unsynced, true);
    assert.deepEqual(host.resynced, []);
  });

  test('a scan budget no larger than one open scans nothing', () => {
    const host = new FHost(events(1, 100));
    const a = new FMember('a', 0);
    const [stats] = run(mkPass(host, { scanBudget: 64 }), [a]);
    assert.equal(stats!.scanned, 0);
    assert.equal(a.position, 0);
  });

  test('push budget: a pass stops pushing when it is spent and reports it (one member)', () => {
    const host = new FHost(events(1, 100));
    const a = new FMember('a', 0);
    const [stats] = run(mkPass(host, { pushBudget: 7 }), [a]);
    assert.equal(stats!.pushes, 7);
    assert.equal(stats!.pushBudgetSpent, true);
    assert.deepEqual(a.got, [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(a.position, 7);
    assert.deepEqual(host.resynced, []);
  });

  test('at most one channel capacity per member per cohort', () => {
    const host = new FHost(events(1, 30));
    const a = new FMember('a', 0, 4);
    const pass = mkPass(host);
    run(pass, [a]);
    assert.deepEqual(a.got, [1, 2, 3, 4]);
  });
});

describe('steps 4-6: pushes, owed events, position, resync', () => {
  test('a member that cannot take an event keeps its last accepted RV and is owed the rest', () => {
    const host = new FHost(events(1, 10));
    const a = new FMember('a', 0, 3);
    const done = run(mkPass(host), [a]);
    assert.equal(done.length, 0, 'done waits for the retry rounds');
    assert.deepEqual(a.got, [1, 2, 3]);
    assert.equal(a.position, 3);
    assert.equal(a.unsynced, true);
    assert.equal(host.deferred.length, 1, 'owed events are retried later, through host.defer');
  });

  test('owed events are re-offered at the end of the pass, in up to two rounds, to members with room', () => {
    const host = new FHost(events(1, 10));
    const a = new FMember('a', 0, 3);
    const done: PassStats[] = [];
    mkPass(host).run([a], (s) => done.push(s));
    const rounds = host.runDeferred(() => (a.queue = [])); // the consumer drains before each round
    assert.equal(rounds, 2);
    assert.equal(done.length, 1);
    assert.deepEqual(host.offeredTo('a'), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(a.position, 9);
    assert.equal(a.unsynced, true, 'still owed: stays unsynced for a later pass');
    assert.equal(done[0]!.leftOwedFull, true);
  });

  test('a member that takes all its owed events in a retry round is advanced and resynced', () => {
    const host = new FHost(events(1, 5));
    const a = new FMember('a', 0, 3);
    const done: PassStats[] = [];
    mkPass(host).run([a], (s) => done.push(s));
    host.runDeferred(() => (a.queue = []));
    assert.deepEqual(host.offeredTo('a'), [1, 2, 3, 4, 5]);
    assert.equal(a.position, 5);
    assert.deepEqual(host.resynced, ['a']);
    assert.equal(done[0]!.resynced, 1);
  });

  test('a host with retryRounds 0 (the worker thread): no rounds, no scan ahead; the owed keep their position', () => {
    const host = new FHost(events(1, 100));
    Object.assign(host, { retryRounds: 0 });
    const a = new FMember('a', 0, 3);
    const done = run(mkPass(host), [a]);
    assert.equal(done.length, 1, 'done at once: nothing deferred');
    assert.equal(host.deferred.length, 0);
    assert.deepEqual(a.got, [1, 2, 3]);
    assert.equal(a.position, 3, 'invariant 1: the last accepted RV');
    assert.equal(done[0]!.scanned, 4, 'the scan stops at the event it could not take, not two channels further');
    assert.equal(done[0]!.leftOwedFull, true, 'owed with a full channel: the worker waits for room');
    assert.equal(done[0]!.leftOwedWithRoom, false);
    // The consumer read: the next pass offers the rest from the position (nothing twice: invariant 2).
    a.queue = [];
    const [next] = run(mkPass(host), [a]);
    assert.deepEqual(a.got, [4, 5, 6]);
    assert.equal(next!.scanned, 4);
  });

  test('retryRounds 0 with room left (a cohort capped at one channel): reported owed with room, so more passes come now', () => {
    const host = new FHost(events(1, 100));
    Object.assign(host, { retryRounds: 0 });
    const a = new FMember('a', 0, 3);
    const origOffer = host.offer.bind(host);
    host.offer = (m, ev) => {
      const r = origOffer(m, ev);
      if (r === Offer.Pushed) m.queue.shift(); // its consumer reads as fast as the pass pushes
      return r;
    };
    const [stats] = run(mkPass(host), [a]);
    assert.deepEqual(host.offeredTo('a'), [1, 2, 3], 'one channel per member per cohort');
    assert.equal(stats!.leftOwedWithRoom, true);
    assert.equal(host.deferred.length, 0);
  });

  test('a member whose channel is still full is skipped by the retry rounds', () => {
    const host = new FHost(events(1, 10));
    const a = new FMember('a', 0, 3);
    mkPass(host).run([a], () => {});
    const offersBefore = host.offers.length;
    host.runDeferred();
    assert.equal(host.offers.length, offersBefore);
  });

  test('a member stopped before the retry round is not offered again', () => {
    const host = new FHost(events(1, 10));
    const a = new FMember('a', 0, 3);
    mkPass(host).run([a], () => {});
    a.accepting = false;
    a.queue = [];
    const before = host.offers.length;
    host.runDeferred();
    assert.equal(host.offers.length, before);
  });

  test('step 5: a member that accepted everything moves to the last scanned RV though nothing was pushed', () => {
    const only = new Set(['other']);
    const host = new FHost(events(1, 60, () => only));
    const a = new FMember('a', 10);
    const [stats] = run(mkPass(host, { scanBudget: 64 + 20 }), [a]);
    assert.equal(stats!.pushes, 0);
    assert.equal(a.position, 30);
    assert.equal(stats!.served, 1);
  });

  test('step 6: resync when the scan reached the resync point; a scope-filtered member converges too', () => {
    const host = new FHost(events(1, 60, (rv) => (rv % 10 === 0 ? new Set(['a']) : new Set(['b']))));
    const a = new FMember('a', 10);
    const b = new FMember('b', 15);
    run(mkPass(host), [a, b]);
    assert.deepEqual(host.offeredTo('a'), [20, 30, 40, 50, 60]);
    assert.equal(a.position, 60);
    assert.equal(b.position, 60);
    assert.deepEqual(host.resynced.sort(), ['a', 'b']);
  });

  test('the resync point may lie past the last event (store progress): the member moves there', () => {
    const host = new FHost(events(1, 10));
    host.point = 14;
    const a = new FMember('a', 5);
    run(mkPass(host), [a]);
    assert.equal(a.position, 14);
    assert.deepEqual(host.resynced, ['a']);
  });

  test('a scan that stopped at exactly the resync point resyncs (budget ran out on the last event)', () => {
    const host = new FHost(events(1, 10));
    const a = new FMember('a', 0);
    run(mkPass(host, { scanBudget: 64 + 10 }), [a]);
    assert.equal(a.position, 10);
    assert.deepEqual(host.resynced, ['a']);
  });

  test('no resync while the resync point is beyond the scan (history ahead of dispatch in alpha)', () => {
    const host = new FHost(events(1, 10));
    host.point = 10;
    const a = new FMember('a', 0);
    run(mkPass(host, { scanBudget: 64 + 6 }), [a]);
    assert.equal(a.position, 6);
    assert.deepEqual(host.resynced, []);
  });

  test('passPushes counts the events pushed by passes', () => {
    const host = new FHost(events(1, 8));
    const a = new FMember('a', 2);
    run(mkPass(host), [a]);
    assert.equal(a.passPushes, 6);
  });

  test('stats: served, resynced, expired, no owed', () => {
    const host = new FHost(events(5, 20));
    const a = new FMember('a', 10);
    const gone = new FMember('gone', 1);
    const [s] = run(mkPass(host), [a, gone]);
    assert.equal(s!.served, 1);
    assert.equal(s!.resynced, 1);
    assert.equal(s!.expired, 1);
    assert.equal(s!.leftOwedFull, false);
    assert.equal(s!.pushBudgetSpent, false);
  });
});

describe('sync-pass: the push budget is a total bound for the pass', () => {
  // KEP "Bounds": the push budget is a total for the whole pass across all cohorts, plus the same
  // allowance again for the end-of-pass retry rounds. A member cut off by the budget is owed the
  // rest (retry rounds), never advanced past what it accepted.
  test('pushes never exceed pushBudget with several members in a cohort', () => {
    const host = new FHost(events(1, 100));
    const ms = [new FMember('a', 0), new FMember('b', 0), new FMember('c', 0)];
    const done = run(mkPass(host, { pushBudget: 7 }), ms);
    const pushedInPass = ms.reduce((n, m) => n + m.got.length, 0);
    assert.ok(pushedInPass <= 7, `pushed ${pushedInPass} in the pass with a push budget of 7`);
    for (const m of ms) assert.equal(m.position, m.got.at(-1) ?? 0, m.id);
    host.runDeferred();
    const stats = done[0]!;
    assert.equal(stats.pushBudgetSpent, true);
    const pushed = ms.reduce((n, m) => n + m.got.length, 0);
    assert.ok(pushed <= 14, `pushed ${pushed} with a push budget of 7 and the same again for retries`);
    assert.equal(stats.pushes, pushed);
    // whatever was cut, each member's position is exactly its last accepted event
    for (const m of ms) assert.equal(m.position, m.got.at(-1) ?? 0, m.id);
  });
});

/** A member whose channel holds runs (beta's SpscChannel "Run slots"): its room counts slots, not events. */
class RunMember extends FMember {
  slots = 0;
  /** The run its last slot holds: its last RV and length. */
  runLast = -1;
  runLen = 0;
  override get free(): number {
    return this.capacity - this.slots;
  }
}

/**
 * A host that makes runs as the sync worker does: an event right after the member's last one joins that
 * slot, up to `runMax` events, and the offer answers Offer.PushedInRun (no slot taken).
 */
class RunHost extends FHost {
  constructor(
    events: FEvent[],
    readonly runMax: number,
  ) {
    super(events);
  }
  override offer(m: FMember, ev: FEvent): Offer {
    if (!(m instanceof RunMember)) throw new Error('RunHost serves RunMembers');
    let result: Offer;
    if (m.runLast + 1 === ev.rv && m.runLen < this.runMax) {
      m.runLast = ev.rv;
      m.runLen++;
      result = Offer.PushedInRun;
    } else if (m.free === 0) return Offer.Full;
    else {
      m.slots++;
      m.runLast = ev.rv;
      m.runLen = 1;
      result = Offer.Pushed;
    }
    m.queue.push(ev);
    this.offers.push({ id: m.id, rv: ev.rv, ev, result });
    return result;
  }
}

describe('sync-pass: run slots (beta) count against the push budget, not the channel cap', () => {
  // A run slot is one reference in the channel (the per-cohort cap, "one channel's capacity per watcher",
  // bounds what the channel holds), but every event in it is work the pass did (the push budget bounds that).
  test('a member gets one channel of slots per cohort, each slot a run', () => {
    const host = new RunHost(events(1, 100), 4);
    const a = new RunMember('a', 0, 4);
    const done = run(mkPass(host, { pushBudget: 1000 }), [a]);
    host.runDeferred(); // the end-of-pass retry rounds: its channel has no room, they offer it nothing
    const stats = done[0];
    // Three full runs, then the fourth slot's first event: the cap is checked before each offer, so once
    // the fourth slot is taken the cohort offers this member nothing more (events 14-16 are not offered).
    assert.deepEqual(
      a.got,
      Array.from({ length: 13 }, (_, i) => i + 1),
    );
    assert.equal(a.slots, 4);
    assert.equal(stats!.pushes, 13, 'pushes count events');
    assert.equal(a.position, 13);
    assert.deepEqual(host.resynced, []);
  });

  test('the push budget counts every event, in a run or not', () => {
    const host = new RunHost(events(1, 100), 4);
    const a = new RunMember('a', 0, 100);
    const [stats] = run(mkPass(host, { pushBudget: 7 }), [a]);
    assert.deepEqual(a.got, [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(stats!.pushes, 7);
    assert.equal(stats!.pushBudgetSpent, true);
    assert.equal(a.position, 7);
  });
});
