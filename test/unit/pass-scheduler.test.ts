/**
 * PassScheduler (KEP-6268 "When passes run"): normal 10 ms, idle 100 ms after
 * a pass that served and expired nothing, busy scaled from the measured pass
 * duration within [1, 10] ms, and a new stall resets to normal.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TimerHandle } from '../../src/index.js';
import { PassScheduler } from '../../src/sync/pass-scheduler.js';
import { resolvePassOptions } from '../../src/sync/pass-options.js';
import type { PassStats } from '../../src/sync/sync-pass.js';
import { pod, setup, flush } from './support/harness.js';
import { asWatcher } from '../../src/watch/watcher.js';
import { stallPolicyOf } from '../../src/cache/cache-internals.js';

/** A clock whose time can also move inside a synchronous call (a pass that "takes" time). */
class ManualClock {
  t = 0;
  private seq = 0;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const h = { at: this.t + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(h);
    return h as unknown as TimerHandle;
  }
  clearTimeout(h: TimerHandle): void {
    (h as unknown as { cancelled: boolean }).cancelled = true;
  }
  /** Work time: the same manual time, so a bumped pass also "costs" that much. */
  workNow(): number {
    return this.t;
  }
  random(): number {
    return 0.5;
  }
  bump(ms: number): void {
    this.t += ms;
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const live = this.timers.filter((x) => !x.cancelled && x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = live[0];
      if (next === undefined) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      if (next.at > this.t) this.t = next.at;
      next.fn();
    }
    this.t = end;
  }
}

const stats = (over: Partial<PassStats> = {}): PassStats => ({
  candidates: 1,
  cohorts: 1,
  scanned: 1,
  pushes: 1,
  expired: 0,
  resynced: 0,
  fullSkipped: 0,
  served: 1,
  leftOwedFull: false,
  pushBudgetSpent: false,
  scanBudgetSpent: false,
  unserved: 0,
  leftOwedWithRoom: false,
  ...over,
});

function rig(next: () => { stats: PassStats; takesMs?: number; deferDone?: boolean }, signalsRoom = false) {
  const clock = new ManualClock();
  const passesAt: number[] = [];
  const durations: number[] = [];
  let work = true;
  let pendingDone: (() => void) | undefined;
  const s = new PassScheduler(clock, resolvePassOptions({}), {
    hasWork: () => work,
    runPass: (done) => {
      passesAt.push(clock.now());
      const r = next();
      clock.bump(r.takesMs ?? 0);
      if (r.deferDone) pendingDone = () => done(r.stats);
      else done(r.stats);
    },
    observeDuration: (sec) => durations.push(sec),
    signalsRoom,
  });
  return {
    clock,
    s,
    passesAt,
    durations,
    setWork: (v: boolean) => (work = v),
    finish: () => {
      const d = pendingDone;
      pendingDone = undefined;
      d?.();
    },
  };
}

describe('PassScheduler periods', () => {
  test('normal: 10 ms after a pass that served something', () => {
    const { clock, s, passesAt } = rig(() => ({ stats: stats() }));
    s.onStall();
    clock.advance(0);
    assert.deepEqual(passesAt, [0], 'the first pass runs at once');
    assert.equal(s.periodKind, 'normal');
    assert.equal(s.period, 10);
    clock.advance(9);
    assert.deepEqual(passesAt, [0]);
    clock.advance(1);
    assert.deepEqual(passesAt, [0, 10]);
    clock.advance(30);
    assert.deepEqual(passesAt, [0, 10, 20, 30, 40]);
  });

  test('idle: 100 ms after a pass that served and expired nothing', () => {
    const { clock, s, passesAt } = rig(() => ({ stats: stats({ served: 0, expired: 0, pushes: 0 }) }));
    s.onStall();
    clock.advance(0);
    assert.equal(s.periodKind, 'idle');
    assert.equal(s.period, 100);
    clock.advance(99);
    assert.deepEqual(passesAt, [0]);
    clock.advance(1);
    assert.deepEqual(passesAt, [0, 100]);
  });

  test('every channel full, nobody served: normal without a room signal (a consumer may be draining), waits for room with one', () => {
    const allFull = () => ({ stats: stats({ served: 0, expired: 0, pushes: 0, fullSkipped: 10_000 }) });
    const plain = rig(allFull);
    plain.s.onStall();
    plain.clock.advance(0);
    assert.equal(plain.s.periodKind, 'normal');
    assert.equal(plain.s.allFull, false);
    const signalled = rig(allFull, true);
    signalled.s.onStall();
    signalled.clock.advance(0);
    assert.equal(signalled.s.periodKind, 'room', 'issue 13 deliverable 6: nothing can move until a consumer reads');
    assert.equal(signalled.s.allFull, true);
    assert.equal(signalled.s.msUntilNextPass, 100, 'only the idle period timer (expiry) is armed');
    signalled.clock.advance(99);
    assert.deepEqual(signalled.passesAt, [0], 'no pass every 10 ms over channels that are all full');
    signalled.s.onRoom(); // a consumer took an event out of one
    assert.equal(signalled.s.periodKind, 'busy');
    assert.equal(signalled.s.allFull, false);
    signalled.clock.advance(0);
    assert.deepEqual(signalled.passesAt, [0, 99], 'the next pass comes at once (its busy gap elapsed long ago)');
  });

  test('room signal: a pass that left every owed member full waits for room, then runs one busy gap after the last', () => {
    // A draining cohort: the pass took 0.2 ms and left members owed with full channels.
    const r = rig(() => ({ stats: stats({ leftOwedFull: true }), takesMs: 0.2 }), true);
    r.s.onStall();
    r.clock.advance(0);
    assert.equal(r.s.periodKind, 'room', 'no busy timer over full channels');
    assert.equal(r.s.allFull, true, 'the worker may park on the room signal');
    assert.equal(r.s.msUntilNextPass, 100, 'only the idle-period timer is armed');
    r.clock.advance(50);
    assert.deepEqual(r.passesAt, [0], 'nothing runs while nobody reads');
    r.s.onRoom();
    assert.equal(r.s.periodKind, 'busy');
    assert.equal(r.s.allFull, false);
    r.clock.advance(0);
    assert.deepEqual(r.passesAt, [0, 50], 'room long after the busy gap: the pass runs at once');
    // Room right after a pass: the next one keeps the busy gap (1.8 ms: 0.2 ms at a tenth of the thread).
    r.s.onRoom();
    r.clock.advance(1.7);
    assert.equal(r.passesAt.length, 2, 'not before the busy gap');
    r.clock.advance(0.2);
    assert.equal(r.passesAt.length, 3);
    assert.ok(Math.abs(r.passesAt[2]! - (50 + 1.8)) < 1e-9, `at ${r.passesAt[2]}`);
  });

  test('room signal: without one, a pass that left owed members full keeps the KEP busy period', () => {
    const r = rig(() => ({ stats: stats({ leftOwedFull: true }), takesMs: 0.2 }), false);
    r.s.onStall();
    r.clock.advance(0);
    assert.equal(r.s.periodKind, 'busy');
    assert.equal(r.s.allFull, false);
    r.clock.advance(1.8);
    assert.equal(r.passesAt.length, 2);
  });

  test('room signal: a pass cut by a budget, the member cap, or owed with room again does not wait for room', () => {
    const cases: Partial<PassStats>[] = [
      { leftOwedFull: true, pushBudgetSpent: true },
      { leftOwedFull: true, scanBudgetSpent: true },
      { leftOwedFull: true, unserved: 3 },
      { leftOwedFull: true, leftOwedWithRoom: true },
      { scanBudgetSpent: true },
      { unserved: 1 },
    ];
    for (const over of cases) {
      const r = rig(() => ({ stats: stats(over), takesMs: 0.2 }), true);
      r.s.onStall();
      r.clock.advance(0);
      assert.equal(r.s.periodKind, 'busy', JSON.stringify(over));
      assert.equal(r.s.allFull, false, JSON.stringify(over));
      r.clock.advance(1.8);
      assert.equal(r.passesAt.length, 2, `${JSON.stringify(over)}: the next pass after the busy gap`);
    }
    // Alpha (no room signal) keeps the KEP's triggers: the scan budget or member cap alone is not busy.
    for (const over of [{ scanBudgetSpent: true }, { unserved: 1 }]) {
      const r = rig(() => ({ stats: stats(over) }), false);
      r.s.onStall();
      r.clock.advance(0);
      assert.equal(r.s.periodKind, 'normal', JSON.stringify(over));
    }
  });

  test('room signal: a new stall while waiting for room resets to normal', () => {
    const r = rig(() => ({ stats: stats({ leftOwedFull: true }) }), true);
    r.s.onStall();
    r.clock.advance(0);
    assert.equal(r.s.periodKind, 'room');
    r.clock.advance(5);
    r.s.onStall();
    assert.equal(r.s.periodKind, 'normal');
    r.clock.advance(5);
    assert.deepEqual(r.passesAt, [0, 10]);
  });

  test('a pass that only expired watchers is not idle', () => {
    const { clock, s } = rig(() => ({ stats: stats({ served: 0, expired: 1 }) }));
    s.onStall();
    clock.advance(0);
    assert.equal(s.periodKind, 'normal');
    assert.equal(s.period, 10);
  });

  test('busy: scaled from the pass duration to about a tenth of the thread, within [1, 10] ms', () => {
    const cases: [Partial<PassStats>, number, number][] = [
      [{ leftOwedFull: true }, 0.5, 4.5],
      [{ leftOwedFull: true }, 0.2, 1.8],
      [{ pushBudgetSpent: true }, 0.3, 2.7],
      [{ leftOwedFull: true }, 0, 1],
      [{ leftOwedFull: true }, 0.05, 1],
      [{ leftOwedFull: true }, 2, 10],
      [{ pushBudgetSpent: true }, 50, 10],
    ];
    for (const [over, takes, expected] of cases) {
      const { clock, s, passesAt } = rig(() => ({ stats: stats(over), takesMs: takes }));
      s.onStall();
      clock.advance(0);
      assert.equal(s.periodKind, 'busy', JSON.stringify(over));
      assert.ok(
        Math.abs(s.period - expected) < 1e-9,
        `pass of ${takes} ms -> period ${s.period}, expected ${expected}`,
      );
      const first = passesAt[0]!;
      // one busy period after the last pass started (or at once, if the pass itself took longer)
      const due = first + Math.max(expected, takes);
      clock.advance(Math.max(0, due - 0.01 - clock.now()));
      assert.equal(passesAt.length, 1, `no pass before ${due}`);
      clock.advance(0.01);
      assert.equal(passesAt.length, 2, `the next pass runs at ${due}`);
      assert.ok(Math.abs(passesAt[1]! - due) < 1e-9);
    }
  });

  test('the busy period uses the synchronous duration when the pass finishes later (retry rounds)', () => {
    const { clock, s, durations, finish } = rig(() => ({
      stats: stats({ leftOwedFull: true }),
      takesMs: 0.4,
      deferDone: true,
    }));
    s.onStall();
    clock.advance(0);
    assert.deepEqual(durations, [0.0004]);
    clock.bump(5); // the retry rounds end later
    finish();
    assert.ok(Math.abs(s.period - 3.6) < 1e-9, `period ${s.period}`);
  });

  test('a new stall resets the period to normal and re-arms the timer', () => {
    const { clock, s, passesAt } = rig(() => ({ stats: stats({ served: 0, expired: 0 }) }));
    s.onStall();
    clock.advance(0);
    assert.equal(s.period, 100);
    clock.advance(20);
    s.onStall();
    assert.equal(s.periodKind, 'normal');
    assert.equal(s.period, 10);
    clock.advance(0);
    assert.deepEqual(passesAt, [0, 20], 'lastPassAt + 10 is already past: runs now, not at 100');
  });

  test('afterDispatch runs a pass when the period elapsed, otherwise arms the timer', () => {
    const { clock, s, passesAt } = rig(() => ({ stats: stats() }));
    s.afterDispatch();
    assert.deepEqual(passesAt, [0], 'ran synchronously');
    clock.bump(4);
    s.afterDispatch();
    assert.deepEqual(passesAt, [0]);
    clock.advance(6);
    assert.deepEqual(passesAt, [0, 10]);
    clock.bump(15);
    s.afterDispatch();
    assert.deepEqual(passesAt, [0, 10, 25]);
  });

  test('no pass without work; none while a pass is still running; none after stop', () => {
    const r = rig(() => ({ stats: stats(), deferDone: true }));
    r.setWork(false);
    r.s.onStall();
    r.s.afterDispatch();
    r.clock.advance(1000);
    assert.deepEqual(r.passesAt, []);
    r.setWork(true);
    r.s.afterDispatch();
    assert.equal(r.passesAt.length, 1);
    r.clock.advance(50);
    r.s.afterDispatch();
    assert.equal(r.passesAt.length, 1, 'still running (retry rounds pending)');
    r.finish();
    r.clock.advance(10);
    assert.equal(r.passesAt.length, 2);
    r.finish();
    r.s.stop();
    r.clock.advance(1000);
    r.s.afterDispatch();
    r.s.onStall();
    r.clock.advance(1000);
    assert.equal(r.passesAt.length, 2);
  });
});

describe('pass periods in the cache (alpha)', () => {
  test('a stall runs a pass; an unserved full watcher keeps the period normal (it may be draining); a new stall resets to normal', async () => {
    const { cache, store, clock } = await setup({ mode: 'alpha' });
    const sp = stallPolicyOf(cache)!;
    const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
    await store.create(pod('a'));
    await store.create(pod('b')); // stalls
    await flush();
    await clock.advance(0);
    assert.equal(w.unsynced, true);
    assert.ok(sp.scheduler.passes >= 1);
    assert.equal(sp.scheduler.periodKind, 'normal', 'a watcher skipped for a full channel is not idleness');
    const w2 = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 1 }));
    await store.create(pod('c')); // w2 replays a, b from its initial state; c fills its channel
    await store.create(pod('d')); // w2 stalls
    await flush();
    assert.equal(w2.unsynced, true);
    assert.equal(sp.scheduler.periodKind, 'normal', 'a new stall resets the period');
    assert.equal(sp.scheduler.period, 10);
    w.stop();
    w2.stop();
    await cache.stop();
    const passes = sp.scheduler.passes;
    await clock.advance(1000);
    assert.equal(sp.scheduler.passes, passes, 'no pass after cache.stop()');
  });
});

describe('pass-scheduler idle rule: a draining watcher is not idle', () => {
  // KEP "When passes run": after a pass that left a member owed with a full channel ("that client
  // is draining") the period drops to busy; idle (100 ms) is for a pass that served and expired
  // nothing. A pass that finds the only unsynced watcher's channel still full (its client is
  // draining, slower than one busy period) serves nothing, so the next period is idle: the client
  // then gets about one channel's worth of events per 100 ms whatever its read rate.
  for (const mode of ['alpha', 'beta'] as const) {
    test(`${mode}: a client reading 1 event per 3 ms catches up on 300 events in well under 2x its read time`, async () => {
      const { cache, store, clock } = await setup({ mode, history: { lowerBound: 1000, upperBound: 1000 } });
      const w = asWatcher(cache.watch({ resourceVersion: '0', channelCapacity: 5 }));
      let cur = await store.create(pod('a'));
      for (let i = 1; i < 300; i++) cur = await store.update({ ...cur, spec: { i } });
      await flush();
      assert.equal(w.unsynced, true);
      const out: unknown[] = [];
      const t0 = clock.now();
      const reader = (async () => {
        for await (const e of w) {
          out.push(e);
          await clock.sleep(3);
        }
      })();
      while (out.length < 300 && clock.now() - t0 < 20_000) await clock.advance(10);
      const took = clock.now() - t0;
      w.stop();
      await cache.stop();
      await clock.advance(10);
      await reader;
      assert.equal(out.length, 300);
      assert.ok(took <= 1800, `caught up in ${took} virtual ms; reading alone takes 900`);
    });
  }
});
