/**
 * DeferredMirror: beta mirrors each event into the shared history ring
 * after the live path has delivered it, not before (issue 13: the healthy
 * watchers' latency). The ring is what the sync worker and remote consumers
 * read; the watchers the main thread serves never need it. So the msgpack
 * encode, ring append and publish of the turn's events run once the turn's
 * consumers have had them: in one setImmediate per turn, after the
 * microtasks, in event order, exactly once each.
 *
 * Not in a microtask per event: a writer's burst of k events dispatches all
 * k before any consumer runs, and a consumer's continuation for event 2
 * (its next() awaited after event 1) is queued behind every microtask the
 * burst queued, so k mirrors (~15-25 µs each) ran ahead of each event after
 * the first (issue 13: a burst of 50 reached a healthy watcher 2.5 ms after
 * its write, against 1.2 ms in alpha; 1.3 ms now). A burst later the pack
 * costs about what it did right after each consumer (21-25 µs against
 * 18-24 µs per event, same spike): the turn's objects are still cached.
 *
 * But not a whole long burst at the turn's end: once MAX_DEFERRED_EVENTS
 * wait, the next event mirrors them before it is queued (`later`, in that
 * event's ingest step 4, before its dispatch). A closed-loop writer's turn of 200 updates left the
 * first of them out of the CPU caches by the time the setImmediate came,
 * and the mirror then cost 16-23 µs per event against ~12 µs with a bound
 * (throughput trigger-1k, beta; the pack alone is ~10 µs in the caches).
 * A consumer of such a burst waits for at most that many mirrors (~0.8 ms)
 * before its first event; a writer at a steady rate never queues that many.
 *
 * Who needs the ring first, and how they get it:
 * - the sync worker: it sees the control block's last dispatched RV only
 *   after the events up to it are published (`flushed` publishes the
 *   control block), and every adopt flushes first (BetaSync), so a watcher
 *   handed over at X − 1 finds X in the ring;
 * - a consumer in another thread reads each pushed reference from the ring:
 *   while one exists the mirror runs before the dispatch again (`now`);
 * - a relist restarts the ring: BetaSync flushes before it.
 *
 * The frame that carries each event's object is made here too (encode
 * once): the object state keeps the event's PendingFrame
 * (src/wire/frame-source.ts), which the mirror fills in with the ring event
 * that carries it; the next event on the same object references it there as
 * its previous object's frame.
 */
import type { Clock } from '../core/clock.js';
import { NextTurn } from '../core/next-turn.js';
import type { KubeObject } from '../core/types.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import { channels } from '../observe/channels.js';
import { PendingFrame, type FrameSource } from '../wire/frame-source.js';
import type { RingMirror } from './ring-mirror.js';

/**
 * Events the mirror may leave waiting for the turn's end; the next event has them all mirrored before it
 * is queued (module doc: their objects are still in the CPU caches then). 64 2 KiB pods,
 * their JSON lines and the rest of their events' objects stay within a core's 1 MiB L2 here; 32 cut
 * the mirror's time no further (throughput trigger-1k), and the KEP writer's bursts (at most 50 events)
 * stay whole.
 */
export const MAX_DEFERRED_EVENTS = 64;

export interface DeferredMirrorInit {
  clock: Clock;
  ring: RingMirror;
  /** The cache (the `mirror` observer channel's `cache`). */
  source: object;
  /** After every flush: the ring holds every dispatched event now (beta publishes its control block). */
  flushed: () => void;
}

export class DeferredMirror {
  private readonly ring: RingMirror;
  private readonly source: object;
  private readonly flushed: () => void;
  /** Events not mirrored yet, in history order, each with its previous object's frame and its own pending one. */
  private events: WatchCacheEvent[] = [];
  private prevs: (FrameSource | undefined)[] = [];
  private frames: PendingFrame[] = [];
  /** The turn's flush (one pending at a time). */
  private readonly flushSoon: NextTurn;
  /** For an object no event has carried (one from the initial list): the mirror encodes it when it needs the bytes. */
  readonly listedFrame = (object: KubeObject): PendingFrame => new PendingFrame(object);

  constructor(init: DeferredMirrorInit) {
    this.ring = init.ring;
    this.source = init.source;
    this.flushed = init.flushed;
    this.flushSoon = new NextTurn(init.clock, () => this.flush());
  }

  /** Events waiting to be mirrored. */
  get pending(): number {
    return this.events.length;
  }

  /**
   * Queue `event` (just appended to the history, not dispatched yet); returns the frame the flush will
   * make for it. When MAX_DEFERRED_EVENTS wait already, they are mirrored first (a long burst's objects
   * would have left the CPU caches by the turn's end); the turn's setImmediate mirrors what follows.
   */
  later(event: WatchCacheEvent, prev: FrameSource | undefined): PendingFrame {
    if (this.pending >= MAX_DEFERRED_EVENTS) this.flush(); // in order, each once, before this one
    const frame = new PendingFrame();
    this.events.push(event);
    this.prevs.push(prev);
    this.frames.push(frame);
    // The turn's flush, from the first event on: a live-first batch whose walk goes on for many turns
    // (dispatcher.ts) reports its dispatch (afterDispatch, `schedule`) only once it is walked, and the
    // events queued meanwhile were mirrored 64 at a time, before the 65th event's dispatch (100,000 stalled:
    // ~1.2 ms every 64 events).
    this.flushSoon.schedule();
    return frame;
  }

  /** Mirror `event` now, after whatever is queued (the ring's order is the history's). */
  now(event: WatchCacheEvent, prev: FrameSource | undefined): PendingFrame {
    if (this.pending > 0) this.flush();
    const frame = new PendingFrame();
    this.mirrorOne(event, prev, frame);
    return frame;
  }

  /**
   * After each dispatch: what is queued is mirrored in the turn's
   * setImmediate, behind every consumer the turn's dispatches woke and the
   * events they go on to read, so none of them waits for it.
   */
  schedule(): void {
    if (this.pending !== 0) this.flushSoon.schedule();
  }

  /** Mirror everything queued, in order, then report it (`flushed`). */
  flush(): void {
    if (this.pending > 0) {
      const events = this.events;
      const prevs = this.prevs;
      const frames = this.frames;
      this.reset();
      for (let i = 0; i < events.length; i++) this.mirrorOne(events[i]!, prevs[i], frames[i]!);
    }
    this.flushed();
  }

  /** The cache stopped: nothing reads the ring any more. */
  drop(): void {
    this.reset();
  }

  private reset(): void {
    this.events = [];
    this.prevs = [];
    this.frames = [];
  }

  /** Mirror one event; `frame` (the object state's already) gets the ring event that carries it. */
  private mirrorOne(event: WatchCacheEvent, prev: FrameSource | undefined, frame: PendingFrame): void {
    if (!channels.mirror.hasSubscribers) {
      this.ring.appended(event, prev, frame);
      return;
    }
    const t0 = performance.now(); // timed only while someone listens
    this.ring.appended(event, prev, frame);
    channels.mirror.publish({ cache: this.source, rv: event.rv, durationMs: performance.now() - t0 });
  }
}
