/**
 * Test support: the `meta` of a BenchReport built by hand in a test (a
 * 2-CPU machine, no load, the quick plan of every mode).
 */
import type { BenchReport } from '../../native-bench/lib/types.js';

export function testReportMeta(notes: string[]): BenchReport['meta'] {
  return {
    node: process.version,
    date: new Date().toISOString(),
    cpus: 2,
    cpuModel: 'test',
    memGiB: 1,
    loadStart: 0,
    loadEnd: 0,
    argv: [],
    quick: true,
    modes: ['off', 'alpha', 'beta'],
    notes,
    wallS: 1,
  };
}
