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
import { Agent, request, type IncomingMessage } from 'node:http';
import { LatencyRecorder, monoMs } from '../lib/hist.js';
import { serveChild } from '../lib/isolate.js';
import { makePod, podUpdate } from '../lib/pod.js';
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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const MARK = '"bench/t":"';

function send(
  agent: Agent,
  url: string,
  method: string,
  path: string,
  body: string | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url + path,
      {
        method,
        agent,
        headers:
          body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type StreamKind =
  | { kind: 'probe'; onLine: (line: string) => void }
  | { kind: 'count'; onEvents: (n: number) => void }
  | { kind: 'stall' };

function watch(url: string, rv: string, k: StreamKind, onEnd: () => void): void {
  const req = request(
    `${url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`,
    { agent: false },
    (res: IncomingMessage) => {
      res.on('end', onEnd);
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
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let start = 0;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n', start)) {
          k.onLine(buf.slice(start, nl));
          start = nl + 1;
        }
        buf = buf.slice(start);
      });
    },
  );
  req.on('error', onEnd);
  req.end();
}

export async function runHttpClients(c: HttpClientsConfig): Promise<HttpClientsResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const pods = Array.from({ length: c.pods }, (_, i) => makePod(i));
  for (let i = 0; i < pods.length; i += 16) {
    await Promise.all(
      pods
        .slice(i, i + 16)
        .map((p) => send(agent, c.url, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(p))),
    );
  }
  const list = await send(agent, c.url, 'GET', '/api/v1/namespaces/default/pods?limit=1', undefined);
  const rv = (JSON.parse(list.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const lat = new LatencyRecorder();
  let delivered = 0;
  let ended = 0;
  const onLine = (line: string): void => {
    delivered++;
    const i = line.indexOf(MARK);
    if (i >= 0)
      lat.recordMs(monoMs() - Number.parseFloat(line.slice(i + MARK.length, line.indexOf('"', i + MARK.length))));
  };
  const onEvents = (n: number): void => void (delivered += n);
  const probes = Math.min(c.probes, c.clients);
  for (let i = 0; i < c.clients; i++)
    watch(c.url, rv, i < probes ? { kind: 'probe', onLine } : { kind: 'count', onEvents }, () => ended++);
  for (let i = 0; i < c.stalled; i++) watch(c.url, rv, { kind: 'stall' }, () => ended++);
  await sleep(500); // let every stream be registered

  let writes = 0;
  let acked = 0;
  let inFlight = 0;
  const t0 = performance.now();
  const end = t0 + c.durationS * 1000;
  while (performance.now() < end) {
    const due = Math.floor(((performance.now() - t0) * c.rate) / 1000);
    while (writes < due && inFlight < 64) {
      const k = writes % pods.length;
      const body = JSON.stringify(podUpdate(pods[k]!, writes, monoMs()));
      writes++;
      inFlight++;
      send(agent, c.url, 'PUT', `/api/v1/namespaces/default/pods/pod-${k}`, body).then(
        (r) => {
          inFlight--;
          if (r.status === 200) acked++;
        },
        () => inFlight--,
      );
    }
    await sleep(1);
  }
  while (inFlight > 0 && performance.now() < end + 10_000) await sleep(5);
  const expected = acked * c.clients;
  const writeEnd = performance.now();
  let last = delivered;
  let lastProgress = writeEnd;
  while (delivered < expected && performance.now() - writeEnd < 10_000 && performance.now() - lastProgress < 3000) {
    await sleep(20);
    if (delivered !== last) {
      last = delivered;
      lastProgress = performance.now();
    }
  }
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
