/**
 * Runs many simulations (variants of one or more scenarios) in parallel
 * across cores with a piscina worker pool, with a progress bar on stderr.
 * Results come back in task order. Workers get a larger young generation
 * than the default (see YOUNG_GENERATION_MB); `inProcess` runs them here.
 */
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ProgressBar } from './progress.js';
import type { SimResult, Variant } from './result.js';
import type { Scenario } from './scenario.js';
import { simulate } from './simulator.js';
import type { SweepTask } from './sweep-worker.js';

const YOUNG_GENERATION_MB = 192;

export interface RunOptions {
  /** Worker threads (default: available cores, at most the number of tasks). */
  threads?: number;
  /** Draw progress on stderr (default true). */
  progress?: boolean;
  /** Run in this thread even for several tasks (no pool). */
  inProcess?: boolean;
}

export interface Job {
  scenario: Scenario;
  variant: Variant;
}

function jobName(job: Job): string {
  return `${job.scenario.name}/${job.variant.label}`;
}

export async function runJobs(jobs: Job[], options: RunOptions = {}): Promise<SimResult[]> {
  const bar = new ProgressBar(jobs.length, process.stderr, options.progress !== false);
  try {
    if (options.inProcess === true) {
      const out: SimResult[] = [];
      for (const job of jobs) {
        const name = jobName(job);
        const r = await simulate(job.scenario, job.variant, { onProgress: (f) => bar.update(name, f) });
        bar.finished(name, `${(r.real.runMs / 1000).toFixed(1)}s`);
        out.push(r);
      }
      return out;
    }
    const threads = Math.max(1, Math.min(jobs.length, options.threads ?? availableParallelism()));
    const pool = new Piscina<SweepTask, SimResult>({
      filename: new URL('./sweep-worker.js', import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 1000,
      // A simulation allocates fast (decoded events, promises): a larger young generation
      // saves a third of the run time in garbage collection.
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    try {
      return await Promise.all(
        jobs.map(async (job) => {
          const name = jobName(job);
          const { port1, port2 } = new MessageChannel();
          port1.on('message', (f: number) => bar.update(name, f));
          try {
            const task: SweepTask = { scenario: job.scenario, variant: job.variant, port: port2 };
            const r = await pool.run(task, { transferList: [port2] });
            bar.finished(name, `${(r.real.runMs / 1000).toFixed(1)}s`);
            return r;
          } finally {
            port1.close();
          }
        }),
      );
    } finally {
      await pool.destroy();
    }
  } finally {
    bar.end();
  }
}
