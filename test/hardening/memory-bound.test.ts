/**
 * Bounded memory under hostile clients (issue 15 item 2), in every mode,
 * against a real `watchcache serve` process: HTTP/2 sessions that grant no
 * flow-control window and open list streams, HTTP/1.1 clients that send
 * list and watch requests and never read, while writes keep the watches
 * busy. Asserts that the server's peak RSS (VmHWM) stays under the stated
 * bound, that overflowing responses were ended and counted
 * (watchcache_response_buffer_overflows_total), and that the server still
 * answers a clean list afterwards. Prints the measured peak per mode.
 *
 * Unbounded (before the buffer limits) the same load took the server well
 * past 1 GB. The bound: the server's budget (--max-server-buffer-bytes
 * 64 MiB here) plus the baseline, the list encodings in flight and V8's
 * slack; BOUND_MB below.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { MODES } from '../../src/cache/cache-options.js';
import { request } from '../support/http-client.js';
import { serve, type Served } from '../support/serve-process.js';

const BOUND_MB = Number(process.env.RSS_BOUND_MB ?? 350);
const PODS = 100;
const POD_BYTES = 10_000; // a list is ~1 MB
const H2_SESSIONS = 4;
const H2_STREAMS = 100;
const H1_CLIENTS = 100;

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Number(m[1]) / 1024;
}

async function metric(url: string, name: string): Promise<number> {
  const text = (await request(`${url}/metrics`)).text;
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  return sum;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const measured: string[] = [];

for (const mode of MODES) {
  describe(`memory bound, mode ${mode}`, () => {
    let s: Served | undefined;
    after(async () => {
      s?.child.kill('SIGKILL');
      await s?.exited;
    });

    test(`zero-window HTTP/2 and never-reading HTTP/1.1 clients: peak RSS under ${BOUND_MB} MB`, async () => {
      const limits =
        process.env.UNBOUNDED === '1'
          ? ['--max-connection-buffer-bytes', '1000000000000', '--max-server-buffer-bytes', '1000000000000']
          : [
              '--max-connection-buffer-bytes',
              String(16 * 1024 * 1024),
              '--max-server-buffer-bytes',
              String(64 * 1024 * 1024),
            ];
      s = await serve(['--mode', mode, ...limits]);
      const pods = `${s.url}/api/v1/namespaces/default/pods`;
      for (let i = 0; i < PODS; i++) {
        const r = await request(pods, {
          method: 'POST',
          body: { metadata: { name: `p${i}`, labels: { app: 'x' } }, spec: { payload: 'x'.repeat(POD_BYTES) } },
        });
        assert.equal(r.status, 201);
      }
      const baseline = rssMb(s.child.pid!, 'VmRSS');
      const sockets: net.Socket[] = [];
      const sessions: http2.ClientHttp2Session[] = [];
      try {
        // HTTP/2: no window at all, many list streams per session, nothing ever read.
        for (let i = 0; i < H2_SESSIONS; i++) {
          const session = http2.connect(s.url, { settings: { initialWindowSize: 0 } });
          session.on('error', () => {});
          sessions.push(session);
          for (let j = 0; j < H2_STREAMS; j++) {
            const st = session.request({ ':path': '/api/v1/pods' });
            st.on('error', () => {});
            st.pause();
          }
        }
        // HTTP/1.1: lists and watches, never read.
        for (let i = 0; i < H1_CLIENTS; i++) {
          const socket = net.connect(s.port, '127.0.0.1');
          socket.on('error', () => {});
          const path = i % 2 === 0 ? '/api/v1/pods' : '/api/v1/pods?watch=true&resourceVersion=0';
          socket.write(
            `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n` +
              (i % 2 === 0 ? `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(3) : ''),
          );
          socket.pause();
          sockets.push(socket);
        }
        // Keep the watches busy.
        for (let i = 0; i < 100; i++) {
          await request(`${pods}/p${i % PODS}`, {
            method: 'PUT',
            body: {
              metadata: { name: `p${i % PODS}`, labels: { app: 'x' } },
              spec: { payload: String(i).repeat(POD_BYTES / 4) },
            },
          });
        }
        await sleep(1000);
        const peak = rssMb(s.child.pid!, 'VmHWM');
        const overflows = await metric(s.url, 'watchcache_response_buffer_overflows_total');
        measured.push(
          `${mode}: baseline ${baseline.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, overflows ${overflows}`,
        );
        console.log(
          `memory bound ${mode}: baseline RSS ${baseline.toFixed(0)} MB, peak RSS ${peak.toFixed(0)} MB (bound ${BOUND_MB} MB), ${overflows} responses ended for buffering`,
        );
        assert.ok(peak < BOUND_MB, `peak RSS ${peak.toFixed(0)} MB >= ${BOUND_MB} MB`);
        assert.ok(overflows > 0, 'no response was ended for buffering');
        assert.equal(s.child.exitCode, null);
      } finally {
        for (const so of sockets) so.destroy();
        for (const se of sessions) se.destroy();
      }
      const list = await request(`${s.url}/api/v1/pods?limit=1`);
      assert.equal(list.status, 200);
    });
  });
}

after(() => console.log(`memory bound: ${measured.join('; ')}`));
