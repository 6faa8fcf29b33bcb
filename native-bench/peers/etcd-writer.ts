/**
 * The etcd peer's writer, in its own process (etcd-notes §5.6: keep the
 * writer out of the watchers' process). It puts ~2 KiB pods as JSON under
 * `${prefix}default/pod-<k>` (the layout EtcdStore reads) at a fixed rate for
 * a bounded time, pipelined (at most 512 puts in flight), each carrying its
 * send time on the machine-wide monotonic clock (annotation bench/t), so any
 * process can compute put -> receipt latency.
 */
import { Etcd3 } from 'etcd3';
import { LatencyRecorder, monoMs } from '../lib/hist.js';
import { serveChild } from '../lib/isolate.js';
import { makePod, podUpdate } from '../lib/pod.js';
import type { LatencySummary } from '../lib/types.js';

export interface EtcdWriterConfig {
  endpoint: string;
  prefix: string;
  rate: number;
  durationS: number;
  pods: number;
}

export interface EtcdWriterResult {
  writes: number;
  acked: number;
  failed: number;
  putLatency: LatencySummary;
}

export async function runEtcdWriter(c: EtcdWriterConfig): Promise<EtcdWriterResult> {
  const client = new Etcd3({ hosts: [c.endpoint], grpcOptions: { 'grpc.use_local_subchannel_pool': 1 } });
  const pods = Array.from({ length: c.pods }, (_, i) => {
    const { resourceVersion: _rv, ...meta } = makePod(i).metadata;
    return { ...makePod(i), metadata: meta };
  });
  const lat = new LatencyRecorder();
  let writes = 0;
  let acked = 0;
  let failed = 0;
  let inFlight = 0;
  const t0 = performance.now();
  const end = t0 + c.durationS * 1000;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      const due = Math.floor(((Math.min(now, end) - t0) * c.rate) / 1000);
      while (writes < due && inFlight < 512) {
        const k = writes % c.pods;
        const sent = monoMs();
        const body = JSON.stringify(podUpdate(pods[k]!, writes, sent));
        inFlight++;
        writes++;
        client
          .put(`${c.prefix}default/pod-${k}`)
          .value(body)
          .exec()
          .then(
            () => {
              acked++;
              lat.recordMs(monoMs() - sent);
            },
            () => failed++,
          )
          .finally(() => inFlight--);
      }
      if (now >= end) resolve();
      else setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
  });
  const drainEnd = performance.now() + 10_000;
  while (inFlight > 0 && performance.now() < drainEnd) await new Promise((r) => setTimeout(r, 10));
  client.close();
  return { writes, acked, failed, putLatency: lat.summary() };
}

serveChild<EtcdWriterConfig, EtcdWriterResult>(runEtcdWriter);
