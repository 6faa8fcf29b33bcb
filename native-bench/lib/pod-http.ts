/**
 * The HTTP side the benchmarks share when they drive a `watchcache serve` over its Kubernetes API
 * (peers/http-clients.ts, proxy/): plain requests over a keep-alive agent, the pods to write, a
 * pods watch from an RV, its lines, the write -> receipt latency mark, a writer that PUTs pod
 * updates at a fixed rate.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Agent, type IncomingMessage } from 'node:http';
import { monoMs, type LatencyRecorder } from './hist.js';
import { podUpdate } from './pod.js';
import type { KubeObject } from '../../src/index.js';

const PODS = '/api/v1/namespaces/default/pods';
/** The annotation podUpdate() writes: the writer's monoMs() when it sent the update. */
const MARK = '"bench/t":"';
/** Writes in flight at the most. */
const MAX_IN_FLIGHT = 64;

/** One request; resolves with the status and the whole body once the response ends. */
function send(
  agent: Agent,
  url: string,
  method: string,
  path: string,
  body?: string,
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

/** Create the pods, 16 requests at a time. */
export async function createPods(agent: Agent, url: string, pods: readonly KubeObject[]): Promise<void> {
  for (let i = 0; i < pods.length; i += 16) {
    await Promise.all(pods.slice(i, i + 16).map((p) => send(agent, url, 'POST', PODS, JSON.stringify(p))));
  }
}

/** The RV of a pods list (`limit` 1 for a cheap one). */
export async function listRV(agent: Agent, url: string, limit?: number): Promise<string> {
  const path = limit === undefined ? PODS : `${PODS}?limit=${limit}`;
  const list = JSON.parse((await send(agent, url, 'GET', path)).text) as { metadata: { resourceVersion: string } };
  return list.metadata.resourceVersion;
}

/**
 * Open a pods watch from `rv` on its own connection. `onEnd` is called when the response ends or
 * fails, or the request fails.
 */
export function openPodWatch(
  url: string,
  rv: string,
  onResponse: (res: IncomingMessage) => void,
  onEnd: () => void,
): void {
  const req = request(`${url}${PODS}?watch=true&resourceVersion=${rv}`, { agent: false }, (res) => {
    res.on('end', onEnd);
    res.on('error', onEnd);
    onResponse(res);
  });
  req.on('error', onEnd);
  req.end();
}

/** Hand each line of a watch response to `onLine`; `afterChunk` runs after each chunk's lines. */
export function readLines(res: IncomingMessage, onLine: (line: string) => void, afterChunk?: () => void): void {
  let buf = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buf += chunk;
    let start = 0;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n', start)) {
      onLine(buf.slice(start, nl));
      start = nl + 1;
    }
    buf = buf.slice(start);
    afterChunk?.();
  });
}

/** Record write -> receipt latency when `line` carries the writer's mark. */
export function recordMark(line: string, latency: LatencyRecorder): void {
  const i = line.indexOf(MARK);
  if (i >= 0)
    latency.recordMs(monoMs() - Number.parseFloat(line.slice(i + MARK.length, line.indexOf('"', i + MARK.length))));
}

/**
 * PUT updates of `pods` (round robin, each marked with the send time) at `rate` writes/s for
 * `durationS`, at most 64 in flight; `onTick(elapsedS)` runs before each round. Resolves with the
 * writes answered 200 once none is in flight (or 10 s after the end).
 */
export async function writePodUpdates(
  agent: Agent,
  url: string,
  pods: readonly KubeObject[],
  rate: number,
  durationS: number,
  onTick?: (elapsedS: number) => void,
): Promise<number> {
  let writes = 0;
  let acked = 0;
  let inFlight = 0;
  const t0 = performance.now();
  const end = t0 + durationS * 1000;
  while (performance.now() < end) {
    onTick?.((performance.now() - t0) / 1000);
    const due = Math.floor(((performance.now() - t0) * rate) / 1000);
    while (writes < due && inFlight < MAX_IN_FLIGHT) {
      const k = writes % pods.length;
      const body = JSON.stringify(podUpdate(pods[k]!, writes, monoMs()));
      writes++;
      inFlight++;
      send(agent, url, 'PUT', `${PODS}/pod-${k}`, body).then(
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
  return acked;
}
