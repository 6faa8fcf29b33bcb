/**
 * `watchcache bench` (API.md): runs the suite, prints the tables, writes the
 * JSON report and the HTML report. `runBenchCommand(argv)` is what the CLI
 * wires to; it resolves to an exit code (0 ok, 1 a suite failed to produce
 * anything, 2 bad flags) and never calls process.exit itself.
 *
 * Order: floor first (quietest machine state), then the KEP sweep, the
 * catch-up suite, the throughput bench and the peers; every bench configuration runs in its own
 * child process and is bounded in time.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { parseBenchArgs, USAGE, type BenchPlan } from './bench-args.js';
import { runFloorIsolated } from './floor.js';
import { runLiveDispatchSweep } from './live-dispatch.js';
import { runCatchupSweep } from './catchup/catchup-bench.js';
import { runKepSweep } from './kep-bench.js';
import { profileChildrenInto } from './lib/isolate.js';
import { BETA_NOTE } from './lib/modes.js';
import type { BenchReport, PeerResults } from './lib/types.js';
import { runEtcdPeerIsolated } from './peers/etcd-peer.js';
import { runHttpPeer } from './peers/http-peer.js';
import { runProxySweep } from './proxy-bench.js';
import { runNaiveSweep } from './peers/naive-fanout.js';
import { renderHtml } from './report/html.js';
import { computeRatios } from './report/ratios.js';
import { printReport } from './report/tables.js';
import { runThroughputSweep } from './throughput.js';

const NOTES = [
  BETA_NOTE,
  "All watch consumers run in-process on the main thread, as a single-threaded server's stream writers would: the resume-phase latency includes N slow clients draining their backlog on that thread; the stall-phase latency is the KEP's measurement (N stalled watchers present).",
  'Latency is write -> receipt (writer call to the consumer\'s loop), HdrHistogram, 3 significant digits. "writer lag" is how late the fixed-rate writer ran against its schedule (main-thread stalls).',
  'off-mode clients reconnect at once from their last RV after a force-close (client-go behaviour) and re-list after a 410, so off mode shows the force-close/reconnect loop the KEP describes.',
  'deliveries/s out = events taken out of channels + left in channels (+ a full channel per force-closed watch), over the run time.',
  '"heap B/slow @end" is the heap growth from before the slow watchers to the end of the run, per slow watcher, after a full GC: it includes the history\'s own growth (compare with N = 0).',
  "The throughput split comes from the engine's own per-event phase timings (the watchcache:event diagnostics channel, docs/observability.md), published only while the bench subscribes.",
  "Floor ratios use the floor task's median; the machine is a shared 2-vCPU VM, so compare ratios from one run rather than absolute values across runs (see the load average).",
];

async function step<T>(name: string, log: (l: string) => void, fn: () => Promise<T>, fallback: T): Promise<T> {
  const t0 = performance.now();
  try {
    const r = await fn();
    log(`${name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return r;
  } catch (err) {
    log(`${name}: FAILED: ${(err as Error).stack ?? String(err)}`);
    return fallback;
  }
}

/** Run the suites of `plan`; `log` gets progress lines (stderr by default). */
export async function runSuite(plan: BenchPlan, argv: string[], log: (l: string) => void): Promise<BenchReport> {
  const t0 = performance.now();
  const loadStart = loadavg()[0] ?? 0;
  const has = (s: string): boolean => plan.suites.includes(s as BenchPlan['suites'][number]);
  const floor = has('floor')
    ? await step('floor', log, () => runFloorIsolated({ timeMs: plan.floor.timeMs, bigFanout: 100_000 }), [])
    : [];
  const liveDispatch = has('floor')
    ? await step('live dispatch', log, () => runLiveDispatchSweep({ modes: plan.modes, watchers: 10_000, log }), [])
    : [];
  const kep = has('kep') ? await step('kep', log, () => runKepSweep({ ...plan.kep, log }), []) : [];
  const catchup = has('catchup') ? await step('catchup', log, () => runCatchupSweep({ ...plan.catchup, log }), []) : [];
  const throughput = has('throughput')
    ? await step('throughput', log, () => runThroughputSweep({ ...plan.throughput, log }), [])
    : [];
  const peers: PeerResults = { naive: [], etcd: [], etcdSkipped: 'not run', http: [], httpSkipped: 'not run' };
  if (has('peers')) {
    const engineModes = plan.modes.filter((m) => m !== 'off');
    peers.naive = await step(
      'peer naive',
      log,
      () =>
        runNaiveSweep({
          counts: plan.peers.naiveCounts,
          rate: plan.peers.rate,
          durationS: plan.peers.naiveDurationS,
          engineModes,
          log,
        }),
      [],
    );
    if (plan.peers.etcd) {
      const mode = plan.modes.includes('beta') ? 'beta' : (plan.modes[plan.modes.length - 1] ?? 'beta');
      const r = await step(
        'peer etcd',
        log,
        () =>
          runEtcdPeerIsolated({
            watchers: plan.peers.etcdWatchers,
            rate: plan.peers.etcdRate,
            durationS: plan.peers.etcdDurationS,
            mode,
          }),
        { rows: [], skipped: 'failed (see the log)' },
      );
      peers.etcd = r.rows;
      peers.etcdSkipped = r.skipped;
    } else peers.etcdSkipped = 'skipped (--no-etcd)';
    if (plan.peers.http) {
      const r = await step(
        'peer http',
        log,
        () =>
          runHttpPeer({
            modes: plan.modes,
            clients: plan.peers.httpClients,
            stalled: plan.peers.httpStalled,
            rate: plan.peers.httpRate,
            durationS: plan.peers.httpDurationS,
            log,
          }),
        { rows: [], skipped: 'failed (see the log)' },
      );
      peers.http = r.rows;
      peers.httpSkipped = r.skipped;
    } else peers.httpSkipped = 'skipped (--no-http)';
  }
  const proxy = has('proxy')
    ? await step('proxy', log, () => runProxySweep({ modes: plan.modes, ...plan.proxy, log }), [])
    : [];
  const cpu = cpus();
  const report: BenchReport = {
    meta: {
      node: process.version,
      date: new Date().toISOString(),
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      memGiB: totalmem() / 2 ** 30,
      loadStart,
      loadEnd: loadavg()[0] ?? 0,
      argv,
      quick: plan.quick,
      modes: plan.modes,
      notes: NOTES,
      wallS: (performance.now() - t0) / 1000,
    },
    kep,
    catchup,
    throughput,
    floor,
    liveDispatch,
    peers,
    proxy,
    ratios: [],
  };
  report.ratios = computeRatios(report);
  return report;
}

function writeOut(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** `watchcache bench [flags]`: resolves to the exit code. */
export async function runBenchCommand(argv: string[]): Promise<number> {
  let plan: BenchPlan;
  try {
    plan = parseBenchArgs(argv);
  } catch (err) {
    process.stderr.write(`watchcache bench: ${(err as Error).message}\nRun 'watchcache bench --help' for usage.\n`);
    return 2;
  }
  if (plan.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const log = (l: string): void => void process.stderr.write(`[bench] ${l}\n`);
  if (plan.cpuProfDir !== undefined) {
    profileChildrenInto(plan.cpuProfDir);
    log(`CPU profiles of every bench child go to ${plan.cpuProfDir}`);
  }
  log(`${plan.quick ? 'quick' : 'full'} run: suites ${plan.suites.join(',')}, modes ${plan.modes.join(',')}`);
  const report = await runSuite(plan, argv, log);
  printReport(report);
  if (plan.json !== undefined) {
    writeOut(plan.json, JSON.stringify(report, null, 2) + '\n');
    log(`wrote ${plan.json}`);
  }
  if (plan.html !== undefined) {
    writeOut(plan.html, renderHtml(report));
    log(`wrote ${plan.html}`);
  }
  const empty =
    report.kep.length +
      report.catchup.length +
      report.throughput.length +
      report.floor.length +
      report.peers.naive.length +
      report.peers.etcd.length +
      report.peers.http.length +
      (report.proxy?.length ?? 0) ===
    0;
  return empty ? 1 : 0;
}
