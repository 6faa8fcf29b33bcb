/**
 * Peer (b): etcd's own watch versus the engine fronting the same etcd, same
 * workload, same run. A throwaway etcd (test/support/etcd-server.ts, default
 * raft timers for a performance run) and a writer process (etcd-writer.ts)
 * putting ~2 KiB pods at a fixed rate for a bounded time. Then:
 *
 * - etcd direct: W watchers on the prefix through the etcd3 client, spread
 *   over min(10, W) clients (own TCP connection, 4 MiB HTTP/2 window: the
 *   best configuration of etcd-notes §5.4); each decodes its own JSON copy.
 * - engine: one EtcdStore watch feeding a WatchCache, W watchers of its own
 *   (each encodes the shared jsonLine, as a server would).
 *
 * Each (system, W) phase gets a fresh etcd, so etcd's RSS and history from
 * one phase (etcd direct at W=1000 grows it to GiBs) never carry into the next.
 *
 * Latency is put() call -> watcher receipt on the machine-wide monotonic
 * clock. After the writes, delivery is awaited until complete, 3 s without
 * progress, or 10 s. CPU of this process and of etcd is read from /proc.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { EtcdStore, WatchCache, type Mode } from '../../src/index.js';
import type { EtcdServer, startEtcd as startEtcdFn } from '../../test/support/etcd-server.js';
import { waitForDelivery } from '../lib/delivery-wait.js';
import { LatencyRecorder, monoMs } from '../lib/hist.js';
import { isMain, runIsolated, serveChild } from '../lib/isolate.js';
import { procCpuMs, procRssMiB, selfCpuMs } from '../lib/memory.js';
import { modeLabel } from '../lib/modes.js';
import type { EtcdPeerRow, LatencySummary } from '../lib/types.js';
import type { EtcdWriterConfig, EtcdWriterResult } from './etcd-writer.js';

export interface EtcdPeerConfig {
  watchers: number[];
  rate: number;
  durationS: number;
  mode: Mode;
}

export interface EtcdPeerResult {
  rows: EtcdPeerRow[];
  skipped: string;
}

interface Sink {
  delivered: number;
  lat: LatencyRecorder;
}

function record(sink: Sink, annotations: Record<string, string> | undefined): void {
  const t = Number(annotations?.['bench/t']);
  sink.delivered++;
  if (Number.isFinite(t)) sink.lat.recordMs(monoMs() - t);
}

/** Run the writer, wait for delivery, and measure; `attach` has set the watchers up already. */
async function measure(
  etcd: EtcdServer,
  system: string,
  prefix: string,
  w: number,
  c: EtcdPeerConfig,
  sink: Sink,
): Promise<EtcdPeerRow> {
  const etcdPid = Number(readFileSync(join(etcd.dir, 'etcd.pid'), 'utf8').trim());
  const cpu0 = selfCpuMs();
  const etcdCpu0 = procCpuMs(etcdPid);
  const t0 = performance.now();
  const writerCfg: EtcdWriterConfig = {
    endpoint: etcd.endpoint,
    prefix,
    rate: c.rate,
    durationS: c.durationS,
    pods: 1000,
  };
  const wr = await runIsolated<EtcdWriterConfig, EtcdWriterResult>(
    new URL('./etcd-writer.js', import.meta.url),
    writerCfg,
    c.durationS * 1000 + 60_000,
  );
  const writeEnd = performance.now();
  const expected = wr.acked * w;
  await waitForDelivery(() => sink.delivered, expected, 10_000);
  const wallMs = performance.now() - t0;
  const latency: LatencySummary = sink.lat.summary();
  return {
    system,
    watchers: w,
    rate: c.rate,
    durationS: c.durationS,
    writes: wr.acked,
    expectedDeliveries: expected,
    delivered: sink.delivered,
    deliveredFraction: expected > 0 ? sink.delivered / expected : 0,
    drainMs: performance.now() - writeEnd,
    deliveredPerSec: sink.delivered / (wallMs / 1000),
    latency,
    nodeCpuPct: ((selfCpuMs() - cpu0) / wallMs) * 100,
    etcdCpuPct: ((procCpuMs(etcdPid) - etcdCpu0) / wallMs) * 100,
    etcdRssMiB: procRssMiB(etcdPid),
  };
}

async function direct(etcd: EtcdServer, w: number, c: EtcdPeerConfig): Promise<EtcdPeerRow> {
  const prefix = `/registry/bench-direct-${w}/`;
  const clients = Array.from(
    { length: Math.min(10, w) },
    () =>
      new Etcd3({
        hosts: [etcd.endpoint],
        grpcOptions: {
          'grpc-node.flow_control_window': 4 * 1024 * 1024,
          'grpc.use_local_subchannel_pool': 1,
          'grpc.max_receive_message_length': 64 << 20,
        },
      }),
  );
  const sink: Sink = { delivered: 0, lat: new LatencyRecorder() };
  for (let i = 0; i < w; i++) {
    const watcher = await clients[i % clients.length]!.watch().prefix(prefix).create();
    watcher.on('put', (kv) => {
      const obj = JSON.parse(kv.value.toString()) as { metadata?: { annotations?: Record<string, string> } };
      record(sink, obj.metadata?.annotations);
    });
    watcher.on('error', () => {});
  }
  try {
    return await measure(etcd, 'etcd direct (etcd3 watchers)', prefix, w, c, sink);
  } finally {
    for (const cl of clients) cl.close();
  }
}

async function engine(etcd: EtcdServer, w: number, c: EtcdPeerConfig): Promise<EtcdPeerRow> {
  const prefix = `/registry/bench-engine-${w}/`;
  const store = new EtcdStore({ endpoints: [etcd.endpoint], prefix });
  const cache = new WatchCache({ store, mode: c.mode, channelCapacity: 100 });
  await cache.start();
  const sink: Sink = { delivered: 0, lat: new LatencyRecorder() };
  const rv = String(cache.resourceVersion);
  const watchers = Array.from({ length: w }, () => cache.watch({ resourceVersion: rv, channelCapacity: 100 }));
  for (const x of watchers) {
    void (async () => {
      for await (const ev of x) {
        if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
        ev.jsonLine(cache.encodings);
        record(sink, ev.object.metadata.annotations);
      }
    })();
  }
  try {
    return await measure(etcd, `engine over etcd: ${modeLabel(c.mode)}`, prefix, w, c, sink);
  } finally {
    for (const x of watchers) x.stop();
    await cache.stop();
    store.close();
  }
}

export async function runEtcdPeer(c: EtcdPeerConfig): Promise<EtcdPeerResult> {
  // Default raft timers for a performance run (etcd-notes §2.5, §8.2), not the fast test timers.
  process.env.WC_ETCD_HEARTBEAT_MS = '100';
  process.env.WC_ETCD_ELECTION_MS = '1000';
  // Loaded lazily: dist/test is not part of the published package, and the rest of the suite must load without it.
  let startEtcd: typeof startEtcdFn;
  try {
    ({ startEtcd } = await import('../../test/support/etcd-server.js'));
  } catch {
    return { rows: [], skipped: 'test/support/etcd-server.js is not built here (the etcd start/stop helper)' };
  }
  const keepAlive = setInterval(() => {}, 1000);
  const rows: EtcdPeerRow[] = [];
  try {
    for (const w of c.watchers) {
      for (const phase of [direct, engine]) {
        const etcd = await startEtcd();
        if (etcd === null) return { rows: [], skipped: 'etcd/etcdctl not installed' };
        try {
          rows.push(await phase(etcd, w, c));
        } finally {
          await etcd.stop();
        }
      }
    }
  } finally {
    clearInterval(keepAlive);
  }
  return { rows, skipped: '' };
}

export function runEtcdPeerIsolated(c: EtcdPeerConfig): Promise<EtcdPeerResult> {
  const perW = (c.durationS + 25) * 2 * 1000;
  return runIsolated<EtcdPeerConfig, EtcdPeerResult>(
    new URL('./etcd-peer.js', import.meta.url),
    c,
    60_000 + perW * c.watchers.length,
  );
}

if (!serveChild<EtcdPeerConfig, EtcdPeerResult>(runEtcdPeer) && isMain(import.meta.url)) {
  const r = await runEtcdPeerIsolated({ watchers: [100], rate: 200, durationS: 4, mode: 'beta' });
  console.log(JSON.stringify(r, null, 1));
}
