/**
 * Peer (c): N HTTP clients watching `watchcache serve`, per mode, next to S
 * clients that stop reading (TCP back-pressure: the KEP's slow client on the
 * real wire). The server runs as its own process (`node dist/src/cli/main.js
 * serve --port 0 --mode M`, memory store), the clients and the writer in
 * another (http-clients.ts). Reported: delivery latency (10 probe streams)
 * and completeness (every reading stream) of the reading clients, server CPU (from /proc), and the server's own
 * force-close / 410 / stall counters scraped from GET /metrics at the end.
 */
import { existsSync } from 'node:fs';
import type { Mode } from '../../src/index.js';
import { isMain, runIsolated } from '../lib/isolate.js';
import { procCpuMs } from '../lib/memory.js';
import { modeLabel } from '../lib/modes.js';
import { CLI, startServe, stopServe, sumMetric, type ServeChild } from '../lib/serve-child.js';
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

async function scrape(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return {
    forceCloses: sumMetric(text, /^apiserver_terminated_watchers_total\{.*reason="unresponsive"/),
    expired: sumMetric(text, /^apiserver_terminated_watchers_total\{.*reason="resource_expired/),
    stalls: sumMetric(text, /^apiserver_watch_cache_watcher_stalls_total\{/),
  };
}

export async function runHttpPeer(c: HttpPeerConfig): Promise<HttpPeerResult> {
  if (!existsSync(CLI)) return { rows: [], skipped: 'dist/src/cli/main.js not built (the server is not there)' };
  const rows: HttpPeerRow[] = [];
  for (const mode of c.modes) {
    c.log?.(`peer http: mode=${mode}, ${c.clients} reading + ${c.stalled} stalled clients ...`);
    let server: ServeChild;
    try {
      server = await startServe(['--mode', mode, '--channel-capacity', '100']);
    } catch (err) {
      return { rows, skipped: `watchcache serve could not be started: ${(err as Error).message}` };
    }
    try {
      const pid = server.child.pid!;
      const cpu0 = procCpuMs(pid);
      const cfg: HttpClientsConfig = {
        url: server.url,
        clients: c.clients,
        probes: 10,
        stalled: c.stalled,
        rate: c.rate,
        durationS: c.durationS,
        pods: 1000,
      };
      const r = await runIsolated<HttpClientsConfig, HttpClientsResult>(
        new URL('./http-clients.js', import.meta.url),
        cfg,
        c.durationS * 1000 + 90_000,
      );
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
      await stopServe(server.child);
    }
  }
  return { rows, skipped: '' };
}

if (isMain(import.meta.url)) {
  const r = await runHttpPeer({
    modes: ['off', 'alpha', 'beta'],
    clients: 100,
    stalled: 100,
    rate: 200,
    durationS: 5,
    log: (l) => console.error(l),
  });
  console.log(JSON.stringify(r, null, 1));
}
