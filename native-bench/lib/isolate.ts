/**
 * Run one bench configuration in a fresh child process, so that RSS, heap and
 * JIT state of one run never leak into the next, and a run that overruns is
 * killed (every run is bounded in time). The child is the same compiled bench
 * module started with `--child <json config>`; it answers with one IPC
 * message `{ ok, result | error }` and exits.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface ChildAnswer<T> {
  ok: boolean;
  result?: T;
  error?: string;
}

/** Fork `moduleUrl` with `--child <config>`; reject on error, crash or after `timeoutMs`. */
export function runIsolated<C, T>(moduleUrl: URL, config: C, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const child = fork(fileURLToPath(moduleUrl), ['--child', JSON.stringify(config)], {
      execArgv: ['--expose-gc', '--max-old-space-size=3072'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let settled = false;
    const finish = (err: Error | undefined, value?: T): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (err !== undefined) reject(err);
      else resolve(value as T);
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
