/**
 * The leaf client of the proxy benchmark: a watch client with client-go's behaviour on ends
 * (re-watch from its last RV after a clean end, re-list after a 410), healthy (reads everything,
 * records write -> receipt latency) or slow (reads at most `rate` events/s). The plain requests
 * it and the writer send are in lib/pod-http.ts.
 */
import type { Agent } from 'node:http';
import type { LatencyRecorder } from '../lib/hist.js';
import { listRV, openPodWatch, readLines, recordMark } from '../lib/pod-http.js';

export interface ClientStats {
  lines: number;
  reconnects: number;
  relists: number;
}

/**
 * A watch client with client-go's behaviour on ends: after a clean end (a force-close) it
 * re-watches from its last RV, after a 410 it re-lists and watches from the list RV. A healthy
 * client (`rate` Infinity) reads everything and records write -> receipt latency; a slow one
 * reads at most `rate` events/s.
 */
export class WatchClient {
  private rv: string;
  private stopped = false;
  constructor(
    private readonly agent: Agent,
    private readonly url: string,
    rv: string,
    private readonly rate: number,
    private readonly stats: ClientStats,
    private readonly latency: LatencyRecorder | undefined,
  ) {
    this.rv = rv;
  }

  start(): void {
    if (this.stopped) return;
    let expired = false;
    openPodWatch(
      this.url,
      this.rv,
      (res) => {
        let budgetStart = performance.now();
        let read = 0;
        readLines(
          res,
          (line) => {
            this.stats.lines++;
            read++;
            if (line.startsWith('{"type":"ERROR"')) {
              expired = line.includes('"code":410');
              return;
            }
            const m = /"resourceVersion":"(\d+)"/.exec(line);
            if (m !== null) this.rv = m[1]!;
            if (this.latency !== undefined) recordMark(line, this.latency);
          },
          () => {
            if (this.rate === Infinity) return;
            // Read no faster than `rate`: pause until the budget allows what was read.
            const aheadMs = (read / this.rate) * 1000 - (performance.now() - budgetStart);
            if (aheadMs > 5) {
              res.pause();
              setTimeout(() => res.resume(), aheadMs);
            }
            if (performance.now() - budgetStart > 1000) {
              budgetStart = performance.now();
              read = 0;
            }
          },
        );
      },
      () => {
        if (this.stopped) return;
        if (expired) void this.relist();
        else {
          this.stats.reconnects++;
          setTimeout(() => this.start(), 10);
        }
      },
    );
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    this.stats.relists++;
    try {
      this.rv = await listRV(this.agent, this.url);
    } catch {
      // the proxy is busy or away: re-list again shortly
      setTimeout(() => void this.relist(), 500);
      return;
    }
    this.start();
  }

  stop(): void {
    this.stopped = true;
  }
}
