/**
 * PassReport: what one observed sync pass tells the observer channels
 * (docs/observability.md). Made only while `watchcache:pass-start` or
 * `watchcache:pass-work` has subscribers: the pass publishes its members as
 * it starts, and the work it did (intervals opened, events scanned and
 * pushed, real time) at the end of each synchronous stretch (the pass
 * itself, each retry round), and once more, marked `ended`, just before it
 * reports its stats; and each member it resyncs, just before the host does.
 */
import { channels } from '../observe/channels.js';
import type { PassMember, PassStats } from './sync-pass.js';

export class PassReport {
  private readonly source: object;
  private readonly stats: PassStats;
  private opens = 0;
  private scanned = 0;
  private pushes = 0;
  private since = performance.now();

  constructor(source: object, stats: PassStats) {
    this.source = source;
    this.stats = stats;
  }

  /** The pass starts over `members` (a copy it then walks); returns them. */
  started<M extends PassMember>(members: M[], oldestServableRV: number | undefined): M[] {
    if (channels.passStart.hasSubscribers)
      channels.passStart.publish({ cache: this.source, members, oldestServableRV });
    return members;
  }

  /** The pass resyncs `member` (published before the host's resync). */
  resyncing(member: PassMember): void {
    if (channels.passResync.hasSubscribers) channels.passResync.publish({ cache: this.source, member });
  }

  /** Run one deferred retry round, then report its stretch. */
  stretch(fn: () => void): void {
    this.since = performance.now();
    fn();
    this.stretchEnded();
  }

  /** A synchronous stretch of the pass ends. */
  stretchEnded(): void {
    this.publish(false);
  }

  /** The pass ends (published before its stats go to the caller). */
  ended(): void {
    this.publish(true);
  }

  private publish(ended: boolean): void {
    const s = this.stats;
    const message = {
      cache: this.source,
      opens: s.cohorts - this.opens,
      scanned: s.scanned - this.scanned,
      pushes: s.pushes - this.pushes,
      durationMs: performance.now() - this.since,
      ended: ended ? s : undefined,
    };
    this.opens = s.cohorts;
    this.scanned = s.scanned;
    this.pushes = s.pushes;
    if (channels.passWork.hasSubscribers) channels.passWork.publish(message);
  }
}
