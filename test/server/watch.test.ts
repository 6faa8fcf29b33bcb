/**
 * Watch streaming over HTTP/1.1 (raw TCP, chunked framing checked byte by
 * byte): event shapes, initial events, bookmarks only when asked,
 * timeoutSeconds, in-stream 410, msgpack framing, the watch cap (429),
 * disconnect handling and encode-once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { H2Watch, RawWatch, request, waitUntil, type WireEvent } from '../support/http-client.js';
import { startFixture, type Fixture } from './server-fixture.js';

const PODS = '/api/v1/namespaces/default/pods';

function rvs(events: WireEvent[]): number[] {
  return events.map((e) => Number(e.object.metadata.resourceVersion));
}

describe('HTTP/1.1 watch', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ resources: ['pods', 'configmaps'], bookmarkFrequencyMs: 100, maxWatches: 1000 });
  });
  after(() => f.close());

  test('chunked JSON lines, one per event, each with kind and apiVersion', async () => {
    const list = (await request(`${f.url}${PODS}`)).json<{ metadata: { resourceVersion: string } }>();
    const w = new RawWatch(f.port, `${PODS}?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    await w.response;
    assert.equal(w.status, 200);
    assert.equal(w.headers['content-type'], 'application/json');
    assert.equal(w.headers['transfer-encoding'], 'chunked');
    const store = f.store();
    const a = await store.create({ metadata: { namespace: 'default', name: 'w-a' }, spec: {} });
    await store.update({ ...a, spec: { nodeName: 'n1' } });
    await store.delete('default', 'w-a');
    await w.waitFor(() => w.events.length >= 3, '3 events');
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    for (const e of w.events) {
      assert.equal(e.object.kind, 'Pod');
      assert.equal(e.object.apiVersion, 'v1');
      assert.equal(e.object.metadata.name, 'w-a');
    }
    const first = Number(list.metadata.resourceVersion);
    assert.deepEqual(rvs(w.events), [first + 1, first + 2, first + 3]);
    assert.equal(w.decoder.leftover, 0, 'every line ends with \\n');
    assert.equal(w.closed, false);
    w.close();
    await waitUntil(
      () => f.server.activeWatches === 0 && f.cache().watcherCount === 0,
      'the watcher to stop after the client left',
    );
  });

  test('resourceVersion=0 starts with the current state as ADDED; selectors and the watch path prefix apply', async () => {
    const store = f.store('configmaps');
    await store.create({ metadata: { namespace: 'ns1', name: 'cm-1', labels: { app: 'a' } }, data: {} });
    await store.create({ metadata: { namespace: 'ns1', name: 'cm-2', labels: { app: 'b' } }, data: {} });
    await store.create({ metadata: { namespace: 'ns2', name: 'cm-3', labels: { app: 'a' } }, data: {} });
    const w = new RawWatch(f.port, '/api/v1/watch/configmaps?resourceVersion=0&labelSelector=app%3Da');
    await w.waitFor(() => w.events.length >= 2, 'initial events');
    assert.deepEqual(
      w.events.map((e) => `${e.type}:${e.object.metadata.namespace}/${e.object.metadata.name}:${e.object.kind}`),
      ['ADDED:ns1/cm-1:ConfigMap', 'ADDED:ns2/cm-3:ConfigMap'],
    );
    const single = new RawWatch(f.port, '/api/v1/namespaces/ns1/configmaps/cm-2?watch=1&resourceVersion=0');
    await single.waitFor(() => single.events.length >= 1, 'the single object');
    assert.deepEqual(
      single.events.map((e) => e.object.metadata.name),
      ['cm-2'],
    );
    w.close();
    single.close();
  });

  test('bookmarks only with allowWatchBookmarks; timeoutSeconds ends the stream cleanly', async () => {
    const rv = f.cache().resourceVersion;
    const withBm = new RawWatch(
      f.port,
      `${PODS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3`,
    );
    const without = new RawWatch(f.port, `${PODS}?watch=true&resourceVersion=${rv}&timeoutSeconds=3`);
    await Promise.all([withBm.response, without.response]);
    await f.store().create({ metadata: { namespace: 'default', name: 'bm-1' }, spec: {} });
    await withBm.waitFor(() => withBm.endedCleanly, 'the timeout to end the stream');
    await without.waitFor(() => without.endedCleanly, 'the timeout to end the stream');
    assert.ok(
      withBm.events.some((e) => e.type === 'BOOKMARK'),
      'a bookmark was asked for',
    );
    const bm = withBm.events.find((e) => e.type === 'BOOKMARK')!;
    assert.equal(bm.object.kind, 'Pod');
    assert.equal(bm.object.apiVersion, 'v1');
    assert.ok(Number(bm.object.metadata.resourceVersion) >= rv + 1);
    assert.deepEqual(
      without.events.map((e) => e.type),
      ['ADDED'],
      'no bookmark unless asked',
    );
    assert.ok(!withBm.events.some((e) => e.type === 'ERROR'));
  });

  test('sendInitialEvents ends the initial events with the annotated bookmark', async () => {
    await f.store().create({ metadata: { namespace: 'sie', name: 'sie-1' }, spec: {} });
    const w = new RawWatch(
      f.port,
      '/api/v1/namespaces/sie/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=',
    );
    await w.waitFor(() => w.events.some((e) => e.type === 'BOOKMARK'), 'the initial-events-end bookmark');
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['ADDED', 'BOOKMARK'],
    );
    assert.equal(w.events[1]!.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    w.close();
  });

  test('an expired start RV: HTTP 200, one in-stream ERROR 410, then a clean end', async () => {
    const g = await startFixture({ history: { lowerBound: 2, upperBound: 2 } });
    try {
      for (let i = 0; i < 6; i++)
        await g.store().create({ metadata: { namespace: 'default', name: `x-${i}` }, spec: {} });
      await waitUntil(() => g.cache().resourceVersion === 6, 'the cache to catch up');
      const w = new RawWatch(g.port, `${PODS}?watch=true&resourceVersion=1`);
      await w.waitFor(() => w.endedCleanly, 'the stream to end');
      assert.equal(w.status, 200);
      assert.equal(w.events.length, 1);
      const e = w.events[0]!;
      assert.equal(e.type, 'ERROR');
      assert.equal(e.object.kind, 'Status');
      assert.equal(e.object.code, 410);
      assert.equal(e.object.reason, 'Expired');
      assert.match(String(e.object.message), /^too old resource version: 1 \(\d+\)$/);
    } finally {
      await g.close();
    }
  });

  test('Accept: application/vnd.msgpack streams 4-byte length-prefixed msgpack frames', async () => {
    const rv = f.cache().resourceVersion;
    const w = new RawWatch(
      f.port,
      `${PODS}?watch=true&resourceVersion=${rv}`,
      { accept: 'application/vnd.msgpack' },
      'msgpack',
    );
    await w.response;
    assert.equal(w.headers['content-type'], 'application/vnd.msgpack');
    await f.store().create({ metadata: { namespace: 'default', name: 'mp-1' }, spec: { n: 1 } });
    await w.waitFor(() => w.events.length >= 1, 'a msgpack event');
    assert.equal(w.events[0]!.type, 'ADDED');
    assert.equal(w.events[0]!.object.metadata.name, 'mp-1');
    assert.equal(w.events[0]!.object.kind, 'Pod');
    assert.equal(w.decoder.leftover, 0);
    w.close();
    const bad = await request(`${f.url}${PODS}?watch=true`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    assert.equal(bad.status, 406);
    assert.equal(bad.json<{ reason: string }>().reason, 'NotAcceptable');
  });

  test('each event is encoded once, whatever the number of streams', async () => {
    const rv = f.cache().resourceVersion;
    const path = `/api/v1/namespaces/enc/pods?watch=true&resourceVersion=${rv}`;
    const clients = [new RawWatch(f.port, path), new RawWatch(f.port, path), new H2Watch(f.url, path)];
    await Promise.all(clients.map((c) => c.response));
    const before = await f.metric('apiserver_watch_cache_event_encodings_total', { resource: 'pods', format: 'json' });
    for (let i = 0; i < 5; i++) await f.store().create({ metadata: { namespace: 'enc', name: `e-${i}` }, spec: {} });
    for (const c of clients) await c.waitFor(() => c.events.length >= 5, '5 events on every stream');
    const encoded =
      (await f.metric('apiserver_watch_cache_event_encodings_total', { resource: 'pods', format: 'json' })) - before;
    assert.equal(encoded, 5, 'one JSON encoding per event for 3 streams');
    for (const c of clients) assert.deepEqual(rvs(c.events), rvs(clients[0]!.events));
    for (const c of clients) c.close();
  });
});

describe('watch cap', () => {
  test('--max-watches: one more watch is 429 with Retry-After 1; a freed slot is reusable', async () => {
    const f = await startFixture({ maxWatches: 2 });
    try {
      const a = new RawWatch(f.port, `${PODS}?watch=true`);
      const b = new H2Watch(f.url, `${PODS}?watch=true`);
      await Promise.all([a.response, b.response]);
      assert.equal(f.server.activeWatches, 2);
      const r = await request(`${f.url}${PODS}?watch=true`);
      assert.equal(r.status, 429);
      assert.equal(r.headers['retry-after'], '1');
      const s = r.json<{ kind: string; reason: string; code: number; details: { retryAfterSeconds: number } }>();
      assert.equal(s.kind, 'Status');
      assert.equal(s.reason, 'TooManyRequests');
      assert.equal(s.details.retryAfterSeconds, 1);
      assert.equal((await request(`${f.url}${PODS}`)).status, 200, 'lists are not capped');
      b.close();
      await waitUntil(() => f.server.activeWatches === 1, 'the slot to be freed');
      const c = new RawWatch(f.port, `${PODS}?watch=true`);
      await c.response;
      assert.equal(c.status, 200);
      a.close();
      c.close();
    } finally {
      await f.close();
    }
  });
});

describe('shutdown', () => {
  test('close() ends open watches cleanly and gives up on a client that stopped reading', async () => {
    const f = await startFixture();
    const reading = new RawWatch(f.port, `${PODS}?watch=true`);
    const h2 = new H2Watch(f.url, `${PODS}?watch=true`);
    const stuck = new RawWatch(f.port, `${PODS}?watch=true`);
    await Promise.all([reading.response, h2.response, stuck.response]);
    stuck.pause();
    for (let i = 0; i < 700; i++)
      await f
        .store()
        .create({ metadata: { namespace: 'default', name: `big-${i}` }, spec: { payload: 'x'.repeat(8192) } });
    await reading.waitFor(() => reading.events.length === 700, 'the reading client to get everything');
    await f.close();
    await reading.waitFor(() => reading.endedCleanly, 'a clean end (terminating chunk)');
    await h2.waitFor(() => h2.endedCleanly, 'a clean end (END_STREAM)');
    assert.equal(f.server.activeWatches, 0);
    stuck.resume(); // only a reading socket can notice that the server gave up on it
    await stuck.waitClosed();
    const refused = await request(`${f.url}/healthz`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'no longer accepting');
  });
});
