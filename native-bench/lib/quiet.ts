/**
 * untilQuiet: wait until this process's threads are idle, by the process's
 * own CPU time (all its threads: the main thread, worker threads, V8's
 * compiler and GC helpers), before a bench times something on the main
 * thread. Other processes on the machine do not count.
 *
 * Why: a bench round that makes a fresh beta cache starts a fresh sync
 * worker thread, which spends some 100–250 ms of CPU parsing and compiling
 * its modules. On a 2-vCPU machine that boot overlapped the live-dispatch
 * bench's timed events and took the main thread's core half the time: beta's
 * figure measured the boot, not the dispatch (issue 13, deliverable 1: the
 * main thread's dispatch CPU was the same in both modes by profile).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { selfCpuMs } from './memory.js';

export interface QuietOptions {
  /** Length of one measuring window (ms). */
  windowMs?: number;
  /** Quiet: the process used at most this share of one core over a window. */
  maxShare?: number;
  /** Consecutive quiet windows needed. */
  windows?: number;
  /** Give up after this long (ms). */
  capMs?: number;
  /** Names the caller in the line written to stderr when it gives up (none without a label). */
  label?: string;
}

/** What untilQuiet saw: whether the process became quiet, and after how long. */
export interface QuietResult {
  quiet: boolean;
  waitedMs: number;
}

/** Resolve once the process has been quiet for `windows` consecutive windows, or after `capMs` (quiet false). */
export async function untilQuiet(o: QuietOptions = {}): Promise<QuietResult> {
  const windowMs = o.windowMs ?? 50;
  const maxShare = o.maxShare ?? 0.2;
  const needed = o.windows ?? 2;
  const capMs = o.capMs ?? 5000;
  const t0 = performance.now();
  let run = 0;
  while (run < needed) {
    const waited = performance.now() - t0;
    if (waited >= capMs) {
      if (o.label !== undefined) console.error(`${o.label}: not quiet after ${waited.toFixed(0)} ms`);
      return { quiet: false, waitedMs: waited };
    }
    const cpu0 = selfCpuMs();
    const w0 = performance.now();
    await sleep(windowMs);
    const share = (selfCpuMs() - cpu0) / (performance.now() - w0);
    run = share <= maxShare ? run + 1 : 0;
  }
  return { quiet: true, waitedMs: performance.now() - t0 };
}
