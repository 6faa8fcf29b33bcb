/**
 * Flags of `watchcache bench` / `npm run bench` (API.md: --modes --watchers
 * --stalled --rate --duration --json --html, plus --quick/--full and a few
 * suite selectors) and the plan they resolve to. Pure: no I/O.
 */
import { parseArgs } from 'node:util';
import { MODES, type Mode } from '../src/index.js';
import type { SlowVariant } from './lib/types.js';

export type Suite = 'kep' | 'catchup' | 'throughput' | 'floor' | 'peers' | 'proxy';
export const SUITES: readonly Suite[] = ['kep', 'catchup', 'throughput', 'floor', 'peers', 'proxy'];
/** What runs without --suite (the proxy fleet is asked for by name: it starts P+1 servers per mode). */
export const DEFAULT_SUITES: readonly Suite[] = ['kep', 'catchup', 'throughput', 'floor', 'peers'];

export interface BenchPlan {
  help: boolean;
  quick: boolean;
  suites: Suite[];
  modes: Mode[];
  json: string | undefined;
  html: string | undefined;
  /** --cpu-prof DIR: every bench child writes V8 CPU profiles there (lib/isolate.ts). */
  cpuProfDir: string | undefined;
  kep: {
    modes: Mode[];
    slowCounts: number[];
    variants: SlowVariant[];
    rateVariantCounts: number[] | undefined;
    healthy: number;
    rate: number;
    slowReadRate: number;
    channelCapacity: number;
    durationS: number;
  };
  catchup: {
    modes: Mode[];
    watchers: number[];
    historyEvents: number;
    rate: number;
    baselineS: number;
    maxS: number;
    channelCapacity: number;
    /** Runs of each (mode, W); the report shows the median one (catchup/median-run.ts). */
    repeat: number;
  };
  throughput: { modes: Mode[]; durationS: number; bigWatchers: number };
  floor: { timeMs: number };
  proxy: {
    proxies: number;
    clientsPerProxy: number;
    slowPerProxy: number;
    rate: number;
    durationS: number;
    blipS: number;
  };
  peers: {
    naiveCounts: number[];
    naiveDurationS: number;
    rate: number;
    etcd: boolean;
    etcdWatchers: number[];
    etcdRate: number;
    etcdDurationS: number;
    http: boolean;
    httpClients: number;
    httpStalled: number;
    httpRate: number;
    httpDurationS: number;
  };
}

export const USAGE = `Usage: watchcache bench [options]

Benchmarks every mode side by side (the KEP bench, throughput, the floor and
real peers; the catch-up suite), with terminal tables, a JSON file and an HTML report.

Options:
  --modes LIST                  Modes to run (default off,alpha,beta)
  --watchers N                  Healthy watchers next to the slow ones (default 1)
  --stalled N[,N...]            Slow watchers; a list sweeps (default quick 0,100,1000,10000; full adds 100000)
  --rate EVENTS_PER_S           Writer rate (default 1000)
  --duration S                  Length of each KEP run: half stall, half resume (default quick 4, full 10)
  --quick                       The default: smaller N and shorter runs (a few minutes on 2 cores)
  --full                        The whole sweep (N up to 100,000; etcd with W up to 1000)
  --suite LIST                  kep,catchup,throughput,floor,peers (default all); proxy: the caching-proxy
                                fleet (not in the default run): P proxies in front of one root, C
                                clients each (S of them slow), writes at R/s; a 5 s blip cuts half
                                the proxies' upstream
  --proxies P                   Proxies in the proxy suite (default 20)
  --proxy-clients C             Clients per proxy (default 4)
  --proxy-slow S                Slow clients per proxy (default 1)
  --proxy-rate R                Writes/s at the root in the proxy suite (default 200)
  --proxy-duration S            Length of the proxy run (default quick 20, full 40)
  --catchup-watchers W[,W...]   Catchup suite: watchers opened 50,000 events behind (default 1,100,1000)
  --catchup-max S               Catchup suite: bound on each catch-up window (default quick 30, full 120)
  --catchup-repeat N            Catchup suite: run each (mode, W) N times, modes interleaved, and report the
                                median run (default 1): one run's "all resynced" is a single sample, and on a
                                shared 2-vCPU VM it swings by a third from run to run
  --variants LIST               stalled,rate (default both)
  --slow-read-rate EVENTS_PER_S Read rate of the slow watchers in the rate variant
  --channel-capacity N          Per-watcher channel size
  --no-etcd                     Skip the etcd peer
  --no-http                     Skip the HTTP peer
  --cpu-prof DIR                Write a V8 CPU profile of every bench child into DIR (and the KEP
                                stall and resume phases apart, kep-<mode>-<variant>-<N>-stall.cpuprofile)
  --json FILE                   Results as JSON (default bench-results/latest.json)
  --html FILE                   Self-contained HTML report (default bench-results/latest.html)
  -h, --help                    Show this help
`;

function list(s: string | undefined): string[] | undefined {
  return s === undefined
    ? undefined
    : s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
}

/** A whole number of times, at least 1. */
function count(name: string, s: string | undefined): number | undefined {
  const n = int(name, s, 1);
  if (n !== undefined && !Number.isInteger(n)) throw new Error(`--${name} must be a whole number >= 1, got "${s}"`);
  return n;
}

function int(name: string, s: string | undefined, min: number): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got "${s}"`);
  return n;
}

function proxyPlan(values: Record<string, string | boolean | undefined>, quick: boolean): BenchPlan['proxy'] {
  const str = (k: string): string | undefined => (typeof values[k] === 'string' ? values[k] : undefined);
  const clientsPerProxy = int('proxy-clients', str('proxy-clients'), 1) ?? 4;
  const slowPerProxy = int('proxy-slow', str('proxy-slow'), 0) ?? 1;
  if (slowPerProxy >= clientsPerProxy)
    throw new Error(
      `--proxy-slow (${slowPerProxy}) must be below --proxy-clients (${clientsPerProxy}): some clients must be healthy`,
    );
  const durationS = int('proxy-duration', str('proxy-duration'), 8) ?? (quick ? 20 : 40);
  return {
    proxies: int('proxies', str('proxies'), 2) ?? 20,
    clientsPerProxy,
    slowPerProxy,
    rate: int('proxy-rate', str('proxy-rate'), 1) ?? 200,
    durationS,
    blipS: 5,
  };
}

/** Parse argv (without node and script). Throws an Error with a message for bad flags. */
export function parseBenchArgs(argv: string[]): BenchPlan {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      modes: { type: 'string' },
      watchers: { type: 'string' },
      stalled: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      json: { type: 'string' },
      html: { type: 'string' },
      'cpu-prof': { type: 'string' },
      quick: { type: 'boolean' },
      full: { type: 'boolean' },
      suite: { type: 'string' },
      variants: { type: 'string' },
      'slow-read-rate': { type: 'string' },
      'channel-capacity': { type: 'string' },
      'no-etcd': { type: 'boolean' },
      'no-http': { type: 'boolean' },
      proxies: { type: 'string' },
      'proxy-clients': { type: 'string' },
      'proxy-slow': { type: 'string' },
      'proxy-rate': { type: 'string' },
      'proxy-duration': { type: 'string' },
      'catchup-watchers': { type: 'string' },
      'catchup-max': { type: 'string' },
      'catchup-repeat': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.quick && values.full) throw new Error('--quick and --full exclude each other');
  const quick = values.full !== true;
  const modes = (list(values.modes) ?? [...MODES]) as Mode[];
  for (const m of modes) if (!MODES.includes(m)) throw new Error(`unknown mode "${m}" in --modes (off, alpha, beta)`);
  const suites = (list(values.suite) ?? [...DEFAULT_SUITES]) as Suite[];
  for (const s of suites)
    if (!SUITES.includes(s)) throw new Error(`unknown suite "${s}" in --suite (${SUITES.join(', ')})`);
  const variantNames = list(values.variants) ?? ['stalled', 'rate'];
  for (const v of variantNames)
    if (v !== 'stalled' && v !== 'rate') throw new Error(`unknown variant "${v}" in --variants (stalled, rate)`);
  const variants = variantNames as SlowVariant[];
  const stalled = list(values.stalled)?.map((s) => int('stalled', s, 0)!);
  const rate = int('rate', values.rate, 1) ?? 1000;
  const durationS = int('duration', values.duration, 0.5) ?? (quick ? 4 : 10);
  const slowCounts = stalled ?? (quick ? [0, 100, 1000, 10_000] : [0, 100, 1000, 10_000, 100_000]);
  return {
    help: values.help === true,
    quick,
    suites,
    modes,
    json: values.json ?? 'bench-results/latest.json',
    html: values.html ?? 'bench-results/latest.html',
    cpuProfDir: values['cpu-prof'],
    kep: {
      modes,
      slowCounts,
      variants,
      rateVariantCounts: stalled !== undefined ? undefined : quick ? [1000] : [100, 1000, 10_000],
      healthy: int('watchers', values.watchers, 1) ?? 1,
      rate,
      slowReadRate: int('slow-read-rate', values['slow-read-rate'], 0) ?? rate / 4,
      channelCapacity: int('channel-capacity', values['channel-capacity'], 1) ?? 100,
      durationS,
    },
    catchup: {
      modes,
      watchers: list(values['catchup-watchers'])?.map((s) => int('catchup-watchers', s, 1)!) ?? [1, 100, 1000],
      historyEvents: 50_000,
      rate,
      baselineS: quick ? 2 : 4,
      maxS: int('catchup-max', values['catchup-max'], 1) ?? (quick ? 30 : 120),
      repeat: count('catchup-repeat', values['catchup-repeat']) ?? 1,
      channelCapacity: int('channel-capacity', values['channel-capacity'], 1) ?? 100,
    },
    throughput: { modes, durationS: quick ? 2.5 : 6, bigWatchers: 100_000 },
    floor: { timeMs: quick ? 250 : 1000 },
    proxy: proxyPlan(values, quick),
    peers: {
      naiveCounts: quick ? [10_000] : [10_000, 100_000],
      naiveDurationS: quick ? 3 : 8,
      rate,
      etcd: values['no-etcd'] !== true,
      etcdWatchers: quick ? [100] : [100, 1000],
      etcdRate: quick ? 200 : 500,
      etcdDurationS: quick ? 4 : 10,
      http: values['no-http'] !== true,
      // Enough bytes for a paused stream to back up through loopback TCP buffers (~3,000 events of 2 KiB).
      // More reading clients than this saturate the one client process on 2 vCPUs, not the server.
      httpClients: quick ? 50 : 200,
      httpStalled: quick ? 50 : 100,
      httpRate: quick ? 400 : 300,
      httpDurationS: quick ? 8 : 15,
    },
  };
}
