/**
 * A Store wrapper for the harness that breaks the cache's watch on demand,
 * the way etcd does after a compaction ("required revision has been
 * compacted"): the reflector must re-list, and every watcher whose position
 * the new history cannot serve must get its 410 (off mode: a silent close).
 */
import type { Store, StoreEvent, StoreListResult, StoreWatch } from '../../src/index.js';
import { StoreCompactedError } from '../../src/index.js';

export class FaultyStore implements Store {
  private readonly inner: Store;
  private readonly live = new Set<{ fail: () => void }>();
  /** Watches broken so far. */
  breaks = 0;

  constructor(inner: Store) {
    this.inner = inner;
  }

  list(): Promise<StoreListResult> {
    return this.inner.list();
  }

  currentResourceVersion(): Promise<number> {
    return this.inner.currentResourceVersion();
  }

  watch(afterRV: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void): StoreWatch {
    let last = afterRV;
    let broken = false;
    const handle = {
      fail: (): void => {
        if (broken) return;
        broken = true;
        inner.stop();
        this.live.delete(handle);
        onError(new StoreCompactedError(last, last + 1));
      },
    };
    const inner = this.inner.watch(
      afterRV,
      (ev) => {
        if (broken) return;
        last = ev.resourceVersion;
        onEvent(ev);
      },
      (err) => !broken && onError(err),
    );
    this.live.add(handle);
    return {
      stop: () => {
        broken = true;
        inner.stop();
        this.live.delete(handle);
      },
    };
  }

  /** Break every running watch now. */
  breakWatches(): void {
    for (const h of [...this.live]) {
      this.breaks++;
      h.fail();
    }
  }
}
