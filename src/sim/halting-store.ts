/**
 * HaltingStore: a Store wrapper that models a halted dispatcher (KEP user
 * story "An apiserver that is itself overloaded"). The writer keeps writing
 * to the backing store; during a halt the cache's watch callback receives
 * nothing, the events pile up here, and when the halt ends they arrive in a
 * burst: in order, `releaseBatch` events per turn of the event loop, so the
 * consumers read between batches the way concurrent watcher goroutines drain
 * while the dispatcher works through its backlog.
 */
import type { Clock } from '../core/clock.js';
import type { Store, StoreEvent, StoreListResult, StoreWatch } from '../core/types.js';

export class HaltingStore implements Store {
  private readonly inner: Store;
  private readonly clock: Clock;
  private readonly releaseBatch: number;
  private haltedUntil = -Infinity;
  private readonly sinks = new Set<Sink>();
  /** Events held back so far (all halts). */
  held = 0;
  /** Most events held at once. */
  peakHeld = 0;

  constructor(inner: Store, clock: Clock, releaseBatch = 64) {
    this.inner = inner;
    this.clock = clock;
    this.releaseBatch = releaseBatch;
  }

  /** Hold the cache's ingest for `forMs` from now (extends a running halt). */
  halt(forMs: number): void {
    const until = this.clock.now() + forMs;
    if (until <= this.haltedUntil) return;
    this.haltedUntil = until;
    this.clock.setTimeout(() => {
      if (this.clock.now() >= this.haltedUntil) for (const s of this.sinks) s.release();
    }, forMs);
  }

  get halted(): boolean {
    return this.clock.now() < this.haltedUntil;
  }

  list(): Promise<StoreListResult> {
    return this.inner.list();
  }

  currentResourceVersion(): Promise<number> {
    return this.inner.currentResourceVersion();
  }

  watch(
    afterRV: number,
    onEvent: (event: StoreEvent) => void,
    onError: (error: Error) => void,
    onProgress?: (rv: number) => void,
  ): StoreWatch {
    const sink = new Sink(this, onEvent);
    this.sinks.add(sink);
    const w = this.inner.watch(afterRV, (ev) => sink.offer(ev), onError, onProgress);
    return {
      stop: () => {
        sink.stopped = true;
        this.sinks.delete(sink);
        w.stop();
      },
    };
  }

  /** @internal */ schedule(fn: () => void): void {
    this.clock.setTimeout(fn, 0);
  }
  /** @internal */ get batch(): number {
    return this.releaseBatch;
  }
  /** @internal */ noteHeld(n: number): void {
    this.held++;
    if (n > this.peakHeld) this.peakHeld = n;
  }
}

/** One watch through the wrapper: a FIFO of held events. */
class Sink {
  stopped = false;
  private readonly owner: HaltingStore;
  private readonly onEvent: (event: StoreEvent) => void;
  private readonly queue: StoreEvent[] = [];
  private head = 0;
  private releasing = false;

  constructor(owner: HaltingStore, onEvent: (event: StoreEvent) => void) {
    this.owner = owner;
    this.onEvent = onEvent;
  }

  offer(ev: StoreEvent): void {
    if (this.stopped) return;
    if (this.owner.halted || this.head < this.queue.length) {
      this.queue.push(ev); // keep RV order behind anything still held
      this.owner.noteHeld(this.queue.length - this.head);
      if (!this.owner.halted) this.release();
      return;
    }
    this.onEvent(ev);
  }

  release(): void {
    if (this.releasing || this.stopped) return;
    this.releasing = true;
    const step = (): void => {
      if (this.stopped || this.owner.halted) {
        this.releasing = false;
        return;
      }
      const end = Math.min(this.queue.length, this.head + this.owner.batch);
      while (this.head < end) {
        const ev = this.queue[this.head]!;
        this.queue[this.head++] = undefined as unknown as StoreEvent;
        this.onEvent(ev);
      }
      if (this.head < this.queue.length) this.owner.schedule(step);
      else {
        this.queue.length = 0;
        this.head = 0;
        this.releasing = false;
      }
    };
    this.owner.schedule(step);
  }
}
