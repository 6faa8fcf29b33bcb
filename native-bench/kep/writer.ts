/**
 * A writer at a fixed rate on the real clock: every ~1 ms it issues the
 * updates that are due since it started (at most `maxBurst` per tick, like a
 * client with a bounded pipeline), and records for each write its send time
 * (by RV, for write -> receipt latency) and how late it was against its
 * schedule (writer lag: how long the main thread kept it from running).
 */
import type { KubeObject, MemoryStore } from '../../src/index.js';
import { LatencyRecorder } from '../lib/hist.js';
import { podUpdate } from '../lib/pod.js';

/** Send times by RV: a ring of 2^20 entries indexed by rv & SEND_MASK. */
const SEND_MASK = (1 << 20) - 1;

export class SendTimes {
  readonly ms = new Float64Array(SEND_MASK + 1);
  at(rv: number): number {
    return this.ms[rv & SEND_MASK]!;
  }
}

export interface FixedRateWriterOptions {
  store: MemoryStore;
  pods: readonly KubeObject[];
  rate: number;
  sendTimes: SendTimes;
  maxBurst?: number;
}

export class FixedRateWriter {
  written = 0;
  readonly lag = new LatencyRecorder();
  private readonly o: FixedRateWriterOptions;
  private readonly maxBurst: number;
  private seq = 0;
  private t0 = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: FixedRateWriterOptions) {
    this.o = options;
    this.maxBurst = options.maxBurst ?? 50;
  }

  /** Write `n` updates now, as fast as possible (warm-up; not timed). */
  burst(n: number): void {
    for (let i = 0; i < n; i++) this.writeOne(performance.now());
  }

  start(): void {
    this.t0 = performance.now();
    this.seq = 0;
    const tick = (): void => {
      const now = performance.now();
      const due = Math.floor(((now - this.t0) * this.o.rate) / 1000);
      let n = 0;
      while (this.seq < due && n < this.maxBurst) {
        const scheduled = this.t0 + (this.seq * 1000) / this.o.rate;
        const t = performance.now();
        this.lag.recordMs(t - scheduled);
        this.writeOne(t);
        this.seq++;
        n++;
      }
      this.timer = setTimeout(tick, 1);
    };
    this.timer = setTimeout(tick, 1);
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private writeOne(t: number): void {
    const pods = this.o.pods;
    const k = this.written % pods.length;
    // MemoryStore commits synchronously inside update(): its RV is known right after the call.
    this.o.store.update(podUpdate(pods[k]!, this.written, t)).catch((err: unknown) => {
      console.error('bench writer: update failed', err);
    });
    this.o.sendTimes.ms[this.o.store.resourceVersion & SEND_MASK] = t;
    this.written++;
  }
}
