/**
 * Peer (c): N HTTP clients watching `watchcache serve`, per mode, next to S
 * clients that stop reading (TCP back-pressure: the KEP's slow client on the
 * real wire). The server runs as its own process (`node dist/src/cli/main.js
 * serve --port 0 --mode M`, memory store), the clients and the writer in
 * another (http-clients.ts). Reported: delivery latency (10 probe streams)
 * and completeness (every reading stream) of the reading clients, server CPU (from /proc), and the server's own
 * force-close / 410 / stall counters scraped from GET /metrics at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Mode } from '../../src/index.js';
import { isMain, runIsolated } from '../lib/isolate.js';
import { procCpuMs } from '../lib/memory.js';
import { modeLabel } from '../lib/modes.js';
import type { HttpPeerRow } from '../lib/types.js';
import type { HttpClientsConfig, HttpClientsResult } from './http-clients.js';

export interface HttpPeerConfig {
  modes: Mode[];
  clients: number;
  stalled: number;
  rate: number;
  durationS: number;
  log?: (line: string) => void;
}

export interface HttpPeerResult {
  rows: HttpPeerRow[];
  skipped: string;
}

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function startServer(mode: Mode): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--mode', mode, '--channel-capacity', '100'], { stdio: ['ignore', 'pipe', 'pipe'] });
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
        resolve({ child, url: m[1]! });
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

async function scrape(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (re: RegExp): number => text.split('\n').filter((l) => re.test(l)).reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  return {
    forceCloses: sum(/^apiserver_terminated_watchers_total\{.*reason="unresponsive"/),
    expired: sum(/^apiserver_terminated_watchers_total\{.*reason="resource_expired/),
    stalls: sum(/^apiserver_watch_cache_watcher_stalls_total\{/),
  };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

export async function runHttpPeer(c: HttpPeerConfig): Promise<HttpPeerResult> {
  if (!existsSync(CLI)) return { rows: [], skipped: 'dist/src/cli/main.js not built (the server is not there)' };
  const rows: HttpPeerRow[] = [];
  for (const mode of c.modes) {
    c.log?.(`peer http: mode=${mode}, ${c.clients} reading + ${c.stalled} stalled clients ...`);
    let server: { child: ChildProcess; url: string };
    try {
      server = await startServer(mode);
    } catch (err) {
      return { rows, skipped: `watchcache serve could not be started: ${(err as Error).message}` };
    }
    try {
      const pid = server.child.pid!;
      const cpu0 = procCpuMs(pid);
      const cfg: HttpClientsConfig = { url: server.url, clients: c.clients, probes: 10, stalled: c.stalled, rate: c.rate, durationS: c.durationS, pods: 1000 };
      const r = await runIsolated<HttpClientsConfig, HttpClientsResult>(new URL('./http-clients.js', import.meta.url), cfg, c.durationS * 1000 + 90_000);
      const cpuMs = procCpuMs(pid) - cpu0;
      const m = await scrape(server.url);
      rows.push({
        system: `watchcache serve: ${modeLabel(mode)}`,
        clients: c.clients,
        stalledClients: c.stalled,
        rate: c.rate,
        durationS: c.durationS,
        writes: r.writes,
        delivered: r.delivered,
        deliveredFraction: r.expected > 0 ? r.delivered / r.expected : 0,
        latency: r.latency,
        serverCpuPct: (cpuMs / r.wallMs) * 100,
        forceCloses: m.forceCloses ?? 0,
        expired410: m.expired ?? 0,
        stalls: m.stalls ?? 0,
        endedStreams: r.endedStreams,
      });
    } catch (err) {
      c.log?.(`peer http: mode=${mode} failed: ${(err as Error).message}`);
    } finally {
      await stopServer(server.child);
    }
  }
  return { rows, skipped: '' };
}

if (isMain(import.meta.url)) {
  const r = await runHttpPeer({ modes: ['off', 'alpha', 'beta'], clients: 100, stalled: 100, rate: 200, durationS: 5, log: (l) => console.error(l) });
  console.log(JSON.stringify(r, null, 1));
}
