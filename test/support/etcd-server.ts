/**
 * Test helper: a throwaway single-member etcd started through scripts/etcd.sh (free loopback ports,
 * a fresh data dir under a temporary DIR, tracked by pid). `startEtcd()` resolves to null when the
 * `etcd` binary is not installed and CI is unset (the caller then does `t.skip('etcd not installed')`);
 * under CI a missing etcd is an error. The script gets WC_ETCD_OWNER_PID=this process, so its
 * watchdog kills etcd even if the test process dies without calling stop().
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EtcdServer {
  /** Client URL, e.g. http://127.0.0.1:PORT (stable across kill()/restart()). */
  readonly endpoint: string;
  /** The script's state dir (etcd.pid, endpoint, etcd.log, the data dir). */
  readonly dir: string;
  /** TERM (then KILL) etcd and remove its state dir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL etcd, keeping its data dir and ports (for fault tests). */
  kill(): Promise<void>;
  /** SIGKILL if running, then start again on the same data dir and ports; resolves once healthy. */
  restart(): Promise<void>;
  /** The last lines of etcd's log (for failure messages). */
  logTail(lines?: number): Promise<string>;
}

export interface StartEtcdOptions {
  /** --experimental-watch-progress-notify-interval (default '1s'). */
  progressNotifyInterval?: string;
}

/** True when `name` is an executable on PATH. */
function onPath(name: string): boolean {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  return dirs.some((d) => existsSync(join(d, name)));
}

/** scripts/etcd.sh, found by walking up from this file (works from dist/test/support and test/support). */
function findScript(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'scripts', 'etcd.sh');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('scripts/etcd.sh not found above ' + fileURLToPath(import.meta.url));
}

function run(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [script, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`etcd.sh ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout.trim());
    });
  });
}

export async function startEtcd(options: StartEtcdOptions = {}): Promise<EtcdServer | null> {
  if (!onPath('etcd') || !onPath('etcdctl')) {
    if (process.env.CI)
      throw new Error('etcd/etcdctl not installed, but CI is set: install etcd-server and etcd-client');
    return null;
  }
  const script = findScript();
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = await mkdtemp(join(base, 'watchcache-etcd-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WC_ETCD_OWNER_PID: String(process.pid),
    WC_ETCD_PROGRESS_NOTIFY_INTERVAL: options.progressNotifyInterval ?? '1s',
  };
  let endpoint: string;
  try {
    endpoint = await run(script, ['start', dir], env);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let stopped = false;
  return {
    endpoint,
    dir,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await run(script, ['stop', dir, '--purge'], env);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    async kill() {
      await run(script, ['kill', dir], env);
    },
    async restart() {
      await run(script, ['restart', dir], env);
    },
    async logTail(lines = 30) {
      try {
        return (await readFile(join(dir, 'etcd.log'), 'utf8')).split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
  };
}
