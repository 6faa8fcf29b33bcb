/**
 * Memory and CPU probes for the benches: a full GC on demand (works without
 * --expose-gc), heap/RSS snapshots in MiB, a periodic sampler that records
 * the peak RSS and a time series, and /proc readers for another process
 * (etcd's CPU and RSS).
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { MemorySample } from './types.js';

const MiB = 1024 * 1024;

let gcFn: (() => void) | undefined;

/** A full, synchronous garbage collection. */
export function fullGc(): void {
  if (gcFn === undefined) {
    const g = (globalThis as { gc?: () => void }).gc;
    if (typeof g === 'function') gcFn = g;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
  gcFn();
}

export interface MemorySnapshot {
  heapUsed: number;
  rss: number;
}

export function snapshot(): MemorySnapshot {
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, rss: m.rss };
}

export function toMiB(bytes: number): number {
  return bytes / MiB;
}

/** Samples heap and RSS every `periodMs` (unref'd timer); keeps the peak RSS. */
export class MemorySampler {
  readonly series: MemorySample[] = [];
  peakRss = 0;
  private readonly t0 = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(periodMs = 250) {
    this.sample();
    this.timer = setInterval(() => this.sample(), periodMs);
    this.timer.unref();
  }

  sample(): MemorySample {
    const m = process.memoryUsage();
    if (m.rss > this.peakRss) this.peakRss = m.rss;
    const s = { tS: (performance.now() - this.t0) / 1000, heapMiB: m.heapUsed / MiB, rssMiB: m.rss / MiB };
    this.series.push(s);
    return s;
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

/** CPU time (user + system, ms) of process `pid` from /proc; 0 when unreadable. */
export function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}

/** Resident set size of process `pid` in MiB from /proc; 0 when unreadable. */
export function procRssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m === null ? 0 : Number(m[1]) / 1024;
  } catch {
    return 0;
  }
}

/** This process's CPU time (user + system) in ms. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
