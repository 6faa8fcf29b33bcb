/**
 * The public surface (API.md), guarded two ways:
 *  - at compile time: the type assertions below stop the build if `watch()`
 *    stops returning the narrow `Watch`, if ERROR events stop carrying a
 *    Status, if `cache.metrics` is not the prom-client Registry, or if an
 *    internal type or callback becomes reachable from WatchCache again;
 *  - at run time: the entry's value exports must equal the checked-in
 *    report test/unit/public-api.exports.txt (update it deliberately).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { CacheWatchEvent, Status, Watch, WatchCache, KubeObject } from '../../src/index.js';
import type * as Entry from '../../src/index.js';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Index = typeof Entry;
/** Compiles only when `T` is `true`: the build stops on a broken assertion below. */
function check<T extends true>(): T {
  return true as T;
}

export const typeChecks: true[] = [
  check<Equals<ReturnType<WatchCache['watch']>, Watch>>(),
  check<Equals<WatchCache['metrics'], Registry>>(),
  check<Equals<Extract<CacheWatchEvent, { type: 'ERROR' }>['object'], Status>>(),
  check<Equals<Exclude<CacheWatchEvent, { type: 'ERROR' }>['object'], KubeObject>>(),
  check<'Watcher' extends keyof Index ? false : true>(),
  check<
    'watcherEnded' | 'watcherHasRoom' | 'initialOvertaken' | 'channelOverwritten' extends keyof WatchCache
      ? false
      : true
  >(),
  check<'stallPolicy' extends keyof WatchCache ? false : true>(),
  check<'betaSync' extends keyof WatchCache ? false : true>(),
  check<Equals<Parameters<Watch['stop']>, []>>(),
];

test('the package entry exports exactly the checked-in names', async () => {
  const entry = await import('../../src/index.js');
  const want = readFileSync(new URL('../../../test/unit/public-api.exports.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  assert.deepEqual(Object.keys(entry).sort(), want);
  assert.equal(typeChecks.length, 9);
});
