/**
 * NumberRows: rows of a fixed number of Float64 fields, appended one row at
 * a time and taken out as one Float64Array: how the main thread tells the
 * sync worker about many watchers at once (introductions, adopts, forgets;
 * issue 13, deliverable 1). Appending writes numbers into a buffer that
 * grows by doubling, so a mass stall builds no object and no JS array per
 * watcher; `take` hands out a right-sized copy to post (postMessage copies
 * it again: a transfer would detach an ArrayBuffer, SyncWorkerLink.post) and
 * keeps the buffer for the next batch.
 */
export class NumberRows {
  /** Numbers per row. */
  readonly width: number;
  private data: Float64Array;
  private used = 0;

  constructor(width: number, initialRows = 64) {
    if (width < 1 || width > 5) throw new RangeError(`a row has 1 to 5 fields, not ${width}`);
    this.width = width;
    this.data = new Float64Array(width * initialRows);
  }

  /** Rows appended since the last `take` (or `clear`). */
  get rows(): number {
    return this.used / this.width;
  }

  /**
   * Append one row: its first `width` fields of (a, b, c, d, e) (a row has
   * at most five; no rest array, so a row costs only its stores).
   */
  add(a: number, b = 0, c = 0, d = 0, e = 0): void {
    if (this.used + this.width > this.data.length) this.grow();
    const data = this.data;
    const u = this.used;
    const w = this.width;
    data[u] = a;
    if (w > 1) data[u + 1] = b;
    if (w > 2) data[u + 2] = c;
    if (w > 3) data[u + 3] = d;
    if (w > 4) data[u + 4] = e;
    this.used = u + w;
  }

  /** The rows appended so far, in order, as an array of their own; the buffer is empty again. */
  take(): Float64Array<ArrayBuffer> {
    const out = this.data.slice(0, this.used);
    this.used = 0;
    return out;
  }

  /** Drop every row (a worker restart: the new worker hears of each watcher again). */
  clear(): void {
    this.used = 0;
  }

  private grow(): void {
    const grown = new Float64Array(Math.max(this.data.length * 2, this.width * 64));
    grown.set(this.data.subarray(0, this.used));
    this.data = grown;
  }
}
