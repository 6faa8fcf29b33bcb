/**
 * Operability (issue 15 item 5), against real `watchcache serve` processes:
 * - logs are pino JSON lines on stderr (not a terminal) with level, time and
 *   msg; --request-log logs each request; --log-level is checked;
 * - /livez is 200; /metrics carries prom-client's default process metrics
 *   and the limits' counters;
 * - over etcd: /readyz is 200, turns 503 naming the unreachable store while
 *   etcd is down, and 200 again once it is back; the outage and the
 *   recovery are logged once each; a write during the outage is a 503
 *   logged with its cause.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request, waitUntil } from '../support/http-client.js';
import { startEtcd, type EtcdServer } from '../support/etcd-server.js';
import { serve, type Served } from '../support/serve-process.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface LogLine {
  level: number;
  time: number;
  msg: string;
  [k: string]: unknown;
}

function logLines(s: Served): LogLine[] {
  return s
    .stderr()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LogLine);
}

describe('logs, livez, metrics', () => {
  let s: Served;
  after(async () => {
    s?.child.kill('SIGTERM');
    await s?.exited;
  });

  test('JSON-line logs with --request-log; /livez; default process metrics', async () => {
    s = await serve(['--mode', 'alpha', '--request-log', '--log-level', 'debug']);
    assert.equal((await request(`${s.url}/livez`)).status, 200);
    assert.equal((await request(`${s.url}/api/v1/namespaces/default/pods?limit=5`)).status, 200);
    const metrics = (await request(`${s.url}/metrics`)).text;
    for (const name of [
      'process_resident_memory_bytes',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'watchcache_response_buffer_overflows_total',
      'watchcache_request_timeouts_total',
      'apiserver_registered_watchers',
    ]) {
      assert.match(metrics, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    await waitUntil(
      () => logLines(s).some((l) => l.msg === 'request' && l.path === '/api/v1/namespaces/default/pods'),
      'the request log line',
    );
    const lines = logLines(s); // every line parses as JSON
    const serving = lines.find((l) => l.msg === 'serving');
    assert.ok(serving, 'no "serving" line');
    assert.equal(serving.level, 30);
    assert.equal(typeof serving.time, 'number');
    const req = lines.find((l) => l.msg === 'request' && l.path === '/api/v1/namespaces/default/pods')!;
    assert.equal(req.method, 'GET');
    assert.equal(req.status, 200);
    assert.equal(req.query, 'limit=5');
    assert.equal(typeof req.durationMs, 'number');
  });

  test('--log-level is validated', () => {
    const r = spawnSync(process.execPath, [MAIN, 'serve', '--log-level', 'loud'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--log-level must be one of trace, debug, info, warn, error, fatal, silent/);
  });
});

describe('over etcd: readiness, outage and recovery logs, 5xx with cause', () => {
  let etcd: EtcdServer | null = null;
  let s: Served | undefined;
  after(async () => {
    s?.child.kill('SIGTERM');
    await s?.exited;
    await etcd?.stop();
  });

  test('/readyz follows the store; the outage and the recovery are logged once each', async (t) => {
    etcd = await startEtcd();
    if (etcd === null) return t.skip('etcd not installed');
    s = await serve(['--store', 'etcd', '--etcd', etcd.endpoint, '--mode', 'beta']);
    const served = s;
    await waitUntil(async () => (await request(`${served.url}/readyz`)).status === 200, 'ready');
    await etcd.kill();
    await waitUntil(
      async () => {
        const r = await request(`${served.url}/readyz`);
        return r.status === 503 && /\[-\]store pods: unreachable/.test(r.text);
      },
      '/readyz 503 naming the unreachable store',
      30_000,
    );
    const write = await request(`${served.url}/api/v1/namespaces/default/pods`, {
      method: 'POST',
      body: { metadata: { name: 'during' } },
    });
    assert.equal(write.status, 503, write.text);
    await waitUntil(() => logLines(served).some((l) => l.msg === 'server error' && l.status === 503), 'the 503 logged');
    const err = logLines(served).find((l) => l.msg === 'server error')!;
    assert.equal(err.level, 50);
    assert.match(String(err.cause), /etcd .* unavailable/);
    assert.equal(err.path, '/api/v1/namespaces/default/pods');
    await etcd.restart();
    await waitUntil(async () => (await request(`${served.url}/readyz`)).status === 200, '/readyz 200 again', 30_000);
    // Every served resource has its own store (pods and the always-served events): once each.
    const ofPods = (l: LogLine): boolean => l.resource === 'pods';
    await waitUntil(
      () => logLines(served).some((l) => l.msg === 'the store is reachable again' && ofPods(l)),
      'the recovery logged',
    );
    const lines = logLines(served).filter(ofPods);
    assert.equal(lines.filter((l) => l.msg === 'the store is unreachable').length, 1, 'outage logged once');
    assert.equal(lines.filter((l) => l.msg === 'the store is reachable again').length, 1, 'recovery logged once');
    const down = lines.find((l) => l.msg === 'the store is unreachable')!;
    assert.equal(down.resource, 'pods');
    assert.equal(typeof down.cause, 'string');
    assert.equal(
      (
        await request(`${served.url}/api/v1/namespaces/default/pods`, {
          method: 'POST',
          body: { metadata: { name: 'after' } },
        })
      ).status,
      201,
    );
  });
});

describe('readiness while the cache re-lists', () => {
  test('/readyz is 503 while a cache re-lists after its store watch broke, 200 once it watches again', async () => {
    const { MemoryStore } = await import('../../src/store/memory-store.js');
    const { WatchCache } = await import('../../src/cache/watch-cache.js');
    const { createWatchServer } = await import('../../src/server/server.js');
    const store = new MemoryStore();
    let breakWatch: ((err: Error) => void) | undefined;
    const breaking = {
      list: () => store.list(),
      currentResourceVersion: () => store.currentResourceVersion(),
      watch: (after: number, onEvent: Parameters<typeof store.watch>[1], onError: (e: Error) => void) => {
        const w = store.watch(after, onEvent, onError);
        breakWatch = onError;
        return w;
      },
    };
    const cache = new WatchCache({ store: breaking, mode: 'alpha' });
    await cache.start();
    const server = createWatchServer({ caches: [cache], port: 0 });
    await server.listen();
    try {
      assert.equal((await request(`${server.url}/readyz`)).status, 200);
      breakWatch!(new Error('the store watch broke'));
      const r = await request(`${server.url}/readyz`);
      assert.equal(r.status, 503);
      assert.match(r.text, /\[-\]watch-cache pods: not ready \(listing or re-listing its store\)/);
      await waitUntil(
        async () => (await request(`${server.url}/readyz`)).status === 200,
        'ready again after the relist',
      );
    } finally {
      await server.close();
      await cache.stop();
    }
  });
});
