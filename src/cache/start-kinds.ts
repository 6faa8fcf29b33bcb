/**
 * The watch start kinds (API.md "Watch start", semantics §3) as a table:
 * each row says when it applies, from the validated options and the cache
 * RV, and how such a watch starts. WatchCache.startWatch takes the first row
 * that applies (the order matters: the rows are read top to bottom); the
 * starts themselves (from the state, from an RV, a failed start) are the
 * cache's, lent as StartActions.
 */
import type { Watcher } from '../watch/watcher.js';
import type { ValidatedWatch } from './request-options.js';

/** What the cache lends a start kind. */
export interface StartActions {
  /** The store's current RV (a consistent start). */
  consistentRV(): Promise<number>;
  /** Resolves once the cache has applied `rv` (up to blockTimeoutMs). */
  untilFresh(rv: number): Promise<void>;
  /** Initial state as ADDED events (then the initial-events-end bookmark if asked), then live. */
  fromState(w: Watcher, endBookmark: boolean): void;
  /** Every event after `rv`: from the history (410 if too old), or from now on for a future RV. */
  fromRV(w: Watcher, rv: number): void;
  /** The start cannot be served (its ERROR event, then the end). */
  fail(w: Watcher, err: unknown): void;
}

export interface StartKind {
  readonly name: string;
  applies(v: ValidatedWatch, cacheRV: number): boolean;
  start(a: StartActions, w: Watcher, v: ValidatedWatch, cacheRV: number): void;
}

const START_KINDS: readonly StartKind[] = [
  {
    name: "consistent '' (initial events unless sendInitialEvents=false)",
    applies: (v) => v.rv === '' && v.sendInitialEvents !== false,
    // Catch up to the store's current RV first (up to blockTimeoutMs).
    start: (a, w, v) =>
      void a
        .consistentRV()
        .then((target) => a.untilFresh(target))
        .then(
          () => a.fromState(w, v.sendInitialEvents === true && v.allowBookmarks),
          (err: unknown) => a.fail(w, err),
        ),
  },
  {
    name: "'' with sendInitialEvents=false",
    applies: (v) => v.rv === '',
    // Start at the store's current RV, no initial events.
    start: (a, w) =>
      void a.consistentRV().then(
        (target) => a.fromRV(w, target),
        (err: unknown) => a.fail(w, err),
      ),
  },
  {
    name: 'sendInitialEvents at an RV the cache has',
    applies: (v, cacheRV) => v.sendInitialEvents === true && v.rv !== '' && v.rv <= cacheRV,
    start: (a, w, v) => a.fromState(w, v.allowBookmarks), // fresh enough already: registered now
  },
  {
    name: 'sendInitialEvents at an RV ahead of the cache',
    applies: (v) => v.sendInitialEvents === true,
    start: (a, w, v) =>
      void a.untilFresh(v.rv as number /* not '': the rows above took it */).then(
        () => a.fromState(w, v.allowBookmarks),
        (err: unknown) => a.fail(w, err),
      ),
  },
  {
    name: "'0': any state",
    applies: (v) => v.rv === 0,
    start: (a, w, v, cacheRV) => {
      if (v.sendInitialEvents === false) a.fromRV(w, cacheRV);
      else a.fromState(w, false);
    },
  },
  {
    name: "'N': every event after N",
    applies: () => true,
    start: (a, w, v) => a.fromRV(w, v.rv as number /* not '': the rows above took it */),
  },
];

/** The first start kind that applies. */
export function startKindOf(v: ValidatedWatch, cacheRV: number): StartKind {
  return START_KINDS.find((k) => k.applies(v, cacheRV))!;
}
