/**
 * MemoryStore's automatic compaction, like kube-apiserver compacting etcd
 * every 5 minutes: the change log is bounded by count, by bytes (the
 * estimated JSON size of each event's object) and by age. `excess` says how
 * many of the oldest log entries to drop after a write; the store then
 * compacts to the RV of the last one dropped (and records it: a watch from
 * below it fails as compacted, which the API answers as 410 Expired).
 *
 * Amortized O(1) per write: past a count or byte bound the log is cut to
 * 90% of it (not one entry per write), and age is checked at most once per
 * tenth of `maxAgeMs`.
 */

export interface CompactionLimits {
  /** Most log entries kept (default 100,000). */
  readonly maxEvents: number;
  /** Most bytes of logged objects kept (default 64 MiB). */
  readonly maxBytes: number;
  /** Oldest log entry kept, in ms (default 5 min). */
  readonly maxAgeMs: number;
}

export const DEFAULT_COMPACTION: CompactionLimits = Object.freeze({
  maxEvents: 100_000,
  maxBytes: 64 * 1024 * 1024,
  maxAgeMs: 5 * 60_000,
});

const CUT_TO = 0.9;

/** The log's sizes and times, oldest first, parallel to the store's log. */
export class LogBudget {
  private readonly limits: CompactionLimits;
  private at: number[] = [];
  private sizes: number[] = [];
  private bytes = 0;
  private nextAgeCheck = 0;

  constructor(limits: Partial<CompactionLimits> = {}) {
    const l = { ...DEFAULT_COMPACTION, ...limits };
    for (const [k, v] of Object.entries(l))
      if (!(typeof v === 'number' && v >= 1)) throw new RangeError(`compaction ${k} must be >= 1, got ${String(v)}`);
    this.limits = l;
  }

  /** Bytes of objects in the kept log. */
  get totalBytes(): number {
    return this.bytes;
  }

  add(now: number, bytes: number): void {
    this.at.push(now);
    this.sizes.push(bytes);
    this.bytes += bytes;
  }

  /** How many of the oldest entries to drop now (at most `droppable`: entries not yet delivered stay). */
  excess(now: number, droppable: number): number {
    const n = this.at.length;
    let drop = 0;
    if (n > this.limits.maxEvents) drop = n - Math.floor(this.limits.maxEvents * CUT_TO);
    if (this.bytes > this.limits.maxBytes) {
      let b = this.bytes;
      let d = 0;
      while (d < n && b > this.limits.maxBytes * CUT_TO) b -= this.sizes[d++]!;
      drop = Math.max(drop, d);
    }
    if (now >= this.nextAgeCheck) {
      this.nextAgeCheck = now + this.limits.maxAgeMs / 10;
      let d = 0;
      while (d < n && now - this.at[d]! > this.limits.maxAgeMs) d++;
      drop = Math.max(drop, d);
    }
    return Math.min(drop, droppable);
  }

  /** The store dropped the `count` oldest entries. */
  dropped(count: number): void {
    if (count <= 0) return;
    for (let i = 0; i < count && i < this.sizes.length; i++) this.bytes -= this.sizes[i]!;
    this.at = this.at.slice(count);
    this.sizes = this.sizes.slice(count);
  }
}
