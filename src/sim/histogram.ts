/**
 * LatencyHistogram: a log-bucketed histogram of non-negative values (ms),
 * ~2.5% relative resolution from 1 µs to 10^7 ms, exact count, sum, min and
 * max. Constant memory and cheap to record, mergeable, and serializable to
 * plain JSON so results cross threads (piscina) and files.
 */

const FLOOR_MS = 0.001; // values below 1 µs (virtual time: often exactly 0) land in bucket 0
const GROWTH = 1.025;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = 1 + Math.ceil(Math.log(1e7 / FLOOR_MS) / LOG_GROWTH);

export interface Percentiles {
  count: number;
  mean: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** Plain-JSON form: sparse [bucketIndex, count] pairs. */
export interface HistogramJSON {
  count: number;
  sum: number;
  min: number;
  max: number;
  buckets: [number, number][];
}

export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  count = 0;
  sum = 0;
  min = Infinity;
  max = 0;

  record(ms: number): void {
    const v = ms > 0 ? ms : 0;
    this.counts[bucketOf(v)]!++;
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  merge(other: LatencyHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.sum += other.sum;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
  }

  /** The value at quantile q in [0, 1] (the bucket's upper edge, clamped to the exact max). */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(this.max, upperEdge(i));
    }
    return this.max;
  }

  percentiles(): Percentiles {
    return {
      count: this.count,
      mean: this.count === 0 ? 0 : this.sum / this.count,
      p50: this.quantile(0.5),
      p99: this.quantile(0.99),
      p999: this.quantile(0.999),
      max: this.count === 0 ? 0 : this.max,
    };
  }

  /** Points of the CDF: [value (bucket upper edge, ms), cumulative fraction], one per non-empty bucket. */
  cdf(): [number, number][] {
    const out: [number, number][] = [];
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const c = this.counts[i]!;
      if (c === 0) continue;
      seen += c;
      out.push([Math.min(this.max, upperEdge(i)), seen / this.count]);
    }
    return out;
  }

  toJSON(): HistogramJSON {
    const buckets: [number, number][] = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]! > 0) buckets.push([i, this.counts[i]!]);
    return { count: this.count, sum: this.sum, min: this.count === 0 ? 0 : this.min, max: this.max, buckets };
  }

  static fromJSON(json: HistogramJSON): LatencyHistogram {
    const h = new LatencyHistogram();
    for (const [i, c] of json.buckets) h.counts[i] = c;
    h.count = json.count;
    h.sum = json.sum;
    h.min = json.count === 0 ? Infinity : json.min;
    h.max = json.max;
    return h;
  }
}

function bucketOf(v: number): number {
  if (v < FLOOR_MS) return 0;
  const i = 1 + Math.floor(Math.log(v / FLOOR_MS) / LOG_GROWTH);
  return i < BUCKETS ? i : BUCKETS - 1;
}

function upperEdge(i: number): number {
  return i === 0 ? 0 : FLOOR_MS * Math.pow(GROWTH, i);
}
