/**
 * V8's own answer to "is this function still optimized?", for tests of the
 * live path's deoptimization rules (a deoptimized dispatch loop runs every
 * offer of the event at interpreter speed: issue 13). The natives syntax is
 * switched on for code compiled from here on (the helpers below), so the
 * tests need no command-line flag. Counts and states only, never timings.
 */
import v8 from 'node:v8';
import { runInThisContext } from 'node:vm';

v8.setFlagsFromString('--allow-natives-syntax');

type Natives = (f: unknown) => number;
// The natives syntax is not TypeScript: these three are compiled from source text, after the flag.
const status = runInThisContext('(f) => %GetOptimizationStatus(f)') as Natives;
const prepare = runInThisContext('(f) => %PrepareFunctionForOptimization(f)') as Natives;
const optimizeNext = runInThisContext('(f) => %OptimizeFunctionOnNextCall(f)') as Natives;

/** V8's OptimizationStatus bit for "has optimized code" (kOptimized). */
const OPTIMIZED = 1 << 4;

/**
 * Optimize `fn` with TurboFan on the next `run()`: `run` is called `warmups` times first, once the
 * function has a feedback vector (so the optimized code knows only what those calls did).
 */
export function optimizeAfter(fn: unknown, run: () => void, warmups = 3): void {
  prepare(fn);
  for (let i = 0; i < warmups; i++) run();
  optimizeNext(fn);
  run();
}

/** True while `fn` runs optimized code (false once it deoptimized). */
export function isOptimized(fn: unknown): boolean {
  return (status(fn) & OPTIMIZED) !== 0;
}

const sameMap = runInThisContext('(a, b) => %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;

/** True when V8 gives `a` and `b` one hidden class (map): reads of their fields stay monomorphic. */
export function sameHiddenClass(a: object, b: object): boolean {
  return sameMap(a, b);
}
