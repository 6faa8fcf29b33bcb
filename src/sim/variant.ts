/**
 * Variants: the algorithm and parameter alternatives run on the same input
 * (modes, candidate order, budgets, member cap, periods, hand-off distance,
 * channel and history size, write scale), and the `--sweep PARAM=v1,v2,...`
 * syntax that expands into them.
 */
import { MODES, type Mode } from '../cache/cache-options.js';
import { NUMERIC_PASS_OPTIONS, type CandidateOrder } from '../sync/pass-options.js';
import type { Variant } from './result.js';

const ORDERS: readonly CandidateOrder[] = ['kep', 'fifo', 'position'];

/** Every parameter a sweep can vary. `budget` sets scanBudget and pushBudget together. */
const SWEEP_PARAMS: readonly string[] = [
  'mode',
  'candidateOrder',
  ...NUMERIC_PASS_OPTIONS,
  'budget',
  'channelCapacity',
  'historyUpperBound',
  'writeScale',
];

export interface Sweep {
  param: string;
  values: (string | number)[];
}

export class SweepError extends Error {
  override readonly name = 'SweepError';
}

/** Parse `PARAM=v1,v2,...` (a `pass.` prefix is accepted: `pass.scanBudget=500,1000`). */
export function parseSweep(spec: string): Sweep {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new SweepError(`--sweep: expected PARAM=v1,v2,..., got "${spec}"`);
  let param = spec.slice(0, eq).trim();
  if (param.startsWith('pass.')) param = param.slice(5);
  if (!SWEEP_PARAMS.includes(param))
    throw new SweepError(`--sweep: unknown parameter "${param}" (one of: ${SWEEP_PARAMS.join(', ')})`);
  const raw = spec
    .slice(eq + 1)
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (raw.length === 0) throw new SweepError(`--sweep ${param}: no values`);
  const values = raw.map((v): string | number => {
    if (param === 'mode') {
      if (!(MODES as readonly string[]).includes(v))
        throw new SweepError(`--sweep mode: "${v}" is not one of ${MODES.join(', ')}`);
      return v;
    }
    if (param === 'candidateOrder') {
      if (!(ORDERS as readonly string[]).includes(v))
        throw new SweepError(`--sweep candidateOrder: "${v}" is not one of ${ORDERS.join(', ')}`);
      return v;
    }
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new SweepError(`--sweep ${param}: "${v}" is not a number >= 0`);
    if (
      ['maxWatchers', 'scanBudget', 'pushBudget', 'budget', 'channelCapacity', 'historyUpperBound'].includes(param) &&
      (!Number.isInteger(n) || n < 1)
    ) {
      throw new SweepError(`--sweep ${param}: "${v}" must be an integer >= 1`);
    }
    if (param === 'busyShare' && (n <= 0 || n >= 1))
      throw new SweepError(`--sweep busyShare: "${v}" must be in (0, 1)`);
    return n;
  });
  return { param, values };
}

/** Parse `--modes off,alpha,beta`. */
export function parseModes(spec: string): Mode[] {
  const modes = spec
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (modes.length === 0) throw new SweepError('--modes: no modes given');
  for (const m of modes)
    if (!(MODES as readonly string[]).includes(m))
      throw new SweepError(`--modes: "${m}" is not one of ${MODES.join(', ')}`);
  return modes as Mode[];
}

/** Apply one sweep value to a variant (returns a new variant with its label extended). */
function withValue(base: Variant, param: string, value: string | number): Variant {
  const v: Variant = { ...base, pass: { ...(base.pass ?? {}) } };
  if (param === 'mode') v.mode = value as Mode;
  else if (param === 'candidateOrder') v.pass!.candidateOrder = value as CandidateOrder;
  else if (param === 'budget') {
    v.pass!.scanBudget = value as number;
    v.pass!.pushBudget = value as number;
  } else if ((NUMERIC_PASS_OPTIONS as readonly string[]).includes(param))
    (v.pass as Record<string, number>)[param] = value as number;
  else if (param === 'channelCapacity') v.channelCapacity = value as number;
  else if (param === 'historyUpperBound') v.historyUpperBound = value as number;
  else if (param === 'writeScale') v.writeScale = value as number;
  if (Object.keys(v.pass!).length === 0) delete v.pass;
  v.label = param === 'mode' ? String(value) : `${v.mode} ${param}=${value}`;
  return v;
}

/** Parse `--pass k=v,k=v`: fixed settings applied to every variant (any sweep parameter but mode). */
export function parseSettings(spec: string): Sweep[] {
  const out: Sweep[] = [];
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const s = parseSweep(part);
    if (s.param === 'mode') throw new SweepError('--pass: use --modes for modes');
    if (s.values.length !== 1) throw new SweepError(`--pass ${s.param}: one value only`);
    out.push(s);
  }
  if (out.length === 0) throw new SweepError('--pass: nothing to set');
  return out;
}

/** The variants of a run: every mode, times every sweep value when a sweep is given, with `settings` applied to each. */
export function buildVariants(
  modes: readonly Mode[],
  sweep: Sweep | undefined,
  settings: readonly Sweep[] = [],
): Variant[] {
  const base = (mode: Mode): Variant => {
    let v: Variant = { label: mode, mode };
    for (const s of settings) v = withValue(v, s.param, s.values[0]!);
    if (settings.length > 0) v.label = `${mode} ${settings.map((s) => `${s.param}=${s.values[0]}`).join(' ')}`;
    return v;
  };
  if (sweep === undefined) return modes.map(base);
  if (sweep.param === 'mode') return sweep.values.map((m) => base(m as Mode));
  const out: Variant[] = [];
  for (const mode of modes) {
    for (const value of sweep.values) {
      const b = base(mode);
      const v = withValue(b, sweep.param, value);
      v.label = `${b.label} ${sweep.param}=${value}`;
      out.push(v);
    }
  }
  return out;
}
