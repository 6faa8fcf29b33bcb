/**
 * The server's open watch streams: a cap on how many may be open at once
 * (`maxWatches`; above it a new watch is answered 429 with Retry-After 1),
 * and the handle to end them all on shutdown.
 */
import type { WatchStream } from './watch-stream.js';

export const DEFAULT_MAX_WATCHES = 100_000;

export class WatchRegistry {
  readonly maxWatches: number;
  private readonly streams = new Set<WatchStream>();
  private reserved = 0;

  constructor(maxWatches: number = DEFAULT_MAX_WATCHES) {
    if (!Number.isInteger(maxWatches) || maxWatches < 1)
      throw new RangeError(`maxWatches must be an integer >= 1, got ${maxWatches}`);
    this.maxWatches = maxWatches;
  }

  /** Open watch streams (and reservations being set up). */
  get size(): number {
    return this.streams.size + this.reserved;
  }

  /** Reserve a slot before the watch starts; false when the cap is reached. */
  reserve(): boolean {
    if (this.size >= this.maxWatches) return false;
    this.reserved++;
    return true;
  }

  /** Give back a reservation that did not become a stream. */
  cancel(): void {
    this.reserved--;
  }

  /** Turn a reservation into a running stream; resolves when the stream is over. */
  async run(stream: WatchStream): Promise<void> {
    this.reserved--;
    this.streams.add(stream);
    try {
      await stream.run();
    } finally {
      this.streams.delete(stream);
    }
  }

  /** End every open watch cleanly (responses are ended, watchers stopped). */
  shutdownAll(): void {
    for (const s of this.streams) s.shutdown();
  }
}
