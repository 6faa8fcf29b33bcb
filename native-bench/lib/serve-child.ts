/**
 * `watchcache serve` as a child process of a benchmark: start it with the
 * given flags (port 0), wait for its listening line, and stop it (SIGTERM,
 * then SIGKILL after 5 s). Used by peer (c) and the proxy bench.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface ServeChild {
  child: ChildProcess;
  url: string;
  port: number;
}

export function startServe(args: string[]): Promise<ServeChild> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`watchcache serve did not report its URL within 15 s: ${out}`));
    }, 15_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /watchcache serving .* on (http:\/\/[^\s]+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, port: Number(new URL(m[1]!).port) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`watchcache serve exited (code ${code}): ${out.slice(-500)}`));
    });
  });
}

export async function stopServe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Sum the samples of a Prometheus text exposition whose line matches `re`. */
export function sumMetric(text: string, re: RegExp): number {
  return text
    .split('\n')
    .filter((l) => re.test(l))
    .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}
