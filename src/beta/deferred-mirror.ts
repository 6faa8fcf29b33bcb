/**
 * DeferredMirror: beta mirrors each event into the shared history ring
 * after the live path has delivered it, not before (issue 13: the healthy
 * watchers' latency). The ring is what the sync worker and remote consumers
 * read; the watchers the main thread serves never need it. So the msgpack
 * encode, ring append and publish of an event run after its dispatch, in a
 * microtask queued behind the consumers that dispatch woke: those consumers
 * have their event first, and the mirror packs the object while their
 * encoding of it has just brought it into the CPU caches (issue 13: packed
 * a turn later, after ~200 other events, the pack cost up to 2x). In event
 * order, exactly once each; the turn's setImmediate flushes anything a
 * microtask did not reach.
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
import type { KubeObject } from '../core/types.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import { channels } from '../observe/channels.js';
import { PendingFrame, type FrameSource } from '../wire/frame-source.js';
import type { RingMirror } from './ring-mirror.js';

export interface DeferredMirrorInit {
  clock: Clock;
  ring: RingMirror;
  /** The cache (the `mirror` observer channel's `cache`). */
  source: object;
  /** After every flush: the ring holds every dispatched event now (beta publishes its control block). */
  flushed: () => void;
}

export class DeferredMirror {
  private readonly clock: Clock;
  private readonly ring: RingMirror;
  private readonly source: object;
  private readonly flushed: () => void;
  /** Events not mirrored yet, in history order, each with its previous object's frame and its own pending one. */
  private events: WatchCacheEvent[] = [];
  private prevs: (FrameSource | undefined)[] = [];
  private frames: PendingFrame[] = [];
  /** The first event not mirrored yet (the microtasks mirror from here; a flush takes the rest). */
  private head = 0;
  private scheduled = false;
  private readonly flushSoon = (): void => {
    this.scheduled = false;
    this.flush();
  };
  /** One event, the oldest not mirrored yet (each dispatch queues one of these behind its consumers). */
  private readonly mirrorNext = (): void => {
    const i = this.head;
    const events = this.events;
    if (i >= events.length) return; // a flush took it already
    const prevs = this.prevs;
    const frames = this.frames;
    const event = events[i]!;
    const prev = prevs[i];
    const frame = frames[i]!;
    if (i + 1 === events.length) this.reset();
    else {
      this.head = i + 1;
      prevs[i] = undefined; // the previous object's frame: no longer needed here
    }
    this.mirrorOne(event, prev, frame);
    if (this.pending === 0) this.flushed(); // everything queued is in the ring: the control block may say so
  };
  /** For an object no event has carried (one from the initial list): the mirror encodes it when it needs the bytes. */
  readonly listedFrame = (object: KubeObject): PendingFrame => new PendingFrame(object);

  constructor(init: DeferredMirrorInit) {
    this.clock = init.clock;
    this.ring = init.ring;
    this.source = init.source;
    this.flushed = init.flushed;
  }

  /** Events waiting to be mirrored. */
  get pending(): number {
    return this.events.length - this.head;
  }

  /** Queue `event` (just appended to the history); returns the frame the flush will make for it. */
  later(event: WatchCacheEvent, prev: FrameSource | undefined): PendingFrame {
    const frame = new PendingFrame();
    this.events.push(event);
    this.prevs.push(prev);
    this.frames.push(frame);
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
   * After each dispatch: the oldest queued event is mirrored in a microtask
   * queued now, behind the consumers this dispatch woke (their continuations
   * were queued as it pushed), so they never wait for it; each event of a
   * store burst is mirrored after its own consumers. The turn's setImmediate
   * flushes whatever is left.
   */
  schedule(): void {
    if (this.pending === 0) return;
    queueMicrotask(this.mirrorNext);
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.clock.setImmediate !== undefined) this.clock.setImmediate(this.flushSoon);
    else this.clock.setTimeout(this.flushSoon, 0);
  }

  /** Mirror everything queued, in order, then report it (`flushed`). */
  flush(): void {
    if (this.pending > 0) {
      const events = this.events;
      const prevs = this.prevs;
      const frames = this.frames;
      const from = this.head;
      this.reset();
      for (let i = from; i < events.length; i++) this.mirrorOne(events[i]!, prevs[i], frames[i]!);
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
    this.head = 0;
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
