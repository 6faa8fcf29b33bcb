/**
 * Seeded randomness for the simulator (mulberry32): every simulated run is
 * reproducible from its scenario seed. Also a Zipf sampler over 0..n-1 for
 * skewed namespace / label / trigger-value popularity.
 */
export class Prng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A derived, independent stream (for one part of the run, so parts do not perturb each other). */
  fork(salt: number): Prng {
    return new Prng((Math.imul(this.s ^ salt, 0x9e3779b1) + salt) >>> 0);
  }

  /** Fisher-Yates shuffle of a copy. */
  shuffled<T>(items: readonly T[]): T[] {
    const a = items.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

/**
 * Zipf(s) over 0..n-1 by inverse CDF (a precomputed table, binary search):
 * s = 0 is uniform; s around 1 is the classic "few hot, long tail" shape.
 */
export class Zipf {
  readonly n: number;
  private readonly cdf: Float64Array;

  constructor(n: number, s: number) {
    this.n = n;
    this.cdf = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      sum += 1 / Math.pow(i + 1, s);
      this.cdf[i] = sum;
    }
    for (let i = 0; i < n; i++) this.cdf[i]! /= sum;
  }

  /** Probability of rank `i`. */
  weight(i: number): number {
    return i === 0 ? this.cdf[0]! : this.cdf[i]! - this.cdf[i - 1]!;
  }

  sample(r: Prng): number {
    const u = r.next();
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
