/**
 * `watchcache simulate [--scenario FILE]... [--json FILE] [--html FILE]
 *                      [--sweep PARAM=v1,v2,...] [--modes off,alpha,beta]
 *                      [--pass K=V,...] [--threads N] [--no-progress]`
 *
 * Runs each scenario (default: the four shipped ones) in every mode (or the
 * given modes), times every sweep value, in parallel across cores, then
 * prints the table and writes the JSON and HTML reports. Returns the exit
 * code: 0 done, 2 bad usage or an invalid scenario, 1 a run failed.
 */
import { writeFile } from 'node:fs/promises';
import { renderHtml } from './report-html.js';
import { renderTable } from './report-table.js';
import { scenarioRun, type SimReport } from './report.js';
import { ScenarioError, loadScenario, type Scenario } from './scenario.js';
import { shippedScenarioFiles } from './shipped-scenarios.js';
import { runJobs, type Job } from './sweep.js';
import { SweepError, buildVariants, parseModes, parseSettings, parseSweep, type Sweep } from './variant.js';
import type { Mode } from '../cache/cache-options.js';

export const SIMULATE_USAGE = `Usage: watchcache simulate [options]

Runs the real engine under virtual time on each scenario (default: the four
shipped scenarios) in each mode, and reports the KEP-6268 measurements.

Options:
  --scenario FILE               A scenario JSON file (repeatable)
  --json FILE                   Write every result as JSON
  --html FILE                   Write a self-contained HTML report with plots
  --sweep PARAM=v1,v2,...       Also vary one parameter: mode, candidateOrder, maxWatchers,
                                scanBudget, pushBudget, budget (both), intervalOpenCost,
                                normalPeriodMs, idlePeriodMs, busyMinMs, busyMaxMs, busyShare,
                                handOffDistance, consumerWindow, channelCapacity,
                                historyUpperBound, writeScale
  --modes LIST                  Modes to run (default: the scenario's, usually off,alpha,beta)
  --pass K=V,...                Fixed settings for every variant (same names as --sweep)
  --threads N                   Worker threads (default: all cores)
  --no-progress                 No progress bar on stderr
  -h, --help                    Show this help
`;

interface Args {
  scenarios: string[];
  json: string | undefined;
  html: string | undefined;
  sweep: Sweep | undefined;
  modes: Mode[] | undefined;
  settings: Sweep[];
  threads: number | undefined;
  progress: boolean;
  help: boolean;
}

class UsageError extends Error {}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    scenarios: [],
    json: undefined,
    html: undefined,
    sweep: undefined,
    modes: undefined,
    settings: [],
    threads: undefined,
    progress: true,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string => {
      if (eq > 0) return arg.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined || (v.startsWith('--') && v.length > 2)) throw new UsageError(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case '--scenario':
        a.scenarios.push(
          ...value()
            .split(',')
            .filter((s) => s !== ''),
        );
        break;
      case '--json':
        a.json = value();
        break;
      case '--html':
        a.html = value();
        break;
      case '--sweep':
        if (a.sweep !== undefined) throw new UsageError('--sweep may be given once');
        a.sweep = parseSweep(value());
        break;
      case '--modes':
        a.modes = parseModes(value());
        break;
      case '--pass':
        a.settings.push(...parseSettings(value()));
        break;
      case '--threads': {
        const n = Number(value());
        if (!Number.isInteger(n) || n < 1) throw new UsageError('--threads must be an integer >= 1');
        a.threads = n;
        break;
      }
      case '--no-progress':
        a.progress = false;
        break;
      case '-h':
      case '--help':
        a.help = true;
        break;
      default:
        throw new UsageError(`unknown argument "${arg}"`);
    }
  }
  return a;
}

export async function runSimulateCommand(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (err instanceof UsageError || err instanceof SweepError) {
      process.stderr.write(`watchcache simulate: ${err.message}\nRun 'watchcache simulate --help' for usage.\n`);
      return 2;
    }
    throw err;
  }
  if (args.help) {
    process.stdout.write(SIMULATE_USAGE);
    return 0;
  }
  const files = args.scenarios.length > 0 ? args.scenarios : shippedScenarioFiles();
  const scenarios: Scenario[] = [];
  for (const f of files) {
    try {
      scenarios.push(await loadScenario(f));
    } catch (err) {
      if (err instanceof ScenarioError) {
        process.stderr.write(`watchcache simulate: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
  }
  const jobs: Job[] = [];
  for (const s of scenarios)
    for (const variant of buildVariants(args.modes ?? s.modes, args.sweep, args.settings))
      jobs.push({ scenario: s, variant });
  let results;
  try {
    results = await runJobs(jobs, {
      progress: args.progress,
      ...(args.threads !== undefined ? { threads: args.threads } : {}),
    });
  } catch (err) {
    process.stderr.write(
      `watchcache simulate: a run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
  const report: SimReport = {
    tool: 'watchcache simulate',
    format: 1,
    command: ['watchcache simulate', ...argv].join(' '),
    sweep: args.sweep ?? null,
    runs: scenarios.map((s) =>
      scenarioRun(
        s,
        results.filter((_, i) => jobs[i]!.scenario === s),
      ),
    ),
  };
  process.stdout.write(renderTable(report));
  try {
    if (args.json !== undefined) await writeFile(args.json, JSON.stringify(report) + '\n');
    if (args.html !== undefined) await writeFile(args.html, renderHtml(report));
  } catch (err) {
    process.stderr.write(`watchcache simulate: cannot write the report: ${(err as Error).message}\n`);
    return 1;
  }
  if (args.json !== undefined) process.stderr.write(`wrote ${args.json}\n`);
  if (args.html !== undefined) process.stderr.write(`wrote ${args.html}\n`);
  return 0;
}
