/**
 * EtcdStore against a real etcd (started by test/support/etcd-server.ts; the whole file is skipped
 * only when etcd is not installed and CI is unset).
 *
 * Covers: CRUD parity with MemoryStore (one scenario table run against both, results and watch
 * events compared after normalising RVs/uids), paged lists at one revision, watch replay + live
 * (DELETED carries the last object, MODIFIED carries prevObject), compaction of a stalled watch and
 * a watch from a compacted revision (StoreCompactedError), progress for an idle watcher (periodic
 * notifications; requestProgress on an etcd whose periodic interval is 10 min), currentResourceVersion,
 * and SIGKILL + restart of etcd with the exact RV sequence the watcher saw.
 *
 * Timing is never asserted: waits have generous failure bounds only.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Etcd3 } from 'etcd3';
import type { KubeObject, Store, StoreEvent } from '../../src/core/types.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { EtcdStore } from '../../src/store/etcd-store.js';
import { StoreCompactedError, StoreUnavailableError } from '../../src/store/store-errors.js';
import { startEtcd, type EtcdServer } from '../support/etcd-server.js';

const etcd: EtcdServer | null = await startEtcd();
const skip = etcd === null ? 'etcd not installed' : false;
const stores: EtcdStore[] = [];

after(async () => {
  for (const s of stores) s.close();
  await etcd?.stop();
});

function server(): EtcdServer {
  assert.ok(etcd, 'etcd not started');
  return etcd;
}

function etcdStore(
  prefix: string,
  extra: { endpoint?: string; pageSize?: number; requestTimeoutMs?: number; watchReconnectTimeoutMs?: number } = {},
): EtcdStore {
  const { endpoint, ...options } = extra;
  const s = new EtcdStore({ endpoints: [endpoint ?? server().endpoint], prefix, ...options });
  stores.push(s);
  return s;
}

/** Poll `cond` every 20 ms; fail with `what` after `timeoutMs` (a failure bound, not a timing assertion). */
async function waitFor(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const pod = (namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace, name, labels: { app: name } },
  spec,
});
const rvOf = (o: KubeObject): number => Number(o.metadata.resourceVersion);

type LogEntry = { event: StoreEvent } | { progress: number };

/** A store watch recording events, progress and errors in arrival order. */
function record(store: Store, afterRV: number) {
  const log: LogEntry[] = [];
  const errors: Error[] = [];
  const w = store.watch(
    afterRV,
    (event) => log.push({ event }),
    (err) => errors.push(err),
    (progress) => log.push({ progress }),
  );
  return {
    log,
    errors,
    stop: () => w.stop(),
    events: () => log.flatMap((e) => ('event' in e ? [e.event] : [])),
    rvs: () => log.flatMap((e) => ('event' in e ? [e.event.resourceVersion] : [])),
    maxProgress: () => Math.max(-1, ...log.flatMap((e) => ('progress' in e ? [e.progress] : []))),
  };
}

/** Watch invariants: event RVs strictly increase; a progress p comes after every event <= p and before every event > p. */
function assertOrdered(log: LogEntry[]): void {
  let last = -1;
  let lastProgress = -1;
  for (const e of log) {
    if ('event' in e) {
      assert.ok(e.event.resourceVersion > last, `event RV ${e.event.resourceVersion} after ${last}`);
      assert.ok(
        e.event.resourceVersion > lastProgress,
        `event RV ${e.event.resourceVersion} after progress ${lastProgress}`,
      );
      assert.equal(e.event.object.metadata.resourceVersion, String(e.event.resourceVersion));
      last = e.event.resourceVersion;
    } else {
      assert.ok(
        e.progress > lastProgress && e.progress >= last,
        `progress ${e.progress} after event ${last} / progress ${lastProgress}`,
      );
      lastProgress = e.progress;
    }
  }
}

// ------------------------------------------------------------------ parity with MemoryStore

interface CrudStore extends Store {
  create(o: KubeObject): Promise<KubeObject>;
  update(o: KubeObject): Promise<KubeObject>;
  delete(namespace: string, name: string, options?: { resourceVersion?: string }): Promise<KubeObject>;
  get(namespace: string, name: string): Promise<KubeObject>;
}

type Results = Record<string, KubeObject>;
/** One scenario step: an id, and an operation that may read earlier successful results. */
type Step = [id: string, run: (s: CrudStore, r: Results) => Promise<unknown>];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

const scenario: Step[] = [
  ['a', (s) => s.create(pod('default', 'a', { v: 1 }))],
  ['create a again: 409 AlreadyExists', (s) => s.create(pod('default', 'a', { v: 9 }))],
  ['get a', (s) => s.get('default', 'a')],
  ['a2', (s, r) => s.update({ ...r.a!, spec: { v: 2 } })],
  ['update a at a stale RV: 409 Conflict', (s, r) => s.update({ ...r.a!, spec: { v: 3 } })],
  [
    'a3',
    (s) =>
      s.update({
        metadata: { namespace: 'default', name: 'a', uid: 'forged', creationTimestamp: '2000-01-01T00:00:00Z' },
        spec: { v: 4 },
      }),
  ],
  [
    'update kept uid and creationTimestamp',
    async (_s, r) =>
      r.a3!.metadata.uid === r.a!.metadata.uid && r.a3!.metadata.creationTimestamp === r.a!.metadata.creationTimestamp,
  ],
  [
    'update a at a malformed RV: 409',
    (s) => s.update({ metadata: { namespace: 'default', name: 'a', resourceVersion: 'x1' } }),
  ],
  ['update a missing object: 404', (s) => s.update(pod('default', 'missing'))],
  [
    'update a missing object with an RV: 404',
    (s) => s.update({ metadata: { namespace: 'default', name: 'missing', resourceVersion: '1' } }),
  ],
  ['b', (s) => s.create(pod('a-b', 'b'))],
  ['c', (s) => s.create(pod('a', 'c'))],
  ['d', (s) => s.create(pod('kube-system', 'd'))],
  [
    'e',
    (s) => s.create({ metadata: { namespace: 'default', name: 'e', resourceVersion: '999', uid: 'mine' }, spec: {} }),
  ],
  [
    'delete a at a stale RV: 409 Conflict',
    (s, r) => s.delete('default', 'a', { resourceVersion: r.a2!.metadata.resourceVersion! }),
  ],
  ['deleted a', (s, r) => s.delete('default', 'a', { resourceVersion: r.a3!.metadata.resourceVersion! })],
  ['get deleted a: 404', (s) => s.get('default', 'a')],
  ['delete deleted a: 404', (s) => s.delete('default', 'a')],
  ['a recreated', (s) => s.create(pod('default', 'a', { v: 5 }))],
  ['recreate got a new uid', async (_s, r) => r['a recreated']!.metadata.uid !== r.a!.metadata.uid],
  ['cluster-scoped', (s) => s.create({ metadata: { name: 'node-1' }, spec: {} })],
  ['get cluster-scoped', (s) => s.get('', 'node-1')],
  ['update cluster-scoped', (s, r) => s.update({ ...r['cluster-scoped']!, spec: { x: 1 } })],
  ['delete cluster-scoped', (s) => s.delete('', 'node-1')],
  ['create without a name: 400', (s) => s.create({ metadata: { namespace: 'default' } })],
  ['create without metadata: 400', (s) => s.create({} as KubeObject)],
  [
    'create with a non-string namespace: 400',
    (s) => s.create({ metadata: { name: 'z', namespace: 7 as unknown as string } }),
  ],
  ['update e without RV', (s) => s.update({ metadata: { namespace: 'default', name: 'e' }, spec: { after: true } })],
  ['delete e without RV', (s) => s.delete('default', 'e')],
  ['list', (s) => s.list()],
  ['currentResourceVersion', (s) => s.currentResourceVersion()],
];

/** Replace RVs by their offset from `base`, uids by first-seen ordinals, checked timestamps by 'TS'. */
function normalizer(base: number) {
  const uids = new Map<string, string>();
  const rv = (n: number | string) => `rv+${Number(n) - base}`;
  const norm = (v: unknown, key = ''): unknown => {
    if (key === 'resourceVersion' && (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))))
      return rv(v);
    if (key === 'uid' && typeof v === 'string') {
      assert.match(v, UUID);
      if (!uids.has(v)) uids.set(v, `uid#${uids.size}`);
      return uids.get(v);
    }
    if (key === 'creationTimestamp' && typeof v === 'string') {
      assert.match(v, TIMESTAMP);
      return 'TS';
    }
    if (typeof v === 'number' && key === '') return rv(v); // currentResourceVersion
    if (Array.isArray(v)) return v.map((x) => norm(x, '#'));
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x, k)]));
    }
    return v;
  };
  const error = (err: unknown) => {
    const e = err as { name: string; code?: number; reason?: string; message: string };
    return { error: e.name, code: e.code, reason: e.reason, message: e.message.replace(/\b\d+\b/g, (n) => rv(n)) };
  };
  return { norm, error };
}

async function runScenario(store: CrudStore): Promise<{ outcomes: unknown[]; events: unknown[] }> {
  const base = await store.currentResourceVersion();
  const { norm, error } = normalizer(base);
  const watch = record(store, base);
  const results: Results = {};
  const outcomes: unknown[] = [];
  let writes = 0;
  for (const [id, run] of scenario) {
    try {
      const value = await run(store, results);
      if (value !== null && typeof value === 'object' && 'metadata' in value) {
        results[id] = value as KubeObject;
        if (!id.startsWith('get')) writes++;
      }
      outcomes.push([id, norm(value)]);
    } catch (err) {
      outcomes.push([id, error(err)]);
    }
  }
  await waitFor(() => watch.events().length >= writes, `${writes} watch events`);
  await new Promise((r) => setTimeout(r, 50)); // a chance for any unexpected extra event to show up
  watch.stop();
  assertOrdered(watch.log);
  return { outcomes, events: watch.events().map((e) => norm(e)) };
}

test('CRUD and watch events: EtcdStore behaves exactly like MemoryStore', { skip }, async () => {
  const memory = await runScenario(new MemoryStore());
  const real = await runScenario(etcdStore('/parity/pods/'));
  // The scenario itself must mean something: spot-check the MemoryStore side.
  const byId = new Map(memory.outcomes as [string, unknown][]);
  assert.deepEqual(byId.get('create a again: 409 AlreadyExists'), {
    error: 'ConflictError',
    code: 409,
    reason: 'AlreadyExists',
    message: 'pods "a" already exists',
  });
  assert.equal((byId.get('update a at a stale RV: 409 Conflict') as { reason: string }).reason, 'Conflict');
  assert.equal((byId.get('update a missing object: 404') as { code: number }).code, 404);
  assert.equal((byId.get('create without metadata: 400') as { code: number }).code, 400);
  assert.equal(byId.get('update kept uid and creationTimestamp'), true);
  assert.equal(byId.get('recreate got a new uid'), true);
  assert.deepEqual(
    (byId.get('deleted a') as KubeObject).metadata.resourceVersion,
    'rv+8',
    'delete returns the last state with the deletion RV',
  );
  const list = byId.get('list') as { items: KubeObject[] };
  assert.deepEqual(
    list.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ['a-b/b', 'a/c', 'default/a', 'kube-system/d'], // '-' < '/',
  );
  // Parity, step by step, then the watch streams.
  for (let i = 0; i < scenario.length; i++) {
    assert.deepEqual(real.outcomes[i], memory.outcomes[i], `step ${i}: ${scenario[i]![0]}`);
  }
  assert.deepEqual(real.events, memory.events);
  const types = (memory.events as StoreEvent[]).map((e) => e.type);
  assert.deepEqual(types.slice(0, 4), ['ADDED', 'MODIFIED', 'MODIFIED', 'ADDED']);
});

// ------------------------------------------------------------------ list

test('list: more than one page, one revision, key order', { skip }, async () => {
  const prefix = '/paging/pods/';
  const store = etcdStore(prefix, { pageSize: 7 });
  const names = Array.from({ length: 40 }, (_, i) => `p${String(i).padStart(3, '0')}`);
  const created = new Map<string, KubeObject>();
  for (let i = 0; i < names.length; i += 10) {
    for (const o of await Promise.all(
      names.slice(i, i + 10).map((n) => store.create(pod(i % 20 === 0 ? 'ns1' : 'ns2', n))),
    )) {
      created.set(o.metadata.name!, o);
    }
  }
  // Writes race with the paging: every page must still come from the first page's revision.
  const writer = etcdStore(prefix);
  let writing = true;
  const writes = (async () => {
    let i = 0;
    while (writing && i < 200) {
      const n = names[i % names.length]!;
      const cur = created.get(n)!;
      await writer.update({ ...cur, metadata: { ...cur.metadata, resourceVersion: undefined }, spec: { i } });
      await writer.create(pod('ns1', `late-${i}`));
      i++;
    }
  })();
  const lists = [];
  for (let k = 0; k < 5; k++) lists.push(await store.list());
  writing = false;
  await writes;

  const raw = new Etcd3({ hosts: server().endpoint });
  try {
    for (const list of lists) {
      // The same snapshot, read in one request at the list's revision.
      const snap = await raw.getAll().prefix(prefix).revision(String(list.resourceVersion)).exec();
      assert.equal(list.items.length, snap.kvs.length);
      assert.ok(list.items.length >= names.length);
      assert.deepEqual(
        list.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`),
        snap.kvs.map((kv) => `${kv.key.toString().slice(prefix.length)}@${kv.mod_revision}`),
      );
      for (const o of list.items) assert.ok(rvOf(o) <= list.resourceVersion);
    }
  } finally {
    raw.close();
  }
  const keys = lists[0]!.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
  assert.deepEqual(keys, [...keys].sort());
});

// ------------------------------------------------------------------ watch

test(
  'watch from a revision: replay then live, DELETED carries the last object, MODIFIED the previous',
  { skip },
  async () => {
    const store = etcdStore('/watch/pods/');
    const start = await store.currentResourceVersion();
    const a = await store.create(pod('default', 'a', { v: 1 }));
    const b = await store.create(pod('default', 'b'));
    const a2 = await store.update({ ...a, spec: { v: 2 } });
    const bDeleted = await store.delete('default', 'b');

    const w = record(store, start);
    await waitFor(() => w.events().length === 4, 'the 4 replayed events');
    const c = await store.create(pod('other', 'c'));
    const aDeleted = await store.delete('default', 'a', { resourceVersion: a2.metadata.resourceVersion! });
    await waitFor(() => w.events().length === 6, 'the 2 live events');
    w.stop();
    assertOrdered(w.log);

    const ev = w.events();
    assert.deepEqual(
      ev.map((e) => `${e.type} ${e.object.metadata.name} ${e.resourceVersion}`),
      [
        `ADDED a ${rvOf(a)}`,
        `ADDED b ${rvOf(b)}`,
        `MODIFIED a ${rvOf(a2)}`,
        `DELETED b ${rvOf(bDeleted)}`,
        `ADDED c ${rvOf(c)}`,
        `DELETED a ${rvOf(aDeleted)}`,
      ],
    );
    assert.deepEqual(ev[0]!.object, a);
    assert.equal(ev[0]!.prevObject, undefined);
    assert.deepEqual(ev[2]!.object, a2);
    assert.deepEqual(ev[2]!.prevObject, a, 'MODIFIED carries the previous state');
    assert.deepEqual(ev[3]!.object, bDeleted, 'DELETED carries the last state with the deletion RV');
    assert.deepEqual(ev[3]!.prevObject, b);
    assert.deepEqual(ev[5]!.object, aDeleted);
    assert.deepEqual(ev[5]!.prevObject, a2);

    // A watch from the middle starts right after that revision.
    const w2 = record(store, rvOf(a2));
    await waitFor(() => w2.events().length === 3, 'events after a2');
    w2.stop();
    assert.deepEqual(w2.rvs(), [rvOf(bDeleted), rvOf(c), rvOf(aDeleted)]);
  },
);

test('currentResourceVersion: the etcd revision, moved by writes anywhere', { skip }, async () => {
  const store = etcdStore('/crv/pods/');
  const empty = await store.currentResourceVersion();
  assert.ok(empty >= 1);
  const a = await store.create(pod('default', 'a'));
  assert.equal(await store.currentResourceVersion(), rvOf(a));
  const other = etcdStore('/crv/configmaps/');
  const x = await other.create(pod('default', 'x'));
  assert.equal(await store.currentResourceVersion(), rvOf(x));
  assert.equal((await store.list()).resourceVersion, rvOf(x));
});

test('progress: an idle watcher advances with periodic etcd notifications', { skip }, async () => {
  const store = etcdStore('/progress/pods/');
  const other = etcdStore('/progress/other/');
  const a = await store.create(pod('default', 'a'));
  const w = record(store, rvOf(a));
  for (let i = 0; i < 3; i++) await other.create(pod('default', `o${i}`));
  const current = await store.currentResourceVersion();
  await waitFor(() => w.maxProgress() >= current, `onProgress >= ${current}`);
  w.stop();
  assert.deepEqual(w.events(), []);
  assertOrdered(w.log);
});

test('requestProgress: proves progress by reads when periodic notifications are 10 min apart', { skip }, async () => {
  const slow = await startEtcd({ progressNotifyInterval: '10m' });
  assert.ok(slow);
  try {
    const store = etcdStore('/rp/pods/', { endpoint: slow.endpoint });
    const other = etcdStore('/rp/other/', { endpoint: slow.endpoint });
    const x = await store.create(pod('default', 'x'));
    const y = await store.create(pod('default', 'y'));
    const w = record(store, rvOf(x) - 1);
    for (let i = 0; i < 3; i++) await other.create(pod('default', `o${i}`));
    const r1 = await store.currentResourceVersion();
    store.requestProgress();
    await waitFor(() => w.maxProgress() >= r1, `progress >= ${r1} after requestProgress`);
    assert.deepEqual(w.rvs(), [rvOf(x), rvOf(y)]);

    // Changes pending in the prefix (a delete, a modify) when progress is requested: the progress
    // must not overtake their events.
    const yDeleted = await store.delete('default', 'y');
    const x2 = await store.update({ ...x, spec: { v: 2 } });
    await other.create(pod('default', 'o-last'));
    store.requestProgress();
    const r2 = await store.currentResourceVersion();
    store.requestProgress();
    await waitFor(() => w.maxProgress() >= r2, `progress >= ${r2}`);
    w.stop();
    assert.deepEqual(w.rvs(), [rvOf(x), rvOf(y), rvOf(yDeleted), rvOf(x2)]);
    assertOrdered(w.log);
  } finally {
    await slow.stop();
  }
});

// ------------------------------------------------------------------ compaction

/** A TCP proxy whose etcd->client direction can be paused (simulates a watcher that stops reading). */
async function startProxy(
  target: string,
): Promise<{ url: string; pause(): void; resume(): void; drop(): void; close(): void }> {
  const { hostname, port } = new URL(target);
  const pairs: { client: net.Socket; upstream: net.Socket }[] = [];
  let paused = false;
  const srv = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    pairs.push({ client, upstream });
    client.pipe(upstream);
    if (!paused) upstream.pipe(client);
    else upstream.pause();
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const addr = srv.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    pause() {
      paused = true;
      for (const p of pairs) {
        p.upstream.unpipe(p.client);
        p.upstream.pause();
      }
    },
    resume() {
      paused = false;
      for (const p of pairs) p.upstream.pipe(p.client);
    },
    /** Cut every open connection (new ones are accepted). */
    drop() {
      for (const p of pairs.splice(0)) {
        p.client.destroy();
        p.upstream.destroy();
      }
    },
    close() {
      srv.close();
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
    },
  };
}

test(
  'compaction while watching: a stalled watch that falls behind a compaction gets StoreCompactedError',
  { skip },
  async (t) => {
    const prefix = '/compact-live/pods/';
    const proxy = await startProxy(server().endpoint);
    try {
      const watcherStore = etcdStore(prefix, { endpoint: proxy.url });
      const writer = etcdStore(prefix);
      const start = await writer.currentResourceVersion();
      const w = record(watcherStore, start);
      const first = await writer.create(pod('default', 'first'));
      await waitFor(() => w.events().length === 1, 'the first event (watch is live)');

      // The watcher stops reading; far more than the HTTP/2 window (4 MiB) and etcd's buffers is written.
      proxy.pause();
      const big = 'x'.repeat(32 * 1024);
      const rvs: number[] = [rvOf(first)];
      const objs = await Promise.all(
        Array.from({ length: 16 }, (_, i) => writer.create(pod('default', `big-${i}`, { big }))),
      );
      for (let round = 0; round < 30; round++) {
        const updated = await Promise.all(
          objs.map((o) =>
            writer.update({ ...o, metadata: { ...o.metadata, resourceVersion: undefined }, spec: { big, round } }),
          ),
        );
        rvs.push(...updated.map(rvOf));
      }
      rvs.push(...objs.map(rvOf));
      rvs.sort((a, b) => a - b);
      const compactAt = rvs[rvs.length - 1]!;
      await writer.compact(compactAt);
      proxy.resume();

      await waitFor(() => w.errors.length > 0, 'StoreCompactedError');
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(w.errors.length, 1, 'onError exactly once');
      const err = w.errors[0]!;
      assert.ok(err instanceof StoreCompactedError, `got ${err.name}: ${err.message}`);
      assert.equal(err.compactedRV, compactAt);
      const seen = w.rvs();
      t.diagnostic(`${seen.length} of ${rvs.length} events delivered before the compaction cancel`);
      assert.ok(seen.length < rvs.length, 'the watch fell behind');
      assert.deepEqual(seen, rvs.slice(0, seen.length), 'what was delivered is a gap-free prefix');
      assertOrdered(w.log);
      w.stop();
    } finally {
      proxy.close();
    }
  },
);

test(
  'a connection cut in the middle of a replay: resumes after the last delivered event, nothing lost or repeated',
  { skip },
  async (t) => {
    // etcd3's own Watcher would resume from the store's current revision here (see docs/etcd.md, "The etcd3 client").
    const prefix = '/cut/pods/';
    const writer = etcdStore(prefix);
    const start = await writer.currentResourceVersion();
    const value = 'v'.repeat(1024);
    const objs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => writer.create(pod('default', `o${i}`, { value }))),
    );
    const written = objs.map(rvOf);
    for (let round = 0; round < 50; round++) {
      const updated = await Promise.all(
        objs.map((o) =>
          writer.update({ ...o, metadata: { ...o.metadata, resourceVersion: undefined }, spec: { value, round } }),
        ),
      );
      written.push(...updated.map(rvOf));
    }
    written.sort((a, b) => a - b);
    const proxy = await startProxy(server().endpoint);
    try {
      const watcherStore = etcdStore(prefix, { endpoint: proxy.url });
      let cutAt = -1;
      const log: number[] = [];
      const w = watcherStore.watch(
        start,
        (ev) => {
          log.push(ev.resourceVersion);
          if (log.length === 1) {
            cutAt = ev.resourceVersion;
            proxy.drop();
          }
        },
        (err) => assert.fail(`unexpected onError: ${err.message}`),
      );
      await waitFor(() => log.length >= written.length, `${written.length} events (have ${log.length})`);
      await new Promise((r) => setTimeout(r, 100));
      w.stop();
      t.diagnostic(`cut after RV ${cutAt}; ${written.length} events delivered across the reconnect`);
      assert.deepEqual(log, written);
    } finally {
      proxy.close();
    }
  },
);

test('a watch from a compacted revision gets StoreCompactedError; list still works', { skip }, async () => {
  const store = etcdStore('/compacted/pods/');
  const a = await store.create(pod('default', 'a'));
  const a2 = await store.update({ ...a, spec: { v: 2 } });
  await store.compact(rvOf(a2));
  const w = record(store, rvOf(a) - 1);
  await waitFor(() => w.errors.length > 0, 'StoreCompactedError');
  const err = w.errors[0]!;
  assert.ok(err instanceof StoreCompactedError, `got ${err.name}: ${err.message}`);
  assert.equal(err.requestedRV, rvOf(a) - 1);
  assert.ok(err.compactedRV >= rvOf(a2));
  assert.deepEqual(w.events(), []);
  // From the compaction point itself the watch is valid (etcd keeps revision C).
  const ok = record(store, rvOf(a2) - 1);
  await waitFor(() => ok.events().length === 1, 'the event at the compaction revision');
  ok.stop();
  assert.deepEqual(ok.errors, []);
  const list = await store.list();
  assert.deepEqual(list.items, [a2]);
});

// ------------------------------------------------------------------ faults

test(
  'SIGKILL + restart of etcd: writes fail fast while down, the watch resumes with no lost or duplicated event',
  { skip },
  async () => {
    const srv = server();
    const store = etcdStore('/restart/pods/', { requestTimeoutMs: 3000 });
    const start = await store.currentResourceVersion();
    const w = record(store, start);
    // A second watch that may wait for etcd only 1 s: it must give up with onError (the cache re-lists).
    const impatient = record(etcdStore('/restart/pods/', { watchReconnectTimeoutMs: 1000 }), start);
    const written: number[] = [];
    const a = await store.create(pod('default', 'a'));
    const b = await store.create(pod('default', 'b'));
    const a2 = await store.update({ ...a, spec: { v: 2 } });
    written.push(rvOf(a), rvOf(b), rvOf(a2));
    await waitFor(() => w.events().length === 3, 'events before the kill');

    await srv.kill();
    const down: Array<[string, () => Promise<unknown>]> = [
      ['create', () => store.create(pod('default', 'c'))],
      ['update', () => store.update({ ...a2, spec: { v: 3 } })],
      ['delete', () => store.delete('default', 'b')],
      ['get', () => store.get('default', 'a')],
      ['list', () => store.list()],
      ['currentResourceVersion', () => store.currentResourceVersion()],
    ];
    for (const [op, run] of down) {
      await assert.rejects(run(), (err: Error) => {
        assert.ok(err instanceof StoreUnavailableError, `${op}: got ${err.name}: ${err.message}`);
        assert.match(err.message, /unavailable/);
        return true;
      });
    }
    await waitFor(() => impatient.errors.length > 0, 'the impatient watch to give up');
    assert.ok(impatient.errors[0] instanceof StoreUnavailableError, `got ${impatient.errors[0]!.name}`);
    assert.match(impatient.errors[0].message, /could not resume from revision/);
    assert.equal(impatient.rvs().length, 3);
    // Writes made after the restart reach the watch that kept trying.
    await srv.restart();
    const retry = async <T>(fn: () => Promise<T>): Promise<T> => {
      const until = Date.now() + 20_000;
      for (;;) {
        try {
          return await fn();
        } catch (err) {
          if (!(err instanceof StoreUnavailableError) || Date.now() > until) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const c = await retry(() => store.create(pod('default', 'c')));
    const a3 = await store.update({ ...a2, spec: { v: 3 } });
    const bDeleted = await store.delete('default', 'b');
    written.push(rvOf(c), rvOf(a3), rvOf(bDeleted));
    await waitFor(() => w.events().length >= 6, `6 events (have ${w.rvs().join(',')})`);
    await new Promise((r) => setTimeout(r, 200));
    w.stop();
    assert.deepEqual(w.errors, []);
    assert.equal(impatient.errors.length, 1, 'onError once, then silence');
    assert.deepEqual(w.rvs(), written, 'exactly the written RVs, in order, once each');
    assert.deepEqual(
      w.events().map((e) => e.type),
      ['ADDED', 'ADDED', 'MODIFIED', 'ADDED', 'MODIFIED', 'DELETED'],
    );
    assertOrdered(w.log);
    assert.ok((await store.currentResourceVersion()) >= rvOf(bDeleted));
  },
);

test('unresponsive etcd: requests give up at their deadline with StoreUnavailableError', { skip }, async () => {
  const proxy = await startProxy(server().endpoint);
  try {
    const store = etcdStore('/hung/pods/', { endpoint: proxy.url, requestTimeoutMs: 500 });
    const direct = etcdStore('/hung/pods/');
    await store.currentResourceVersion(); // connected through the proxy
    proxy.pause(); // requests still reach etcd, answers never come back
    const t0 = Date.now();
    await assert.rejects(store.create(pod('default', 'a')), (err: Error) => {
      assert.ok(err instanceof StoreUnavailableError, `got ${err.name}: ${err.message}`);
      assert.match(err.message, /may or may not have been applied/);
      return true;
    });
    // It was applied: the answer was lost, not the request.
    assert.equal((await direct.get('default', 'a')).metadata.name, 'a');
    await assert.rejects(store.currentResourceVersion(), StoreUnavailableError);
    await assert.rejects(store.list(), StoreUnavailableError);
    assert.ok(Date.now() - t0 < 15_000, 'bounded by the deadlines, not hanging');
    proxy.resume();
    await assert.rejects(store.create(pod('default', 'a')), { code: 409, reason: 'AlreadyExists' });
  } finally {
    proxy.close();
  }
});

test('closed store: calls reject with StoreUnavailableError, watches end', { skip }, async () => {
  const store = etcdStore('/closed/pods/');
  const w = record(store, await store.currentResourceVersion());
  store.close();
  await assert.rejects(store.currentResourceVersion(), StoreUnavailableError);
  await assert.rejects(store.create(pod('default', 'a')), StoreUnavailableError);
  const late = record(store, 0);
  await waitFor(() => late.errors.length === 1, 'onError for a watch on a closed store');
  assert.ok(late.errors[0] instanceof StoreUnavailableError);
  assert.deepEqual(w.errors, []);
});
