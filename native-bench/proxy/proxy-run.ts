/**
 * One run of the proxy benchmark (the KEP's first user story: a read-through caching proxy
 * fleet), for one mode, in its own process:
 *
 *   writer --PUT--> root (`serve`, memory store) <--TcpRelay-- P proxies (`serve --store kube`)
 *                                                               <-- C clients each (S of them slow)
 *
 * Root and proxies run the same mode, each as its own `watchcache serve` process. Each proxy
 * reaches the root through its own TcpRelay (this process), so the blip can cut it: at `blipAtS`
 * the relays of the first half of the proxies reset their connections and refuse new ones for
 * `blipS`, while the writer goes on. Healthy clients read everything (latency = write -> line
 * received, per group: proxies that were cut, proxies that were not); slow clients read at
 * `slowReadRate` events/s. Every client behaves as client-go: after a clean end (a force-close)
 * it re-watches from its last RV, after a 410 it re-lists and watches from the list RV.
 */
import { Agent } from 'node:http';
import { TcpRelay } from '../../src/testing/tcp-relay.js';
import { LatencyRecorder } from '../lib/hist.js';
import { WatchClient, type ClientStats } from './watch-client.js';
import { waitForDelivery } from '../lib/delivery-wait.js';
import { serveChild } from '../lib/isolate.js';
import { procCpuMs } from '../lib/memory.js';
import { makePod } from '../lib/pod.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPods, listRV, writePodUpdates } from '../lib/pod-http.js';
import { startServe, stopServe, sumMetric, type ServeChild } from '../lib/serve-child.js';
import type { ProxyRunConfig, ProxyRunResult } from '../lib/types.js';

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready within 30 s`);
    await sleep(100);
  }
}

const metricsOf = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();

export async function runProxy(c: ProxyRunConfig): Promise<ProxyRunResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const common = ['--mode', c.mode, '--channel-capacity', String(c.channelCapacity)];
  const root = await startServe(common);
  const relays: TcpRelay[] = [];
  const proxies: ServeChild[] = [];
  const clients: WatchClient[] = [];
  try {
    const pad = 'x'.repeat(c.padBytes);
    const pods = Array.from({ length: c.pods }, (_, i) => {
      const p = makePod(i);
      return { ...p, metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, 'bench/pad': pad } } };
    });
    await createPods(agent, root.url, pods);
    for (let i = 0; i < c.proxies; i++) {
      const relay = new TcpRelay(root.port);
      await relay.listen();
      relays.push(relay);
    }
    // Start the proxies a few at a time (each is a process starting on a shared 2-core machine).
    for (let i = 0; i < c.proxies; i += 4) {
      const batch = await Promise.all(
        relays
          .slice(i, i + 4)
          .map((r) => startServe([...common, '--store', 'kube', '--upstream', `http://127.0.0.1:${r.port}`])),
      );
      proxies.push(...batch);
    }
    await Promise.all(proxies.map((p) => waitReady(p.url)));

    const cut = Math.floor(c.proxies / 2);
    const latUncut = new LatencyRecorder();
    const latCut = new LatencyRecorder();
    const healthyCounts: ClientStats = { lines: 0, reconnects: 0, relists: 0 };
    const slowStats: ClientStats = { lines: 0, reconnects: 0, relists: 0 };
    const healthyPerProxy = c.clientsPerProxy - c.slowPerProxy;
    for (let p = 0; p < proxies.length; p++) {
      const url = proxies[p]!.url;
      const rv = await listRV(agent, url, 1);
      for (let i = 0; i < healthyPerProxy; i++)
        clients.push(new WatchClient(agent, url, rv, Infinity, healthyCounts, p < cut ? latCut : latUncut));
      for (let i = 0; i < c.slowPerProxy; i++)
        clients.push(new WatchClient(agent, url, rv, c.slowReadRate, slowStats, undefined));
    }
    for (const client of clients) client.start();
    await sleep(500); // every stream registered
    const linesBefore = relays.reduce((a, r) => a + r.eventsDown, 0);
    const cpu0 = procCpuMs(root.child.pid!);
    let watchesMax = 0;
    const sampler = setInterval(() => {
      void metricsOf(root.url).then(
        (t) => (watchesMax = Math.max(watchesMax, sumMetric(t, /^apiserver_registered_watchers\{/))),
        () => undefined,
      );
    }, 500);

    let blip: 'before' | 'on' | 'after' = 'before';
    const t0 = performance.now();
    const acked = await writePodUpdates(agent, root.url, pods, c.rate, c.durationS, (elapsedS) => {
      if (blip === 'before' && elapsedS >= c.blipAtS) {
        blip = 'on';
        for (const r of relays.slice(0, cut)) r.cut();
      } else if (blip === 'on' && elapsedS >= c.blipAtS + c.blipS) {
        blip = 'after';
        for (const r of relays.slice(0, cut)) r.restore();
      }
    });
    for (const r of relays) r.restore();
    // Drain: healthy clients get every acked write (or no progress for 3 s, at most 15 s).
    const healthyStreams = healthyPerProxy * proxies.length;
    const expected = acked * healthyStreams;
    await waitForDelivery(() => healthyCounts.lines, expected, 15_000);
    clearInterval(sampler);
    const wallS = (performance.now() - t0) / 1000;
    const rootCpuMs = procCpuMs(root.child.pid!) - cpu0;
    const rootText = await metricsOf(root.url);
    const proxyTexts = await Promise.all(proxies.map((p) => metricsOf(p.url)));
    const sumProxies = (re: RegExp): number => proxyTexts.reduce((a, t) => a + sumMetric(t, re), 0);
    const rootLines = relays.reduce((a, r) => a + r.eventsDown, 0) - linesBefore;
    return {
      writes: acked,
      wallS,
      rootCpuPct: (rootCpuMs / (wallS * 1000)) * 100,
      rootWatchesMax: watchesMax,
      rootWatchesEnd: sumMetric(rootText, /^apiserver_registered_watchers\{/),
      rootForceCloses: sumMetric(rootText, /^apiserver_terminated_watchers_total\{.*reason="unresponsive"/),
      root410s: sumMetric(rootText, /^apiserver_terminated_watchers_total\{.*reason="resource_expired/),
      rootDeliveriesPerS: rootLines / wallS,
      leafDeliveriesPerS: (healthyCounts.lines + slowStats.lines) / wallS,
      latencyUncut: latUncut.summary(),
      latencyCut: latCut.summary(),
      healthyReconnects: healthyCounts.reconnects,
      healthyRelists: healthyCounts.relists,
      healthyDeliveredFraction: expected > 0 ? Math.min(1, healthyCounts.lines / expected) : 0,
      proxyForceCloses: sumProxies(/^apiserver_terminated_watchers_total\{.*reason="unresponsive"/),
      proxy410s: sumProxies(/^apiserver_terminated_watchers_total\{.*reason="resource_expired/),
      proxyStalls: sumProxies(/^apiserver_watch_cache_watcher_stalls_total\{/),
      proxyRelists: sumProxies(/^watchcache_upstream_lists_total\{/) - proxies.length,
      proxyReconnectsOk: sumProxies(/^watchcache_upstream_watch_connects_total\{.*result="ok"/) - proxies.length,
      proxyReconnectsFailed: sumProxies(/^watchcache_upstream_watch_connects_total\{.*result="failed"/),
      slowReconnects: slowStats.reconnects,
      slowRelists: slowStats.relists,
    };
  } finally {
    for (const client of clients) client.stop();
    agent.destroy();
    await Promise.all(proxies.map((p) => stopServe(p.child)));
    await stopServe(root.child);
    await Promise.all(relays.map((r) => r.close()));
  }
}

serveChild<ProxyRunConfig, ProxyRunResult>(runProxy);
