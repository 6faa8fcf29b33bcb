/**
 * Run one bench configuration in a fresh child process, so that RSS, heap and
 * JIT state of one run never leak into the next, and a run that overruns is
 * killed (every run is bounded in time). The child is the same compiled bench
 * module started with `--child <json config>`; it answers with one IPC
 * message `{ ok, result | error }` and exits.
 *
 * Profiling (`--cpu-prof DIR`, profileChildrenInto): every child from then on
 * runs under node's `--cpu-prof` into DIR (a V8 CPU profile of its whole run,
 * written when it exits, so the parent waits for that exit instead of killing
 * it), and finds DIR in WATCHCACHE_BENCH_CPU_PROF to write profiles of its own
 * phases (kep-bench.ts: the stall phase and the resume phase apart).
 */
import { fork } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where children write CPU profiles (undefined: not profiling). */
let cpuProfDir: string | undefined;
const CPU_PROF_ENV = 'WATCHCACHE_BENCH_CPU_PROF';
/** How long a profiled child may take to write its profile after answering. */
const PROFILE_EXIT_MS = 60_000;

/** `--cpu-prof DIR`: every child started from now on writes its CPU profiles into `dir`. */
export function profileChildrenInto(dir: string): void {
  mkdirSync(dir, { recursive: true });
  cpuProfDir = dir;
}

/** In a child: the directory for its phase profiles, when the bench runs with `--cpu-prof`. */
export function childCpuProfDir(): string | undefined {
  return process.env[CPU_PROF_ENV];
}

interface ChildAnswer<T> {
  ok: boolean;
  result?: T;
  error?: string;
}

/** Fork `moduleUrl` with `--child <config>`; reject on error, crash or after `timeoutMs`. */
export function runIsolated<C, T>(moduleUrl: URL, config: C, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const profDir = cpuProfDir;
    const child = fork(fileURLToPath(moduleUrl), ['--child', JSON.stringify(config)], {
      execArgv: [
        '--expose-gc',
        '--max-old-space-size=3072',
        ...(profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`]),
      ],
      env: profDir === undefined ? process.env : { ...process.env, [CPU_PROF_ENV]: profDir },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let settled = false;
    const running = (): boolean => child.exitCode === null && child.signalCode === null;
    const finish = (err: Error | undefined, value?: T): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const settle = (): void => (err !== undefined ? reject(err) : resolve(value as T));
      if (!running()) return settle();
      if (profDir === undefined || err !== undefined) {
        child.kill('SIGKILL');
        return settle();
      }
      // A profiled child writes its whole-run profile as it exits: let it, within a bound.
      const kill = setTimeout(() => child.kill('SIGKILL'), PROFILE_EXIT_MS);
      child.once('exit', () => {
        clearTimeout(kill);
        settle();
      });
    };
    const timer = setTimeout(
      () => finish(new Error(`bench child ${moduleUrl.pathname} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.on('message', (msg: ChildAnswer<T>) => {
      if (msg.ok) finish(undefined, msg.result);
      else finish(new Error(msg.error ?? 'bench child failed'));
    });
    child.on('error', (err) => finish(err));
    child.on('exit', (code, signal) =>
      finish(new Error(`bench child exited (code ${code}, signal ${signal}) without a result`)),
    );
  });
}

/**
 * In a bench module: when started as a child (`--child <json>`), run
 * `handler(config)`, send the answer and exit; returns false otherwise.
 */
export function serveChild<C, T>(handler: (config: C) => Promise<T>): boolean {
  const i = process.argv.indexOf('--child');
  if (i < 0 || process.send === undefined) return false;
  const config = JSON.parse(process.argv[i + 1] ?? '{}') as C;
  handler(config).then(
    (result) => process.send!({ ok: true, result } satisfies ChildAnswer<T>, () => process.exit(0)),
    (err: unknown) =>
      process.send!(
        { ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ChildAnswer<T>,
        () => process.exit(1),
      ),
  );
  return true;
}

/** True when `moduleUrl` is the script node was started with (not imported). */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1];
  return entry !== undefined && fileURLToPath(moduleUrl) === entry;
}
