/**
 * Workload: the writer of a simulated run. It seeds the store with the
 * steady object population, then issues creates, updates and deletes at the
 * scenario's piecewise rate, spreading objects over namespaces, label values
 * and trigger values (spec.nodeName) with the configured skew, and records
 * the virtual time of every write by RV (the start of each delivery latency).
 */
import type { KubeObject } from '../core/types.js';
import type { MemoryStore } from '../store/memory-store.js';
import { type Prng, Zipf } from './prng.js';
import type { WriteSpec } from './scenario.js';

interface SimObject {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  node: string | undefined;
  gen: number;
}

/** Virtual write time by RV (a growable array). */
export class WriteTimes {
  private times = new Float64Array(1 << 16);

  set(rv: number, t: number): void {
    if (rv >= this.times.length) {
      let n = this.times.length;
      while (n <= rv) n *= 2;
      const next = new Float64Array(n);
      next.set(this.times);
      this.times = next;
    }
    this.times[rv] = t;
  }

  get(rv: number): number {
    return rv < this.times.length ? this.times[rv]! : NaN;
  }
}

export const TRIGGER_FIELD = 'spec.nodeName';

export function namespaceName(rank: number): string {
  return `ns-${rank}`;
}
export function labelValue(rank: number): string {
  return `v${rank}`;
}
export function nodeName(rank: number): string {
  return `node-${rank}`;
}

export class Workload {
  readonly times = new WriteTimes();
  /** Writes issued (after seeding). */
  writes = 0;
  private readonly spec: WriteSpec;
  private readonly store: MemoryStore;
  private readonly r: Prng;
  private readonly scale: number;
  private readonly nsZipf: Zipf;
  private readonly labelZipfs: Zipf[];
  private readonly nodeZipf: Zipf | undefined;
  private readonly hot: Zipf | undefined;
  private readonly live: SimObject[] = [];
  private readonly pad: string;
  private seq = 0;
  private carry = 0;
  private failures = 0;

  constructor(spec: WriteSpec, store: MemoryStore, r: Prng, scale = 1) {
    this.spec = spec;
    this.store = store;
    this.r = r;
    this.scale = scale;
    this.nsZipf = new Zipf(spec.namespaces.count, spec.namespaces.skew);
    this.labelZipfs = spec.labels.map((l) => new Zipf(l.count, l.skew));
    this.nodeZipf =
      spec.triggerValues === undefined ? undefined : new Zipf(spec.triggerValues.count, spec.triggerValues.skew);
    this.hot = spec.hotObjects > 0 ? new Zipf(Math.max(1, spec.objects * 2), spec.hotObjects) : undefined;
    this.pad = 'x'.repeat(spec.payloadBytes);
  }

  /** The objects that exist now (for 'name' selectors). */
  objectAt(i: number): { namespace: string; name: string } | undefined {
    const o = this.live[i % Math.max(1, this.live.length)];
    return o === undefined ? undefined : { namespace: o.namespace, name: o.name };
  }

  /** Write rate (events/s) at virtual second `tS`, after the variant's scale. */
  rateAt(tS: number): number {
    let rate = 0;
    for (const step of this.spec.rate) if (step.atS <= tS) rate = step.perSecond;
    return rate * this.scale;
  }

  /** Create the initial population (before the cache starts), stamped at `t`. */
  async seed(t: number): Promise<void> {
    for (let i = 0; i < this.spec.objects; i++) {
      await this.create(t);
    }
    this.writes = 0;
  }

  /** How many writes fall due in [tS, tS + dtMs) at the current rate (fractions carry over). */
  due(tS: number, dtMs: number): number {
    this.carry += (this.rateAt(tS) * dtMs) / 1000;
    const n = Math.floor(this.carry);
    this.carry -= n;
    return n;
  }

  /** Issue one write; `t` is its write time (the start of its delivery latency). */
  write(t: number): void {
    this.writeOne(t);
  }

  /** Writes that the store rejected (should stay 0: the model tracks existence exactly). */
  get rejected(): number {
    return this.failures;
  }

  private writeOne(t: number): void {
    const m = this.spec.mix;
    const total = m.update + m.create + m.delete;
    let u = this.r.next() * total;
    if (this.live.length === 0) u = m.update; // nothing to update or delete: create
    if (u < m.update) this.update(t);
    else if (u < m.update + m.create || this.live.length === 0) void this.create(t);
    else this.remove(t);
    this.writes++;
  }

  private create(t: number): Promise<unknown> {
    const labels: Record<string, string> = {};
    this.spec.labels.forEach((l, i) => (labels[l.key] = labelValue(this.labelZipfs[i]!.sample(this.r))));
    const obj: SimObject = {
      namespace: namespaceName(this.nsZipf.sample(this.r)),
      name: `o-${this.seq++}`,
      labels,
      node: this.nodeZipf === undefined ? undefined : nodeName(this.nodeZipf.sample(this.r)),
      gen: 0,
    };
    this.live.push(obj);
    return this.commit(this.store.create(this.toKube(obj)), t);
  }

  private update(t: number): void {
    const i =
      this.hot === undefined
        ? Math.floor(this.r.next() * this.live.length)
        : this.hot.sample(this.r) % this.live.length;
    const obj = this.live[i]!;
    obj.gen++;
    if (this.spec.labels.length > 0 && this.spec.labelChurn > 0 && this.r.chance(this.spec.labelChurn)) {
      const k = Math.floor(this.r.next() * this.spec.labels.length);
      obj.labels = { ...obj.labels, [this.spec.labels[k]!.key]: labelValue(this.labelZipfs[k]!.sample(this.r)) };
    }
    if (this.nodeZipf !== undefined && this.spec.triggerChurn > 0 && this.r.chance(this.spec.triggerChurn))
      obj.node = nodeName(this.nodeZipf.sample(this.r));
    void this.commit(this.store.update(this.toKube(obj)), t);
  }

  private remove(t: number): void {
    const i = Math.floor(this.r.next() * this.live.length);
    const obj = this.live[i]!;
    const last = this.live.pop()!;
    if (last !== obj) this.live[i] = last;
    void this.commit(this.store.delete(obj.namespace, obj.name), t);
  }

  /** MemoryStore commits synchronously inside the call: the RV is known at once. */
  private commit(p: Promise<unknown>, t: number): Promise<unknown> {
    this.times.set(this.store.resourceVersion, t);
    return p.catch(() => {
      this.failures++;
    });
  }

  private toKube(o: SimObject): KubeObject {
    const spec: Record<string, unknown> = { gen: o.gen, pad: this.pad };
    if (o.node !== undefined) spec.nodeName = o.node;
    return { metadata: { namespace: o.namespace, name: o.name, labels: o.labels }, spec };
  }
}
