/**
 * The simulator's scenario format (JSON) and its validation.
 *
 * A scenario is one workload: how long it runs (virtual seconds), its seed,
 * the modes to compare, the engine options, the write load (a piecewise
 * rate over time and the distributions over namespaces, labels and trigger
 * values that decide how many watchers select each event), the watcher
 * populations (selector kind, read rate, stall episodes, request timeout,
 * reconnect behaviour) and dispatcher halts (the "overloaded apiserver"
 * story). `parseScenario` reports every problem as "<path>: <what is wrong>".
 * See scenarios/*.json for examples and docs/tuning.md for how they are used.
 */
import { readFile } from 'node:fs/promises';
import { MODES, type Mode } from '../cache/cache-options.js';
import { NUMERIC_PASS_OPTIONS, type PassOptions } from '../sync/pass-options.js';
import { Checker, join } from './check.js';
import { checkDist, type DistSpec } from './distribution.js';

interface RateStep {
  /** From this virtual second on (the first step must be at 0). */
  atS: number;
  perSecond: number;
}

interface SkewedSet {
  /** How many distinct values. */
  count: number;
  /** Zipf exponent of their popularity: 0 = uniform (default), 1 = a few hot values. */
  skew: number;
}

interface LabelSpec extends SkewedSet {
  key: string;
}

export interface WriteSpec {
  /** Piecewise-constant write rate. */
  rate: RateStep[];
  /** Objects created before the cache starts (the steady population). */
  objects: number;
  /** Relative weights of updates, creates and deletes (creates/deletes keep the population near `objects`). */
  mix: { update: number; create: number; delete: number };
  namespaces: SkewedSet;
  labels: LabelSpec[];
  /** Probability that an update redraws one label (objects move in and out of label selectors). */
  labelChurn: number;
  /** spec.nodeName values; when present the cache has a trigger index on spec.nodeName. */
  triggerValues: SkewedSet | undefined;
  /** Probability that an update moves the object to another trigger value. */
  triggerChurn: number;
  /** Zipf exponent over objects for which object an update touches (0 = uniform). */
  hotObjects: number;
  /** Size of the padding in each object's spec (drives encoding cost). */
  payloadBytes: number;
}

type SelectorKind = 'all' | 'namespace' | 'label' | 'trigger' | 'name';

export interface StallEpisode {
  atS: number;
  forS: number;
  /** Share of the population that takes part. */
  fraction: number;
  /** Rolling episodes: the participants are split into this many groups (default 1)... */
  groups: number;
  /** ...and group g starts g * staggerS after atS (so the groups resume at different positions: cohorts). */
  staggerS: number;
  /** 'stall': stops reading, connection open (TCP stall); 'disconnect': the connection drops and reconnects after forS. */
  kind: 'stall' | 'disconnect';
}

interface ReconnectSpec {
  /** Delay before re-establishing a watch that ended (clients re-establish without backoff: 0). */
  delayMs: DistSpec;
  /** Resume from the last RV received (informers); false: from the current RV (losing the gap). */
  fromLastRV: boolean;
  /** After a 410, re-list (cache.list at RV "0") and watch from the list RV, like an informer. */
  relistOn410: boolean;
}

export interface PopulationSpec {
  name: string;
  count: number;
  /**
   * What each watcher selects: 'all'; 'namespace' (watcher i: the i-th most popular namespace,
   * round robin); 'label' (watcher i: `key=value_(i mod values)`); 'trigger' (watcher i:
   * spec.nodeName=node-(i mod count), like per-node agents); 'name' (one object).
   */
  selector: { kind: SelectorKind; labelKey?: string };
  /** Events/s each watcher reads (a distribution over the population). */
  readRate: DistSpec;
  /** Per-watch channel size (default: the engine's). */
  channelCapacity: number | undefined;
  startAtS: number;
  /** Connections are spread over [startAtS, startAtS + startSpreadS). */
  startSpreadS: number;
  /** 'now': watch from the cache's current RV; 'list': list at RV "0", then watch from the list RV. */
  start: 'now' | 'list';
  bookmarks: boolean;
  /** Request timeout (s), per watch; undefined = none. The client re-establishes the watch after it. */
  timeoutS: DistSpec | undefined;
  reconnect: ReconnectSpec;
  stalls: StallEpisode[];
  /** Latency class; default: 'healthy' for unlimited readers without episodes, else 'slow'. */
  latencyClass: 'healthy' | 'slow' | undefined;
}

interface HaltSpec {
  atS: number;
  /** The cache's ingest is held this long; the writer keeps writing. */
  forMs: number;
}

interface EngineSpec {
  channelCapacity?: number;
  history?: { lowerBound?: number; upperBound?: number; eventFreshDurationMs?: number };
  pass?: Partial<PassOptions>;
  dispatchBudget?: { refreshPerSecondMs?: number; maxBudgetMs?: number };
  bookmarkFrequencyMs?: number;
}

/**
 * The modelled cost of sync passes in virtual time. Alpha's passes run on
 * the main thread, so the thread is busy while one runs and live dispatch
 * waits. A pass costs µs per scan unit (a history event read; an interval
 * open costs `intervalOpenCost` units), per push, per unsynced watcher it
 * walks (step 1) and per candidate it orders and forms cohorts from (after
 * the member cap). The defaults make a full default pass (2000 units, 2000
 * pushes) about 1 ms, the KEP's figure, and agree with a direct SyncPass
 * benchmark on the reference host (docs/tuning.md, "Cost model").
 * Beta's passes run in the sync worker, off the main thread; a scanned
 * event there is decoded from the shared ring (msgpack), which costs more:
 * `workerUsPerScanUnit`. The worker's busy period is scaled from its
 * modelled time. Real time is measured separately.
 */
export interface CostSpec {
  passUsPerScanUnit: number;
  passUsPerPush: number;
  passUsPerWatcher: number;
  passUsPerCandidate: number;
  workerUsPerScanUnit: number;
}

export interface Scenario {
  name: string;
  description: string;
  durationS: number;
  /** Virtual seconds after the writes stop, for stalled readers to catch up. */
  drainS: number;
  seed: number;
  modes: Mode[];
  /** Driver step (virtual ms): writes and paced reads happen on this grid. */
  tickMs: number;
  engine: EngineSpec;
  cost: CostSpec;
  writes: WriteSpec;
  watchers: PopulationSpec[];
  halts: HaltSpec[];
}

export class ScenarioError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`invalid scenario ${source}:\n  ${problems.join('\n  ')}`);
    this.name = 'ScenarioError';
    this.problems = problems;
  }
}

const PASS_KEYS = ['candidateOrder', ...NUMERIC_PASS_OPTIONS] as const;

/** Read and validate a scenario file. */
export async function loadScenario(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ScenarioError(file, [`cannot read: ${(err as Error).message}`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ScenarioError(file, [`not valid JSON: ${(err as Error).message}`]);
  }
  return parseScenario(json, file);
}

/** Validate `input` (parsed JSON) and fill in defaults; throws ScenarioError listing every problem. */
export function parseScenario(input: unknown, source = 'scenario'): Scenario {
  const c = new Checker();
  const o = c.object('(root)', input);
  if (o === undefined) throw new ScenarioError(source, c.errors);
  c.keys('', o, [
    'name',
    'description',
    'durationS',
    'drainS',
    'seed',
    'modes',
    'tickMs',
    'engine',
    'cost',
    'writes',
    'watchers',
    'halts',
    '$comment',
  ]);
  const name = c.string('name', o.name, { nonEmpty: true }) ?? '?';
  const description = o.description === undefined ? '' : (c.string('description', o.description) ?? '');
  const durationS = c.number('durationS', o.durationS, { min: 0, exclusiveMin: true, max: 86_400 }) ?? 1;
  const drainS = c.optionalNumber('drainS', o.drainS, { min: 0, max: 86_400 }) ?? 5;
  const seed = c.number('seed', o.seed, { integer: true, min: 0, max: 2 ** 32 - 1 }) ?? 1;
  let modes: Mode[] = [...MODES];
  if (o.modes !== undefined) {
    const arr = c.array('modes', o.modes, { min: 1 });
    if (arr !== undefined)
      modes = arr.map((m, i) => c.oneOf(join('modes', i), m, MODES)).filter((m): m is Mode => m !== undefined);
  }
  const tickMs = c.optionalNumber('tickMs', o.tickMs, { min: 0.1, max: 1000 }) ?? 1;
  const engine = checkEngine(c, o.engine);
  const cost = checkCost(c, o.cost);
  const writes = checkWrites(c, o.writes, durationS);
  const watchers: PopulationSpec[] = [];
  const arr = c.array('watchers', o.watchers, { min: 1 });
  const names = new Set<string>();
  arr?.forEach((p, i) => {
    const raw = (p as { name?: unknown } | null)?.name;
    if (typeof raw === 'string') {
      if (names.has(raw)) c.fail(join(join('watchers', i), 'name'), `duplicate population name "${raw}"`);
      names.add(raw);
    }
    const pop = checkPopulation(c, join('watchers', i), p, writes, durationS);
    if (pop !== undefined) watchers.push(pop);
  });
  const halts: HaltSpec[] = [];
  if (o.halts !== undefined) {
    c.array('halts', o.halts)?.forEach((h, i) => {
      const p = join('halts', i);
      const ho = c.object(p, h);
      if (ho === undefined) return;
      c.keys(p, ho, ['atS', 'forMs']);
      const atS = c.number(join(p, 'atS'), ho.atS, { min: 0, max: durationS });
      const forMs = c.number(join(p, 'forMs'), ho.forMs, { min: 0, exclusiveMin: true });
      if (atS !== undefined && forMs !== undefined) halts.push({ atS, forMs });
    });
  }
  if (c.errors.length > 0) throw new ScenarioError(source, c.errors);
  return { name, description, durationS, drainS, seed, modes, tickMs, engine, cost, writes, watchers, halts };
}

function checkEngine(c: Checker, value: unknown): EngineSpec {
  if (value === undefined) return {};
  const o = c.object('engine', value);
  if (o === undefined) return {};
  c.keys('engine', o, ['channelCapacity', 'history', 'pass', 'dispatchBudget', 'bookmarkFrequencyMs']);
  const e: EngineSpec = {};
  const cap = c.optionalNumber('engine.channelCapacity', o.channelCapacity, { integer: true, min: 1 });
  if (cap !== undefined) e.channelCapacity = cap;
  const bf = c.optionalNumber('engine.bookmarkFrequencyMs', o.bookmarkFrequencyMs, { min: 0, exclusiveMin: true });
  if (bf !== undefined) e.bookmarkFrequencyMs = bf;
  if (o.history !== undefined) {
    const h = c.object('engine.history', o.history);
    if (h !== undefined) {
      c.keys('engine.history', h, ['lowerBound', 'upperBound', 'eventFreshDurationMs']);
      e.history = {};
      const lb = c.optionalNumber('engine.history.lowerBound', h.lowerBound, { integer: true, min: 1 });
      const ub = c.optionalNumber('engine.history.upperBound', h.upperBound, { integer: true, min: 1 });
      const fd = c.optionalNumber('engine.history.eventFreshDurationMs', h.eventFreshDurationMs, {
        min: 0,
        exclusiveMin: true,
      });
      if (lb !== undefined) e.history.lowerBound = lb;
      if (ub !== undefined) e.history.upperBound = ub;
      if (fd !== undefined) e.history.eventFreshDurationMs = fd;
    }
  }
  if (o.pass !== undefined) {
    const p = c.object('engine.pass', o.pass);
    if (p !== undefined) {
      c.keys('engine.pass', p, PASS_KEYS);
      const pass: Partial<PassOptions> = {};
      for (const k of PASS_KEYS) {
        if (p[k] === undefined) continue;
        if (k === 'candidateOrder') {
          const v = c.oneOf('engine.pass.candidateOrder', p[k], ['kep', 'fifo', 'position'] as const);
          if (v !== undefined) pass.candidateOrder = v;
        } else {
          const v = c.number(`engine.pass.${k}`, p[k], { min: 0 });
          if (v !== undefined) (pass as Record<string, number>)[k] = v;
        }
      }
      e.pass = pass;
    }
  }
  if (o.dispatchBudget !== undefined) {
    const d = c.object('engine.dispatchBudget', o.dispatchBudget);
    if (d !== undefined) {
      c.keys('engine.dispatchBudget', d, ['refreshPerSecondMs', 'maxBudgetMs']);
      e.dispatchBudget = {};
      const r = c.optionalNumber('engine.dispatchBudget.refreshPerSecondMs', d.refreshPerSecondMs, { min: 0 });
      const m = c.optionalNumber('engine.dispatchBudget.maxBudgetMs', d.maxBudgetMs, { min: 0 });
      if (r !== undefined) e.dispatchBudget.refreshPerSecondMs = r;
      if (m !== undefined) e.dispatchBudget.maxBudgetMs = m;
    }
  }
  return e;
}

function checkCost(c: Checker, value: unknown): CostSpec {
  const def: CostSpec = {
    passUsPerScanUnit: 0.25,
    passUsPerPush: 0.25,
    passUsPerWatcher: 0.25,
    passUsPerCandidate: 1,
    workerUsPerScanUnit: 5,
  };
  if (value === undefined) return def;
  const o = c.object('cost', value);
  if (o === undefined) return def;
  c.keys('cost', o, [
    'passUsPerScanUnit',
    'passUsPerPush',
    'passUsPerWatcher',
    'passUsPerCandidate',
    'workerUsPerScanUnit',
  ]);
  return {
    passUsPerScanUnit:
      c.optionalNumber('cost.passUsPerScanUnit', o.passUsPerScanUnit, { min: 0 }) ?? def.passUsPerScanUnit,
    passUsPerPush: c.optionalNumber('cost.passUsPerPush', o.passUsPerPush, { min: 0 }) ?? def.passUsPerPush,
    passUsPerWatcher: c.optionalNumber('cost.passUsPerWatcher', o.passUsPerWatcher, { min: 0 }) ?? def.passUsPerWatcher,
    passUsPerCandidate:
      c.optionalNumber('cost.passUsPerCandidate', o.passUsPerCandidate, { min: 0 }) ?? def.passUsPerCandidate,
    workerUsPerScanUnit:
      c.optionalNumber('cost.workerUsPerScanUnit', o.workerUsPerScanUnit, { min: 0 }) ?? def.workerUsPerScanUnit,
  };
}

function checkSkewed(
  c: Checker,
  path: string,
  value: unknown,
  extra: readonly string[] = [],
): (SkewedSet & Record<string, unknown>) | undefined {
  const o = c.object(path, value);
  if (o === undefined) return undefined;
  c.keys(path, o, ['count', 'skew', ...extra]);
  const count = c.number(join(path, 'count'), o.count, { integer: true, min: 1, max: 1_000_000 });
  const skew = c.optionalNumber(join(path, 'skew'), o.skew, { min: 0, max: 5 }) ?? 0;
  if (count === undefined) return undefined;
  return { ...o, count, skew };
}

function checkWrites(c: Checker, value: unknown, durationS: number): WriteSpec {
  const w: WriteSpec = {
    rate: [{ atS: 0, perSecond: 100 }],
    objects: 100,
    mix: { update: 0.9, create: 0.05, delete: 0.05 },
    namespaces: { count: 1, skew: 0 },
    labels: [{ key: 'app', count: 10, skew: 0 }],
    labelChurn: 0,
    triggerValues: undefined,
    triggerChurn: 0,
    hotObjects: 0,
    payloadBytes: 200,
  };
  const o = c.object('writes', value);
  if (o === undefined) return w;
  c.keys('writes', o, [
    'rate',
    'objects',
    'mix',
    'namespaces',
    'labels',
    'labelChurn',
    'triggerValues',
    'triggerChurn',
    'hotObjects',
    'payloadBytes',
  ]);
  const steps = c.array('writes.rate', o.rate, { min: 1 });
  if (steps !== undefined) {
    const rate: RateStep[] = [];
    steps.forEach((s, i) => {
      const p = join('writes.rate', i);
      const so = c.object(p, s);
      if (so === undefined) return;
      c.keys(p, so, ['atS', 'perSecond']);
      const atS = c.number(join(p, 'atS'), so.atS, { min: 0, max: durationS });
      const perSecond = c.number(join(p, 'perSecond'), so.perSecond, { min: 0, max: 10_000_000 });
      if (atS === undefined || perSecond === undefined) return;
      if (i === 0 && atS !== 0) c.fail(join(p, 'atS'), `the first step must be at 0, got ${atS}`);
      if (rate.length > 0 && atS <= rate[rate.length - 1]!.atS)
        c.fail(join(p, 'atS'), `steps must be in increasing atS order (${atS} after ${rate[rate.length - 1]!.atS})`);
      rate.push({ atS, perSecond });
    });
    if (rate.length > 0) w.rate = rate;
  }
  w.objects = c.number('writes.objects', o.objects, { integer: true, min: 1, max: 10_000_000 }) ?? w.objects;
  if (o.mix !== undefined) {
    const m = c.object('writes.mix', o.mix);
    if (m !== undefined) {
      c.keys('writes.mix', m, ['update', 'create', 'delete']);
      const update = c.optionalNumber('writes.mix.update', m.update, { min: 0 }) ?? 0;
      const create = c.optionalNumber('writes.mix.create', m.create, { min: 0 }) ?? 0;
      const del = c.optionalNumber('writes.mix.delete', m.delete, { min: 0 }) ?? 0;
      if (update + create + del <= 0) c.fail('writes.mix', 'the weights must not all be 0');
      else w.mix = { update, create, delete: del };
    }
  }
  w.namespaces = checkSkewed(c, 'writes.namespaces', o.namespaces) ?? w.namespaces;
  if (o.labels !== undefined) {
    const labels: LabelSpec[] = [];
    c.array('writes.labels', o.labels)?.forEach((l, i) => {
      const p = join('writes.labels', i);
      const s = checkSkewed(c, p, l, ['key']);
      if (s === undefined) return;
      const key = c.string(join(p, 'key'), s.key, { nonEmpty: true });
      if (key !== undefined && !/^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/.test(key))
        c.fail(join(p, 'key'), `not a valid label key: "${key}"`);
      else if (key !== undefined) labels.push({ key, count: s.count, skew: s.skew });
    });
    w.labels = labels;
  }
  w.labelChurn = c.optionalNumber('writes.labelChurn', o.labelChurn, { min: 0, max: 1 }) ?? 0;
  if (o.triggerValues !== undefined) w.triggerValues = checkSkewed(c, 'writes.triggerValues', o.triggerValues);
  w.triggerChurn = c.optionalNumber('writes.triggerChurn', o.triggerChurn, { min: 0, max: 1 }) ?? 0;
  w.hotObjects = c.optionalNumber('writes.hotObjects', o.hotObjects, { min: 0, max: 5 }) ?? 0;
  w.payloadBytes =
    c.optionalNumber('writes.payloadBytes', o.payloadBytes, { integer: true, min: 0, max: 1_000_000 }) ??
    w.payloadBytes;
  return w;
}

function checkPopulation(
  c: Checker,
  path: string,
  value: unknown,
  writes: WriteSpec,
  durationS: number,
): PopulationSpec | undefined {
  const o = c.object(path, value);
  if (o === undefined) return undefined;
  c.keys(path, o, [
    'name',
    'count',
    'selector',
    'readRate',
    'channelCapacity',
    'startAtS',
    'startSpreadS',
    'start',
    'bookmarks',
    'timeoutS',
    'reconnect',
    'stalls',
    'latencyClass',
  ]);
  const name = c.string(join(path, 'name'), o.name, { nonEmpty: true });
  const count = c.number(join(path, 'count'), o.count, { integer: true, min: 1, max: 1_000_000 });
  let selector: PopulationSpec['selector'] | undefined;
  const so = c.object(join(path, 'selector'), o.selector);
  if (so !== undefined) {
    c.keys(join(path, 'selector'), so, ['kind', 'labelKey']);
    const kind = c.oneOf(join(path, 'selector.kind'), so.kind, [
      'all',
      'namespace',
      'label',
      'trigger',
      'name',
    ] as const);
    if (kind !== undefined) {
      selector = { kind };
      if (kind === 'trigger' && writes.triggerValues === undefined)
        c.fail(
          join(path, 'selector.kind'),
          '"trigger" needs writes.triggerValues (the trigger index on spec.nodeName)',
        );
      if (kind === 'label') {
        const key =
          so.labelKey === undefined ? writes.labels[0]?.key : c.string(join(path, 'selector.labelKey'), so.labelKey);
        if (key === undefined || !writes.labels.some((l) => l.key === key))
          c.fail(join(path, 'selector.labelKey'), `no label "${String(key)}" in writes.labels`);
        else selector.labelKey = key;
      }
    }
  }
  const readRate = checkDist(c, join(path, 'readRate'), o.readRate, { min: 0.001, allowUnlimited: true });
  const channelCapacity = c.optionalNumber(join(path, 'channelCapacity'), o.channelCapacity, { integer: true, min: 1 });
  const startAtS = c.optionalNumber(join(path, 'startAtS'), o.startAtS, { min: 0, max: durationS }) ?? 0;
  const startSpreadS = c.optionalNumber(join(path, 'startSpreadS'), o.startSpreadS, { min: 0 }) ?? 0;
  const start = o.start === undefined ? 'now' : c.oneOf(join(path, 'start'), o.start, ['now', 'list'] as const);
  const bookmarks = o.bookmarks === undefined ? true : c.boolean(join(path, 'bookmarks'), o.bookmarks);
  const timeoutS =
    o.timeoutS === undefined
      ? undefined
      : checkDist(c, join(path, 'timeoutS'), o.timeoutS, { min: 1, allowUnlimited: false });
  const reconnect: ReconnectSpec = { delayMs: 0, fromLastRV: true, relistOn410: true };
  if (o.reconnect !== undefined) {
    const rp = join(path, 'reconnect');
    const ro = c.object(rp, o.reconnect);
    if (ro !== undefined) {
      c.keys(rp, ro, ['delayMs', 'fromLastRV', 'relistOn410']);
      if (ro.delayMs !== undefined)
        reconnect.delayMs = checkDist(c, join(rp, 'delayMs'), ro.delayMs, { min: 0, allowUnlimited: false }) ?? 0;
      if (ro.fromLastRV !== undefined) reconnect.fromLastRV = c.boolean(join(rp, 'fromLastRV'), ro.fromLastRV) ?? true;
      if (ro.relistOn410 !== undefined)
        reconnect.relistOn410 = c.boolean(join(rp, 'relistOn410'), ro.relistOn410) ?? true;
    }
  }
  const stalls: StallEpisode[] = [];
  if (o.stalls !== undefined) {
    c.array(join(path, 'stalls'), o.stalls)?.forEach((s, i) => {
      const p = join(join(path, 'stalls'), i);
      const st = c.object(p, s);
      if (st === undefined) return;
      c.keys(p, st, ['atS', 'forS', 'fraction', 'kind', 'groups', 'staggerS']);
      const atS = c.number(join(p, 'atS'), st.atS, { min: 0, max: durationS });
      const forS = c.number(join(p, 'forS'), st.forS, { min: 0, exclusiveMin: true });
      const fraction = c.number(join(p, 'fraction'), st.fraction, { min: 0, max: 1 });
      const kind =
        st.kind === undefined ? 'stall' : c.oneOf(join(p, 'kind'), st.kind, ['stall', 'disconnect'] as const);
      const groups = c.optionalNumber(join(p, 'groups'), st.groups, { integer: true, min: 1, max: 100_000 }) ?? 1;
      const staggerS = c.optionalNumber(join(p, 'staggerS'), st.staggerS, { min: 0 }) ?? 0;
      if (atS !== undefined && forS !== undefined && fraction !== undefined && kind !== undefined)
        stalls.push({ atS, forS, fraction, kind, groups, staggerS });
    });
  }
  const latencyClass =
    o.latencyClass === undefined
      ? undefined
      : c.oneOf(join(path, 'latencyClass'), o.latencyClass, ['healthy', 'slow'] as const);
  if (
    name === undefined ||
    count === undefined ||
    selector === undefined ||
    readRate === undefined ||
    start === undefined ||
    bookmarks === undefined
  )
    return undefined;
  return {
    name,
    count,
    selector,
    readRate,
    channelCapacity,
    startAtS,
    startSpreadS,
    start,
    bookmarks,
    timeoutS,
    reconnect,
    stalls,
    latencyClass,
  };
}
