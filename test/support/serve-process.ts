/**
 * `watchcache serve` as a real child process on port 0: waits for the
 * listening line and returns the port, the child and its exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const LISTENING_LINE = /^watchcache serving (\S+) on (https?):\/\/127\.0\.0\.1:(\d+) \(mode (\w+), store (\w+)\)$/m;
const LINE = LISTENING_LINE;

export interface Served {
  child: ChildProcess;
  port: number;
  url: string;
  line: RegExpExecArray;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function serve(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  const line = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${err}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = LINE.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    void exited.then(({ code }) => reject(new Error(`exited with ${code} before listening; stderr: ${err}`)));
  });
  const port = Number(line[3]);
  return { child, port, url: `http://127.0.0.1:${port}`, line, stderr: () => err, exited };
}
