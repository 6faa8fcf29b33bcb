/**
 * Peer (c), the client side, in its own process: N HTTP/1.1 watch streams
 * that read everything (latency: PUT call -> line received, on the
 * machine-wide monotonic clock), S watch streams that stop reading at once
 * (the response is paused, so TCP backs up into the server: the slow client
 * of the KEP), and a writer that PUTs ~2 KiB pods at a fixed rate for a
 * bounded time over a keep-alive agent. To keep this process from being the
 * bottleneck, only `probes` streams decode text and read the annotation;
 * every other reading stream counts newline bytes in the raw Buffers.
 */
import { Agent, type IncomingMessage } from 'node:http';
import { LatencyRecorder } from '../lib/hist.js';
import { waitForDelivery } from '../lib/delivery-wait.js';
import { serveChild } from '../lib/isolate.js';
import { makePod } from '../lib/pod.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPods, listRV, openPodWatch, readLines, recordMark, writePodUpdates } from '../lib/pod-http.js';
import type { LatencySummary } from '../lib/types.js';

export interface HttpClientsConfig {
  url: string;
  clients: number;
  /** Reading streams that also measure latency (the rest only count events). */
  probes: number;
  stalled: number;
  rate: number;
  durationS: number;
  pods: number;
}

export interface HttpClientsResult {
  writes: number;
  /** Events received by all reading streams (newlines). */
  delivered: number;
  expected: number;
  endedStreams: number;
  latency: LatencySummary;
  wallMs: number;
}

type StreamKind =
  | { kind: 'probe'; onLine: (line: string) => void }
  | { kind: 'count'; onEvents: (n: number) => void }
  | { kind: 'stall' };

function watch(url: string, rv: string, k: StreamKind, onEnd: () => void): void {
  openPodWatch(
    url,
    rv,
    (res: IncomingMessage) => {
      if (k.kind === 'stall') {
        res.pause(); // a client that stops reading: its socket backs up into the server
        return;
      }
      if (k.kind === 'count') {
        res.on('data', (chunk: Buffer) => {
          let n = 0;
          for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) n++;
          k.onEvents(n);
        });
        return;
      }
      readLines(res, k.onLine);
    },
    onEnd,
  );
}

export async function runHttpClients(c: HttpClientsConfig): Promise<HttpClientsResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const pods = Array.from({ length: c.pods }, (_, i) => makePod(i));
  await createPods(agent, c.url, pods);
  const rv = await listRV(agent, c.url, 1);
  const lat = new LatencyRecorder();
  let delivered = 0;
  let ended = 0;
  const onLine = (line: string): void => {
    delivered++;
    recordMark(line, lat);
  };
  const onEvents = (n: number): void => void (delivered += n);
  const probes = Math.min(c.probes, c.clients);
  for (let i = 0; i < c.clients; i++)
    watch(c.url, rv, i < probes ? { kind: 'probe', onLine } : { kind: 'count', onEvents }, () => ended++);
  for (let i = 0; i < c.stalled; i++) watch(c.url, rv, { kind: 'stall' }, () => ended++);
  await sleep(500); // let every stream be registered

  const t0 = performance.now();
  const acked = await writePodUpdates(agent, c.url, pods, c.rate, c.durationS);
  const expected = acked * c.clients;
  await waitForDelivery(() => delivered, expected, 10_000);
  agent.destroy();
  return {
    writes: acked,
    delivered,
    expected,
    endedStreams: ended,
    latency: lat.summary(),
    wallMs: performance.now() - t0,
  };
}

serveChild<HttpClientsConfig, HttpClientsResult>(runHttpClients);
