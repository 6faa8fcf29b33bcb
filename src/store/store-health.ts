/**
 * Whether a store is reachable right now, as its own traffic shows it: each
 * source (requests, each running watch) reports failing or fine; the store
 * is healthy while no source is failing. Transitions (healthy -> failing,
 * failing -> healthy) are reported once each to `onChange` listeners, so a
 * log says "etcd unreachable" once and "recovered" once, and /readyz answers
 * 503 meanwhile.
 */

export interface HealthState {
  readonly healthy: boolean;
  /** The latest failure while unhealthy. */
  readonly error: string | undefined;
  /** When it became unhealthy (ms since the epoch). */
  readonly since: number | undefined;
}

export type HealthListener = (state: HealthState) => void;

export class StoreHealth {
  private readonly failing = new Map<object, string>();
  private since: number | undefined;
  private readonly listeners = new Set<HealthListener>();

  get state(): HealthState {
    const last = [...this.failing.values()].pop();
    return { healthy: this.failing.size === 0, error: last, since: this.since };
  }

  get healthy(): boolean {
    return this.failing.size === 0;
  }

  /** Hear each transition (returns an unsubscribe). */
  onChange(listener: HealthListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  fail(source: object, error: unknown): void {
    const was = this.failing.size === 0;
    this.failing.set(source, error instanceof Error ? error.message : String(error));
    if (was) {
      this.since = Date.now();
      this.emit();
    }
  }

  recover(source: object): void {
    if (!this.failing.delete(source) || this.failing.size > 0) return;
    this.since = undefined;
    this.emit();
  }

  private emit(): void {
    const s = this.state;
    for (const l of this.listeners) l(s);
  }
}
