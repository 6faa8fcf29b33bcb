/**
 * The clients of the proxy benchmark: a watch client with client-go's behaviour on ends (re-watch
 * from its last RV after a clean end, re-list after a 410), healthy (reads everything, records
 * write -> receipt latency) or slow (reads at most `rate` events/s), and the plain requests they
 * and the writer send.
 */
import { request, type Agent, type IncomingMessage } from 'node:http';
import { monoMs, type LatencyRecorder } from '../lib/hist.js';

const MARK = '"bench/t":"';

export function send(
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

export const listRV = async (agent: Agent, url: string): Promise<string> =>
  (
    JSON.parse((await send(agent, url, 'GET', '/api/v1/namespaces/default/pods?limit=1')).text) as {
      metadata: { resourceVersion: string };
    }
  ).metadata.resourceVersion;

function openWatch(url: string, rv: string, onResponse: (res: IncomingMessage) => void, onEnd: () => void): void {
  const req = request(
    `${url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`,
    { agent: false },
    (res) => {
      res.on('end', onEnd);
      res.on('error', onEnd);
      onResponse(res);
    },
  );
  req.on('error', onEnd);
  req.end();
}

export interface ClientStats {
  lines: number;
  reconnects: number;
  relists: number;
}

/**
 * A watch client with client-go's behaviour on ends: after a clean end (a force-close) it
 * re-watches from its last RV, after a 410 it re-lists and watches from the list RV. A healthy
 * client (`rate` Infinity) reads everything and records write -> receipt latency; a slow one
 * reads at most `rate` events/s.
 */
export class WatchClient {
  private rv: string;
  private stopped = false;
  constructor(
    private readonly agent: Agent,
    private readonly url: string,
    rv: string,
    private readonly rate: number,
    private readonly stats: ClientStats,
    private readonly latency: LatencyRecorder | undefined,
  ) {
    this.rv = rv;
  }

  start(): void {
    if (this.stopped) return;
    let expired = false;
    openWatch(
      this.url,
      this.rv,
      (res) => {
        let buf = '';
        let budgetStart = performance.now();
        let read = 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let start = 0;
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n', start)) {
            const line = buf.slice(start, nl);
            start = nl + 1;
            this.stats.lines++;
            read++;
            if (line.startsWith('{"type":"ERROR"')) {
              expired = line.includes('"code":410');
              continue;
            }
            const m = /"resourceVersion":"(\d+)"/.exec(line);
            if (m !== null) this.rv = m[1]!;
            const i = this.latency === undefined ? -1 : line.indexOf(MARK);
            if (i >= 0)
              this.latency!.recordMs(
                monoMs() - Number.parseFloat(line.slice(i + MARK.length, line.indexOf('"', i + MARK.length))),
              );
          }
          buf = buf.slice(start);
          if (this.rate === Infinity) return;
          // Read no faster than `rate`: pause until the budget allows what was read.
          const aheadMs = (read / this.rate) * 1000 - (performance.now() - budgetStart);
          if (aheadMs > 5) {
            res.pause();
            setTimeout(() => res.resume(), aheadMs);
          }
          if (performance.now() - budgetStart > 1000) {
            budgetStart = performance.now();
            read = 0;
          }
        });
      },
      () => {
        if (this.stopped) return;
        if (expired) void this.relist();
        else {
          this.stats.reconnects++;
          setTimeout(() => this.start(), 10);
        }
      },
    );
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    this.stats.relists++;
    try {
      this.rv = (
        JSON.parse((await send(this.agent, this.url, 'GET', '/api/v1/namespaces/default/pods')).text) as {
          metadata: { resourceVersion: string };
        }
      ).metadata.resourceVersion;
    } catch {
      // the proxy is busy or away: re-list again shortly
      setTimeout(() => void this.relist(), 500);
      return;
    }
    this.start();
  }

  stop(): void {
    this.stopped = true;
  }
}
