/**
 * The watch clients of the KEP benchmark, all in-process and on the main
 * thread, as a single-threaded server's stream writers would be:
 *
 * - HealthyClient reads every event as soon as it is pushed, records write ->
 *   receipt latency, and encodes it as a server would (event.jsonLine).
 * - SlowClient is slow during the stall phase: `stalled` reads nothing,
 *   `rate` reads at a fixed rate; in the resume phase it reads as fast as it
 *   can. Like client-go, when its stream ends (off mode's force-close) it
 *   reconnects at once from the last RV it received, and after a 410 it
 *   re-lists (a list at RV 0) and watches from the current RV. Its resync
 *   time is the time from the resume until it is synced, reading the live
 *   stream, and has received an event at or above the RV current at resume.
 *
 * Slow clients yield to the event loop every 32 events (a socket write
 * would), so none can starve timers with an endless microtask chain while it
 * replays a backlog. The healthy client reads only live events, so its loop
 * always comes back to a pending next(); it does not yield (yielding would
 * queue it behind every slow client's setImmediate and inflate its tail).
 */
import { setImmediate as immediate } from 'node:timers/promises';
import type { WatchCache, WatchEvent } from '../../src/index.js';
import { asWatcher, type Watcher } from '../../src/watch/watcher.js';
import { LatencyRecorder } from '../lib/hist.js';
import type { SlowVariant } from '../lib/types.js';
import type { SendTimes } from './writer.js';

export type Phase = 'warmup' | 'stall' | 'resume' | 'stopped';

/** Shared state of one run. */
export class KepContext {
  phase: Phase = 'warmup';
  resumeAt = 0;
  rvAtResume = Infinity;
  /**
   * The RV current when the stall phase's second half began (kep-bench.ts): by then every slow channel
   * is full, so healthy events above it show the steady state with N stalled watchers, without the fill
   * (the live pushes into N channels until they are full). Infinity until then.
   */
  rvFilled = Infinity;
  readonly resumed: Promise<void>;
  readonly pacer = new Pacer(10);
  forceClosedHealthy = 0;
  private release!: () => void;

  constructor(
    readonly cache: WatchCache,
    readonly channelCapacity: number,
    readonly variant: SlowVariant,
    readonly slowReadRate: number,
  ) {
    this.resumed = new Promise((r) => (this.release = r));
  }

  watch(resourceVersion: string): Watcher {
    return asWatcher(this.cache.watch({ resourceVersion, channelCapacity: this.channelCapacity })); // the bench reads its unsynced flag
  }

  resume(): void {
    this.resumeAt = performance.now();
    this.rvAtResume = this.cache.resourceVersion;
    this.phase = 'resume';
    this.release();
  }

  get stopped(): boolean {
    return this.phase === 'stopped';
  }

  stop(): void {
    this.phase = 'stopped';
    this.pacer.stop();
    this.release();
  }
}

/** A timer wheel (one interval for all clients) that wakes rate-limited readers. */
class Pacer {
  private readonly slots = new Map<number, (() => void)[]>();
  private done = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly tickMs: number) {}

  /** Resolve at (or just after) performance.now() >= atMs. */
  sleepUntil(atMs: number): Promise<void> {
    const slot = Math.ceil(atMs / this.tickMs);
    if (this.timer === undefined) {
      this.done = Math.floor(performance.now() / this.tickMs);
      this.timer = setInterval(() => this.tick(), this.tickMs);
    }
    return new Promise((resolve) => {
      if (slot <= this.done) return resolve();
      let list = this.slots.get(slot);
      if (list === undefined) this.slots.set(slot, (list = []));
      list.push(resolve);
    });
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const list of this.slots.values()) for (const r of list) r();
    this.slots.clear();
  }

  private tick(): void {
    const now = Math.floor(performance.now() / this.tickMs);
    for (let s = this.done + 1; s <= now; s++) {
      const list = this.slots.get(s);
      if (list === undefined) continue;
      this.slots.delete(s);
      for (const r of list) r();
    }
    this.done = now;
  }
}

export class HealthyClient {
  readonly all = new LatencyRecorder();
  readonly stall = new LatencyRecorder();
  /** The stall phase's events above ctx.rvFilled only: N watchers stalled, their channels full. */
  readonly stalled = new LatencyRecorder();
  readonly resume = new LatencyRecorder();
  received = 0;
  w: Watcher;

  constructor(
    private readonly ctx: KepContext,
    private readonly sendTimes: SendTimes,
  ) {
    this.w = ctx.watch(String(ctx.cache.resourceVersion));
  }

  async run(): Promise<void> {
    const metrics = this.ctx.cache.encodings;
    let sinceYield = 0;
    for (;;) {
      const r = await this.w.next();
      const now = performance.now();
      if (this.ctx.stopped) return;
      if (r.done) {
        this.ctx.forceClosedHealthy++;
        this.w = this.ctx.watch(String(this.ctx.cache.resourceVersion));
        continue;
      }
      const ev = r.value;
      if (ev.type !== 'MODIFIED' && ev.type !== 'ADDED') continue;
      ev.jsonLine(metrics);
      this.received++;
      const phase = this.ctx.phase;
      if (phase === 'stall' || phase === 'resume') {
        const ms = now - this.sendTimes.at(ev.rv);
        this.all.recordMs(ms);
        if (ev.rv > this.ctx.rvAtResume) this.resume.recordMs(ms);
        else {
          this.stall.recordMs(ms);
          if (ev.rv > this.ctx.rvFilled) this.stalled.recordMs(ms);
        }
      }
      // Only a safety valve: its channel empties as fast as this thread fills it, so the loop awaits
      // a pending next() long before this. Yielding more often would queue it behind other clients.
      if (++sinceYield >= 100_000) {
        sinceYield = 0;
        await immediate();
      }
    }
  }
}

export class SlowClient {
  received = 0;
  reconnects = 0;
  expired = 0;
  /** ms from the resume to resync on its own stream; -1 until then (or when it never did). */
  resyncMs = -1;
  /** ms from the resume until it read the live stream again on a re-opened watch; -1 until then. */
  caughtUpMs = -1;
  w: Watcher;
  private lastRV: number;
  private nextReadAt = 0;
  /** When it last finished a batch while behind in the resume phase (-1: none yet). */
  private lastServedAt = -1;
  private longestWaitMs = 0;

  constructor(private readonly ctx: KepContext) {
    this.lastRV = ctx.cache.resourceVersion;
    this.w = ctx.watch(String(this.lastRV));
  }

  /**
   * KEP measurement 4 (no starvation), as this client saw it: the longest time it went without being
   * served while it was behind in the resume phase (it reads as fast as it can then, so it always has
   * room): from the resume to its first batch of 32 events, between two batches (its yields: a wait is
   * accurate to one batch's reading time, tens of µs), and, if it has not caught up by `nowMs`, from its
   * last batch to `nowMs`. A watcher the passes never serve waits the whole phase.
   */
  longestWaitInResumeMs(nowMs: number): number {
    if (this.ctx.resumeAt === 0) return 0; // the resume has not begun
    const behind = this.resyncMs < 0 && this.caughtUpMs < 0;
    const since = this.lastServedAt < 0 ? this.ctx.resumeAt : this.lastServedAt;
    return behind ? Math.max(this.longestWaitMs, nowMs - since) : this.longestWaitMs;
  }

  /** The RV of the last event it read (where its stream stands, for the resync accounting). */
  get lastReceivedRV(): number {
    return this.lastRV;
  }

  async run(): Promise<void> {
    const ctx = this.ctx;
    const metrics = ctx.cache.encodings;
    const interval = ctx.slowReadRate > 0 ? 1000 / ctx.slowReadRate : Infinity;
    let sinceYield = 0;
    let relist = false;
    for (;;) {
      if (ctx.phase === 'stall' || ctx.phase === 'warmup') {
        if (ctx.variant === 'stalled' || interval === Infinity) await ctx.resumed;
        else {
          const now = performance.now();
          this.nextReadAt = Math.max(this.nextReadAt + interval, now - interval);
          if (this.nextReadAt > now) await ctx.pacer.sleepUntil(this.nextReadAt);
        }
      }
      if (ctx.stopped) return;
      const r = await this.w.next();
      if (ctx.stopped) return;
      if (r.done) {
        await this.reconnect(relist);
        relist = false;
        continue;
      }
      const ev: WatchEvent = r.value;
      if (ev.type === 'ERROR') {
        this.expired++;
        relist = true; // the stream ends after its 410: re-list, then watch from now
        continue;
      }
      ev.jsonLine(metrics);
      this.received++;
      this.lastRV = ev.rv;
      if (
        this.resyncMs < 0 &&
        this.caughtUpMs < 0 &&
        ctx.phase === 'resume' &&
        ev.rv >= ctx.rvAtResume &&
        !this.w.unsynced &&
        !this.w.replaying
      ) {
        // A resync is on the same stream (KEP); a stream that ended and was re-opened (off's force-close,
        // a re-list after a 410) caught up as a new watch, which is not a resync.
        const now = performance.now();
        this.served(now); // its last wait ends here
        if (this.reconnects === 0) this.resyncMs = now - ctx.resumeAt;
        else this.caughtUpMs = now - ctx.resumeAt;
      }
      if (++sinceYield >= 32) {
        sinceYield = 0;
        // One clock read per batch, not per event (the resume phase is bound by this thread's reads).
        if (ctx.phase === 'resume' && this.resyncMs < 0 && this.caughtUpMs < 0) this.served(performance.now());
        await immediate();
      }
    }
  }

  /** It was served up to `now` (a batch of events read, measurement 4): the wait since the last batch. */
  private served(now: number): void {
    const waited = now - (this.lastServedAt < 0 ? this.ctx.resumeAt : this.lastServedAt);
    if (waited > this.longestWaitMs) this.longestWaitMs = waited;
    this.lastServedAt = now;
  }

  private async reconnect(relist: boolean): Promise<void> {
    this.reconnects++;
    if (relist) {
      const list = await this.ctx.cache.list({ resourceVersion: '0' });
      this.lastRV = Number(list.metadata.resourceVersion);
    }
    if (this.ctx.stopped) return;
    this.w = this.ctx.watch(String(this.lastRV));
  }
}
