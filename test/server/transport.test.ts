/**
 * Transports: HTTP/1.1 and h2c (prior knowledge) on ONE port, told apart by
 * the HTTP/2 preface (also when it arrives split byte by byte, and with
 * pipelined HTTP/1.1 requests); several watches multiplexed on one HTTP/2
 * session; TLS with ALPN (h2 and http/1.1) using a throwaway self-signed
 * certificate made with openssl (skipped with a reason when openssl is missing).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventDecoder, H2Watch, request, waitUntil } from '../support/http-client.js';
import { classifyPreface, HTTP2_PREFACE } from '../../src/server/protocol-sniffer.js';
import { makeSelfSignedCert } from '../support/self-signed-cert.js';
import { pod, startFixture, type Fixture } from './server-fixture.js';

const PODS = '/api/v1/namespaces/default/pods';

/** An HTTP/2 request on a session; whole body. */
function h2get(
  session: http2.ClientHttp2Session,
  path: string,
  extra: http2.OutgoingHttpHeaders = {},
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const s = session.request({ ':path': path, ...extra });
    let status = 0;
    let text = '';
    s.on('response', (h) => (status = Number(h[':status'])));
    s.setEncoding('utf8');
    s.on('data', (d: string) => (text += d));
    s.on('end', () => resolve({ status, text }));
    s.on('error', reject);
    s.end(body);
  });
}

/** A TCP proxy that delivers the client's first `splitBytes` bytes one per write, with pauses. */
async function splittingProxy(targetPort: number, splitBytes: number): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    upstream.pipe(client);
    let sent = 0;
    let chain = Promise.resolve();
    client.on('data', (d: Buffer) => {
      chain = chain.then(async () => {
        for (let i = 0; i < d.length;) {
          if (sent < splitBytes) {
            upstream.write(d.subarray(i, i + 1));
            sent++;
            i++;
            await new Promise((r) => setTimeout(r, 2));
          } else {
            upstream.write(d.subarray(i));
            break;
          }
        }
      });
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

test('classifyPreface decides as soon as the bytes allow', () => {
  assert.equal(classifyPreface(Buffer.from('G')), 'http1');
  assert.equal(classifyPreface(Buffer.from('P')), undefined);
  assert.equal(classifyPreface(Buffer.from('POST / HTTP/1.1')), 'http1');
  assert.equal(classifyPreface(Buffer.from('PRI * HTTP/2.0\r\n')), undefined);
  assert.equal(classifyPreface(HTTP2_PREFACE), 'h2');
  assert.equal(classifyPreface(Buffer.concat([HTTP2_PREFACE, Buffer.from([0, 0, 0, 4])])), 'h2');
  assert.equal(classifyPreface(Buffer.from('PRI * HTTP/1.1\r\n')), 'http1');
});

describe('HTTP/1.1 and h2c on one port', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  test('h2c with prior knowledge: list, create and several watches on one session', async () => {
    const session = http2.connect(f.url);
    try {
      const list = await h2get(session, PODS);
      assert.equal(list.status, 200);
      const parsed = JSON.parse(list.text) as { kind: string; metadata: { resourceVersion: string } };
      assert.equal(parsed.kind, 'PodList');
      const rv = parsed.metadata.resourceVersion;
      const w1 = new H2Watch(f.url, `${PODS}?watch=true&resourceVersion=${rv}`, { session });
      const w2 = new H2Watch(f.url, `${PODS}?watch=true&resourceVersion=${rv}&labelSelector=app%3Dx`, { session });
      await Promise.all([w1.response, w2.response]);
      assert.equal(w1.status, 200);
      assert.equal(w1.headers['content-type'], 'application/json');
      const created = await h2get(
        session,
        PODS,
        { ':method': 'POST', 'content-type': 'application/json' },
        JSON.stringify(pod('h2-a', 'default', 0, { app: 'x' })),
      );
      assert.equal(created.status, 201, created.text);
      await h2get(
        session,
        PODS,
        { ':method': 'POST', 'content-type': 'application/json' },
        JSON.stringify(pod('h2-b')),
      );
      await w1.waitFor(() => w1.events.length >= 2, 'two events');
      await w2.waitFor(() => w2.events.length >= 1, 'the selected event');
      assert.deepEqual(
        w1.events.map((e) => e.object.metadata.name),
        ['h2-a', 'h2-b'],
      );
      assert.deepEqual(
        w2.events.map((e) => e.object.metadata.name),
        ['h2-a'],
      );
      // an HTTP/1.1 client on the same port at the same time
      assert.equal((await request(`${f.url}${PODS}/h2-b`)).status, 200);
      w1.close();
      w2.close();
      await waitUntil(() => f.server.activeWatches === 0, 'both h2 watches to end');
    } finally {
      session.close();
    }
  });

  test('the preface split into single bytes is still recognised (and so is a split HTTP/1.1 request)', async () => {
    const proxy = await splittingProxy(f.port, 30);
    try {
      const session = http2.connect(`http://127.0.0.1:${proxy.port}`);
      const r = await h2get(session, '/api');
      assert.equal(r.status, 200);
      assert.equal((JSON.parse(r.text) as { kind: string }).kind, 'APIVersions');
      session.close();
      const h1 = await request(`http://127.0.0.1:${proxy.port}/api/v1`);
      assert.equal(h1.status, 200);
      assert.equal(h1.json<{ kind: string }>().kind, 'APIResourceList');
    } finally {
      proxy.close();
    }
  });

  test('pipelined HTTP/1.1 requests in one packet are all answered, in order', async () => {
    const socket = net.connect(f.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.write(
      'GET /version HTTP/1.1\r\nHost: x\r\n\r\nGET /apis HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    await new Promise((r) => socket.on('close', r));
    const statuses = text.match(/HTTP\/1\.1 \d+/g);
    assert.deepEqual(statuses, ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    assert.ok(text.indexOf('gitVersion') < text.indexOf('APIGroupList'));
    assert.ok(text.endsWith('ok'));
  });
});

function makeCert(): { cert: Buffer; key: Buffer } | string {
  const dir = mkdtempSync(join(tmpdir(), 'watchcache-tls-'));
  try {
    const made = makeSelfSignedCert(dir);
    return typeof made === 'string' ? made : { cert: readFileSync(made.cert), key: readFileSync(made.key) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('TLS', () => {
  const made = makeCert();
  const skip = typeof made === 'string' ? made : false;
  let f: Fixture | undefined;
  after(() => f?.close());

  test('h2 via ALPN: watch, list; http/1.1 via ALPN: a chunked watch', { skip }, async () => {
    const tls = made as { cert: Buffer; key: Buffer };
    f = await startFixture({ tls });
    assert.match(f.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const w = new H2Watch(f.url, `${PODS}?watch=true&resourceVersion=0`, { ca: tls.cert });
    await w.response;
    assert.equal(w.status, 200);
    assert.equal(w.session.alpnProtocol, 'h2');
    const created = await request(`${f.url}${PODS}`, { method: 'POST', body: pod('tls-a'), ca: tls.cert });
    assert.equal(created.status, 201, created.text);
    await w.waitFor(() => w.events.length >= 1, 'an event over TLS h2');
    assert.equal(w.events[0]!.object.metadata.name, 'tls-a');
    w.close();

    // HTTP/1.1 over TLS: node:https offers only http/1.1 in ALPN
    const decoder = new EventDecoder();
    const req = https.get(`${f.url}${PODS}?watch=true&resourceVersion=0`, { ca: tls.cert, agent: false });
    const res = await new Promise<IncomingMessage>((r) => req.on('response', r));
    assert.equal(res.statusCode, 200);
    assert.equal(res.httpVersion, '1.1');
    assert.equal(res.headers['transfer-encoding'], 'chunked');
    res.on('data', (d: Buffer) => decoder.push(d));
    await waitUntil(() => decoder.events.length >= 1, 'an event over TLS http/1.1');
    assert.equal(decoder.events[0]!.object.metadata.name, 'tls-a');
    req.destroy();
  });
});
