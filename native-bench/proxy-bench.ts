/**
 * `watchcache bench --suite proxy`: the KEP's first user story, a read-through caching proxy
 * fleet (proxy/proxy-run.ts has the setup). One run per mode, each in its own child process and
 * bounded in time; every mode sees the same fleet, clients, writes and blip.
 */
import type { Mode } from '../src/index.js';
import type { BenchPlan } from './bench-args.js';
import { runIsolated } from './lib/isolate.js';
import { modeLabel } from './lib/modes.js';
import type { ProxyRow, ProxyRunConfig, ProxyRunResult } from './lib/types.js';

/** The proxy plan of `watchcache bench` (bench-args.ts), for these modes. */
export type ProxySweepConfig = BenchPlan['proxy'] & {
  modes: Mode[];
  log?: (line: string) => void;
};

export async function runProxySweep(c: ProxySweepConfig): Promise<ProxyRow[]> {
  const rows: ProxyRow[] = [];
  for (const mode of c.modes) {
    const cfg: ProxyRunConfig = {
      mode,
      proxies: c.proxies,
      clientsPerProxy: c.clientsPerProxy,
      slowPerProxy: c.slowPerProxy,
      rate: c.rate,
      durationS: c.durationS,
      blipAtS: Math.max(1, (c.durationS - c.blipS) / 3),
      blipS: c.blipS,
      pods: 200,
      padBytes: 4096, // ~6 KiB pods
      slowReadRate: 2, // events/s: its socket and then its channel at the proxy back up within seconds
      channelCapacity: 100,
    };
    c.log?.(
      `proxy: mode=${mode}, ${c.proxies} proxies x ${c.clientsPerProxy} clients (${c.slowPerProxy} slow), ${c.rate} writes/s for ${c.durationS} s, blip ${c.blipS} s on half the proxies ...`,
    );
    try {
      const r = await runIsolated<ProxyRunConfig, ProxyRunResult>(
        new URL('./proxy/proxy-run.js', import.meta.url),
        cfg,
        c.durationS * 1000 + 180_000,
      );
      rows.push({ ...cfg, modeLabel: modeLabel(mode), ...r });
    } catch (err) {
      c.log?.(`proxy: mode=${mode} failed: ${(err as Error).message}`);
    }
  }
  return rows;
}
