/**
 * Value distributions of a scenario (read rates in events/s, request
 * timeouts, reconnect delays), as JSON and as seeded samplers.
 *
 *   100                                  fixed
 *   "unlimited"                          a reader that is never the bottleneck (Infinity)
 *   { "uniform": [50, 500] }             uniform in [min, max]
 *   { "logUniform": [10, 10000] }        log-uniform in [min, max] (spans decades evenly)
 *   { "choice": [{ "value": 100, "weight": 3 }, { "value": "unlimited", "weight": 1 }] }
 */
import { type Checker, join } from './check.js';
import type { Prng } from './prng.js';

type DistValue = number | 'unlimited';

export type DistSpec =
  | DistValue
  | { uniform: [number, number] }
  | { logUniform: [number, number] }
  | { choice: { value: DistValue; weight: number }[] };

/** Draw one value (Infinity for "unlimited"). */
export function sample(spec: DistSpec, r: Prng): number {
  if (spec === 'unlimited') return Infinity;
  if (typeof spec === 'number') return spec;
  if ('uniform' in spec) return spec.uniform[0] + r.next() * (spec.uniform[1] - spec.uniform[0]);
  if ('logUniform' in spec) {
    const [a, b] = spec.logUniform;
    return Math.exp(Math.log(a) + r.next() * (Math.log(b) - Math.log(a)));
  }
  const total = spec.choice.reduce((s, c) => s + c.weight, 0);
  let u = r.next() * total;
  for (const c of spec.choice) {
    u -= c.weight;
    if (u < 0) return c.value === 'unlimited' ? Infinity : c.value;
  }
  const last = spec.choice[spec.choice.length - 1]!.value;
  return last === 'unlimited' ? Infinity : last;
}

/** Validate a distribution; `min` bounds every value it can produce. */
export function checkDist(
  c: Checker,
  path: string,
  value: unknown,
  opts: { min: number; allowUnlimited: boolean },
): DistSpec | undefined {
  const checkValue = (p: string, v: unknown): DistValue | undefined => {
    if (v === 'unlimited') {
      if (!opts.allowUnlimited) c.fail(p, '"unlimited" is not allowed here');
      return opts.allowUnlimited ? 'unlimited' : undefined;
    }
    return c.number(p, v, { min: opts.min });
  };
  if (typeof value === 'number' || typeof value === 'string') return checkValue(path, value);
  const o = c.object(path, value);
  if (o === undefined) return undefined;
  const keys = Object.keys(o);
  if (keys.length !== 1 || !['uniform', 'logUniform', 'choice'].includes(keys[0]!)) {
    c.fail(path, 'must be a number, "unlimited", or an object with exactly one of uniform, logUniform, choice');
    return undefined;
  }
  const kind = keys[0]!;
  if (kind === 'uniform' || kind === 'logUniform') {
    const p = join(path, kind);
    const arr = c.array(p, o[kind]);
    if (arr === undefined) return undefined;
    if (arr.length !== 2) {
      c.fail(p, `must be [min, max], got ${arr.length} item(s)`);
      return undefined;
    }
    const lo = c.number(join(p, 0), arr[0], {
      min: kind === 'logUniform' ? Math.max(opts.min, Number.MIN_VALUE) : opts.min,
    });
    const hi = c.number(join(p, 1), arr[1], { min: opts.min });
    if (lo === undefined || hi === undefined) return undefined;
    if (hi < lo) {
      c.fail(p, `max (${hi}) must be >= min (${lo})`);
      return undefined;
    }
    return kind === 'uniform' ? { uniform: [lo, hi] } : { logUniform: [lo, hi] };
  }
  const p = join(path, 'choice');
  const arr = c.array(p, o.choice, { min: 1 });
  if (arr === undefined) return undefined;
  const out: { value: DistValue; weight: number }[] = [];
  arr.forEach((item, i) => {
    const ip = join(p, i);
    const io = c.object(ip, item);
    if (io === undefined) return;
    c.keys(ip, io, ['value', 'weight']);
    const v = checkValue(join(ip, 'value'), io.value);
    const w = c.number(join(ip, 'weight'), io.weight, { min: 0, exclusiveMin: true });
    if (v !== undefined && w !== undefined) out.push({ value: v, weight: w });
  });
  return out.length === arr.length ? { choice: out } : undefined;
}

/** A short label for reports ("100", "unlimited", "uniform 50..500"). */
export function describeDist(spec: DistSpec): string {
  if (typeof spec === 'number' || typeof spec === 'string') return String(spec);
  if ('uniform' in spec) return `uniform ${spec.uniform[0]}..${spec.uniform[1]}`;
  if ('logUniform' in spec) return `logUniform ${spec.logUniform[0]}..${spec.logUniform[1]}`;
  return spec.choice.map((c) => `${c.value}×${c.weight}`).join('|');
}
