/**
 * Property-based fuzz of the HTTP API (fast-check), in every mode: random
 * methods, paths, query strings (selectors, RVs, limits, timeouts), content
 * types and bodies (pod-shaped objects whose fields take any JSON type, null
 * maps, deep nests, garbage) are thrown at a real server on a real socket,
 * while label- and field-selector watches are open (an odd object reaches
 * selection and the beta ring mirror). Asserts:
 * - the process lives: no uncaught exception or unhandled rejection;
 * - every answer is a success (JSON with a kind, or a watch stream of
 *   well-formed events) or a Kubernetes Status whose code is the HTTP
 *   status, and never a 500;
 * - afterwards a clean create, list and watch work, and the open watches
 *   are still alive.
 * The case count is printed (FUZZ_RUNS overrides the runs per mode).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';
import { MODES } from '../../src/cache/cache-options.js';
import { RawWatch, request, waitUntil } from '../support/http-client.js';
import { startFixture, type Fixture } from '../server/server-fixture.js';
import { fuzzRequest, type FuzzRequest } from './fuzz-arbitraries.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const WATCH_READ_MS = 30;

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
  streamed: boolean;
}

/** Send one fuzz request; a watch stream is read for WATCH_READ_MS, then dropped. */
function send(port: number, r: FuzzRequest): Promise<Answer> {
  const qs = new URLSearchParams(r.query).toString();
  const headers: Record<string, string> = {};
  if (r.contentType !== '') headers['content-type'] = r.contentType;
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  if (body !== undefined) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: r.method, path: r.path + (qs === '' ? '' : `?${qs}`), headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        const contentType = String(res.headers['content-type'] ?? '');
        const streamed = res.statusCode === 200 && res.headers['content-length'] === undefined && r.method === 'GET';
        let done = false;
        const finish = (): void => {
          if (done) return;
          done = true;
          clearTimeout(guard);
          resolve({ status: res.statusCode ?? 0, contentType, body: Buffer.concat(chunks), streamed });
          req.destroy();
        };
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', finish);
        res.on('error', () => finish());
        res.on('close', finish);
        if (streamed) setTimeout(finish, WATCH_READ_MS);
      },
    );
    const guard = setTimeout(() => reject(new Error(`no answer in 15 s to ${r.method} ${r.path}?${qs}`)), 15_000);
    req.on('error', (err) => {
      clearTimeout(guard);
      reject(err);
    });
    req.end(body);
  });
}

const HEALTH = new Set(['/healthz', '/livez', '/readyz', '/metrics']);

/** The assertion on one answer (see the file comment). */
function checkAnswer(r: FuzzRequest, a: Answer): void {
  const what = `${r.method} ${r.path} ${JSON.stringify(r.query)} body=${(r.body ?? '').slice(0, 200)} -> ${a.status} ${a.body.toString('utf8').slice(0, 300)}`;
  assert.notEqual(a.status, 500, `500 InternalError: ${what}`);
  if (r.method === 'HEAD' || HEALTH.has(r.path) || r.path === '/openapi/v2') return;
  if (r.path === '/version' && a.status === 200) return; // version.Info has no kind
  if (a.streamed && a.contentType.startsWith('application/json')) {
    const text = a.body.toString('utf8');
    const lines = text.split('\n');
    lines.pop(); // an incomplete last line (the stream was dropped mid-way)
    for (const line of lines) {
      const ev = JSON.parse(line) as { type: string; object: { kind?: string; code?: number } };
      assert.ok(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(ev.type), what);
      if (ev.type === 'ERROR') {
        assert.equal(ev.object.kind, 'Status', what);
        assert.notEqual(ev.object.code, 500, `in-stream 500: ${what}`);
      }
    }
    return;
  }
  if (a.streamed) return; // msgpack streams are not requested here
  assert.match(a.contentType, /^application\/json/, what);
  const parsed = JSON.parse(a.body.toString('utf8')) as { kind?: string; code?: number; status?: string };
  assert.equal(typeof parsed.kind, 'string', what);
  if (a.status >= 400) {
    assert.equal(parsed.kind, 'Status', what);
    assert.equal(parsed.code, a.status, what);
    assert.equal(parsed.status, 'Failure', what);
  }
}

const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => void uncaught.push(err);

let totalCases = 0;

for (const mode of MODES) {
  describe(`HTTP fuzz, mode ${mode}`, () => {
    let f: Fixture;
    const watches: RawWatch[] = [];
    before(async () => {
      process.on('uncaughtException', onUncaught);
      process.on('unhandledRejection', onUncaught);
      f = await startFixture({ mode, blockTimeoutMs: 50, history: { lowerBound: 8, upperBound: 64 } });
      for (const q of [
        'labelSelector=app%3Dx',
        'labelSelector=!tier',
        'fieldSelector=spec.nodeName%3Dn1',
        'fieldSelector=metadata.name!%3Da',
        'allowWatchBookmarks=true',
      ]) {
        watches.push(new RawWatch(f.port, `/api/v1/pods?watch=true&resourceVersion=0&${q}`));
      }
      await Promise.all(watches.map((w) => w.response));
    });
    after(async () => {
      for (const w of watches) w.close();
      await f.close();
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onUncaught);
    });

    test(`${RUNS} random requests: every answer a success or a Status, the process lives`, async () => {
      let cases = 0;
      await fc.assert(
        fc.asyncProperty(fuzzRequest, async (r) => {
          cases++;
          checkAnswer(r, await send(f.port, r));
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      totalCases += cases;
      console.log(`fuzz http ${mode}: ${cases} cases`);
      assert.deepEqual(uncaught, []);
    });

    test('afterwards: the open watches are alive, a clean create, list and watch work', async () => {
      for (const w of watches) assert.equal(w.closed, false, 'a selector watch was ended by the fuzz');
      const created = await request(`${f.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        body: { metadata: { name: 'clean', labels: { app: 'x' } }, spec: { nodeName: 'n1' } },
      });
      assert.equal(created.status, 201, created.text);
      const list = await request(`${f.url}/api/v1/pods`);
      assert.equal(list.status, 200, list.text);
      const items = list.json<{ kind: string; items: { metadata: { name: string } }[] }>();
      assert.equal(items.kind, 'PodList');
      assert.ok(items.items.some((i) => i.metadata.name === 'clean'));
      const sel = await request(`${f.url}/api/v1/pods?labelSelector=app%3Dx`);
      assert.equal(sel.status, 200, sel.text);
      const w = new RawWatch(
        f.port,
        '/api/v1/namespaces/default/pods?watch=true&resourceVersion=0&labelSelector=app%3Dx',
      );
      await w.waitFor(
        () => w.events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'clean'),
        'the clean pod in a fresh watch',
      );
      w.close();
      const labelled = watches[0]!;
      await labelled.waitFor(
        () => labelled.events.some((e) => e.object.metadata.name === 'clean'),
        'the clean pod in the open label watch',
      );
      await waitUntil(() => uncaught.length === 0, 'no uncaught errors');
      assert.deepEqual(uncaught, []);
    });
  });
}

after(() => console.log(`fuzz http: ${totalCases} cases in total over ${MODES.join(', ')}`));
