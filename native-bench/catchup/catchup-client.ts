/**
 * A catch-up client of the `catchup` suite: it opens a watch at the oldest
 * RV the history can serve and reads as fast as it can on the main thread
 * (yielding to the event loop every 32 events, as a socket writer would),
 * encoding each event as a server would (event.jsonLine). It counts as
 * resynced once it reads the live stream (neither unsynced nor replaying)
 * and has received an event at or above the RV current when it opened. A 410
 * ends it unresynced (it does not re-list: the suite counts 410s, it does not
 * hide them).
 */
import { setImmediate as immediate } from 'node:timers/promises';
import type { WatchCache } from '../../src/index.js';
import { asWatcher, type Watcher } from '../../src/watch/watcher.js';

export class CatchupClient {
  received = 0;
  expired = false;
  /** ms from the open to resync; -1 until then. */
  resyncMs = -1;
  readonly w: Watcher;
  private stopped = false;

  constructor(
    private readonly cache: WatchCache,
    fromRV: number,
    private readonly rvAtOpen: number,
    private readonly openedAt: number,
    channelCapacity: number,
  ) {
    this.w = asWatcher(cache.watch({ resourceVersion: String(fromRV), channelCapacity })); // it reads the unsynced flag
  }

  /** Settled when it resynced, got its 410, or was stopped. */
  async run(): Promise<void> {
    const metrics = this.cache.encodings;
    let sinceYield = 0;
    while (!this.stopped) {
      const r = await this.w.next();
      if (r.done) return;
      const ev = r.value;
      if (ev.type === 'ERROR') {
        this.expired = true;
        return;
      }
      ev.jsonLine(metrics);
      this.received++;
      if (ev.rv >= this.rvAtOpen && !this.w.unsynced && !this.w.replaying) {
        this.resyncMs = performance.now() - this.openedAt;
        return;
      }
      if (++sinceYield >= 32) {
        sinceYield = 0;
        await immediate();
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.w.stop();
  }
}
