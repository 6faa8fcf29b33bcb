/**
 * The sync worker's reading of the row messages (sync-messages.ts
 * INTRO_ROW, ADOPT_ROW): pooled watchers introduced, and introduced watchers
 * adopted, each a few numbers of one Float64Array. One reading for the
 * real members (SyncWorkerEndpoint) and the warm-up rehearsal's
 * (worker-warm-up.ts): the rehearsal's members then reach the pass with the
 * same kinds of numbers as real ones (read from a Float64Array), so the
 * code V8 optimized for them serves real members without a deoptimization.
 */
import { ADOPT_ROW, INTRO_ROW, type SelectionSpec } from './sync-messages.js';
import type { KnownWatcher, WorkerPassHost } from './worker-pass-host.js';

/** Introduce the watchers of an `introduce-rows` message's rows; `specs`: the selection specs by id. */
export function introduceRows(
  host: WorkerPassHost,
  rows: Float64Array,
  specs: ReadonlyMap<number, SelectionSpec>,
  known: Map<number, KnownWatcher>,
): void {
  const r = rows;
  for (let i = 0; i + INTRO_ROW <= r.length; i += INTRO_ROW) {
    const id = r[i]!;
    const selection = specs.get(r[i + 4]!);
    if (selection === undefined) throw new Error(`watcher ${id} names selection ${r[i + 4]}, never sent`);
    host.introduce(
      {
        id,
        position: 0,
        capacity: r[i + 3]!,
        reachedLive: false,
        slot: { slab: r[i + 1]!, offset: r[i + 2]! },
        selection,
      },
      known,
    );
  }
}

/** Adopt the introduced watchers of an `adopt-rows` message's rows. */
export function adoptRows(host: WorkerPassHost, rows: Float64Array, known: Map<number, KnownWatcher>): void {
  const r = rows;
  for (let i = 0; i + ADOPT_ROW <= r.length; i += ADOPT_ROW)
    host.adopt({ id: r[i]!, position: r[i + 1]!, capacity: r[i + 2]!, reachedLive: r[i + 3] === 1 }, known);
}
