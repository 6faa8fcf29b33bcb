/**
 * PhaseProfiler: V8 CPU profiles of one phase of a bench run at a time (the
 * KEP bench's stall phase, then its resume phase), through node:inspector in
 * the bench child itself, so a profile holds only what the phase did. Used
 * when the bench runs with `--cpu-prof DIR` (lib/isolate.ts); each phase is
 * written as DIR/<name>.cpuprofile (open it in Chrome DevTools or speedscope).
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class PhaseProfiler {
  private readonly session = new Session();
  private running = false;

  private constructor(private readonly dir: string) {
    this.session.connect();
  }

  /** A profiler writing into `dir`; undefined when `dir` is (not profiling). */
  static async open(dir: string | undefined): Promise<PhaseProfiler | undefined> {
    if (dir === undefined) return undefined;
    const p = new PhaseProfiler(dir);
    await p.session.post('Profiler.enable');
    // 200 µs: fine enough for the per-event paths, coarse enough not to load a 2-vCPU machine.
    await p.session.post('Profiler.setSamplingInterval', { interval: 200 });
    return p;
  }

  /** Start profiling a phase. */
  async begin(): Promise<void> {
    await this.session.post('Profiler.start');
    this.running = true;
  }

  /** End the phase begun last and write it as `<name>.cpuprofile`; returns the file. */
  async end(name: string): Promise<string | undefined> {
    if (!this.running) return undefined;
    this.running = false;
    const { profile } = await this.session.post('Profiler.stop');
    const file = join(this.dir, `${name.replace(/[^\w.-]+/g, '_')}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return file;
  }

  close(): void {
    this.session.disconnect();
  }
}
