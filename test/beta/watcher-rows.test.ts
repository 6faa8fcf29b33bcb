/**
 * Pooled beta watchers travel to the sync worker as rows of numbers (issue
 * 13, deliverable 1; src/beta/sync-worker-link.ts): a registration is an
 * introduction row (id, slab, offset, capacity, selection id) with each
 * distinct selection spec sent once, a stall an adopt row, an end a forget
 * id, each kind one Float64Array per flush however many watchers it names.
 * The rows must name exactly the watchers they stand for, each once, and
 * keep the order the worker needs: introduction before adopt before forget.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { betaSyncOf } from '../../src/cache/cache-internals.js';
import { ChannelSlabs } from '../../src/beta/channel-slabs.js';
import { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import { ADOPT_ROW, INTRO_ROW, type MainToWorker, type WorkerToMain } from '../../src/beta/sync-messages.js';
import { ControlBlock } from '../../src/beta/control-block.js';
import { initEndpoint } from './endpoint-init.js';
import { HistoryRing } from '../../src/ring/ring-writer.js';
import { SpscChannel } from '../../src/ring/spsc-channel.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { asWatcher, type Watcher } from '../../src/watch/watcher.js';
import { churn, flush, pod, setup, VirtualClock } from '../unit/support/harness.js';
import { recordingEndpointMessages } from './endpoint-messages.js';

/** Field `field` of every row of `width` numbers in `rows`. */
function column(rows: Float64Array, width: number, field = 0): number[] {
  const out: number[] = [];
  for (let i = field; i < rows.length; i += width) out.push(rows[i]!);
  return out;
}

function sorted(ids: Iterable<number>): number[] {
  return [...ids].sort((a, b) => a - b);
}

test('beta: registrations, a mass stall and a mass end are one row message each, naming every watcher once; each selection spec is sent once', async () => {
  await recordingEndpointMessages(async (sent) => {
    const clock = new VirtualClock();
    const { cache, store } = await setup({ mode: 'beta', channelCapacity: 2 }, undefined, { clock });
    const beta = betaSyncOf(cache)!;
    await store.create(pod('a'));
    await flush();
    const from = String(cache.resourceVersion);
    const everything = Array.from({ length: 2000 }, () =>
      asWatcher(cache.watch({ resourceVersion: from, channelCapacity: 2 })),
    );
    // Three more with selections of their own, one of them shared by two watchers.
    const scoped = [
      { namespace: 'churn-ns' },
      { namespace: 'churn-ns' },
      { namespace: 'churn-ns', fieldSelector: 'metadata.name=churn' },
    ].map((s) => asWatcher(cache.watch({ resourceVersion: from, channelCapacity: 2, ...s })));
    const all: Watcher[] = [...everything, ...scoped];
    const ids = sorted(all.map((w) => w.id));
    await clock.advance(5);
    await flush();

    const intros = sent.flatMap((m) => (m.op === 'introduce-rows' ? [m] : []));
    assert.equal(intros.length, 1, 'the registrations of one turn are one message');
    assert.equal(
      sent.filter((m) => m.op === 'introduce').length,
      0,
      'no introduction object for a pooled watcher (no strings, no buffers per watcher)',
    );
    const introIds = column(intros[0]!.rows, INTRO_ROW);
    assert.deepEqual(sorted(introIds), ids, 'every watcher introduced, none twice');
    const specs = intros[0]!.selections;
    assert.equal(specs.length, 3, 'one spec per distinct selection: everything, a namespace, a namespace and a name');
    const specIds = new Set(specs.map((s) => s.id));
    assert.ok(
      column(intros[0]!.rows, INTRO_ROW, 4).every((s) => specIds.has(s)),
      'every row names a spec the same message carries',
    );
    const slabs = column(intros[0]!.rows, INTRO_ROW, 1);
    assert.ok(
      slabs.every((s) => s < beta.slabCount),
      'every region is in a slab the worker got',
    );

    // One event fills every channel of two, the next stalls them all.
    await churn(store, 3);
    await clock.advance(0);
    await flush();
    assert.ok(all.every((w) => w.unsynced));
    const adopts = sent.flatMap((m) => (m.op === 'adopt-rows' ? column(m.rows, ADOPT_ROW) : []));
    assert.deepEqual(sorted(adopts), ids, 'the adopt rows name exactly the stalled watchers, none twice');
    assert.equal(sent.filter((m) => m.op === 'adopt').length, 0, 'no adopt object');
    const host = beta.inProcessHost!;
    assert.deepEqual(sorted(host.members.keys()), ids, 'the worker adopted exactly them');

    // They all end in one turn: one forget message naming each once, and every spec released with its last user.
    const before = sent.length;
    for (const w of all) w.stop();
    await flush(); // the flush posts
    await clock.advance(5); // the in-process endpoint handles it
    await flush();
    const forgets = sent.slice(before).flatMap((m) => (m.op === 'forget' ? [m] : []));
    assert.equal(forgets.length, 1, '2,003 ends in a turn are one message');
    assert.deepEqual(sorted(forgets[0]!.ids), ids);
    assert.deepEqual(sorted(forgets[0]!.selections), sorted(specIds), 'each spec dropped once, after its last user');
    await clock.advance(5);
    await flush();
    assert.equal(host.members.size, 0, 'the worker forgot every one');
    await cache.stop();
  });
});

test('beta: a watcher adopted and stopped in the same turn reaches the worker as introduction, adopt, forget, in that order, and is not left adopted', async () => {
  await recordingEndpointMessages(async (sent) => {
    const clock = new VirtualClock();
    const { cache, store } = await setup({ mode: 'beta', channelCapacity: 4 }, undefined, { clock });
    const beta = betaSyncOf(cache)!;
    await store.create(pod('a'));
    const old = String(cache.resourceVersion);
    await churn(store, 5);
    await flush();
    // Behind from the start: adopted at once (the one resync path), then stopped before any flush.
    const behind = Array.from({ length: 10 }, () =>
      asWatcher(cache.watch({ resourceVersion: old, channelCapacity: 4 })),
    );
    const ids = sorted(behind.map((w) => w.id));
    for (const w of behind) w.stop();
    await clock.advance(5);
    await flush();
    const firstIndex = (op: MainToWorker['op'], id: number): number =>
      sent.findIndex(
        (m) =>
          m.op === op &&
          (m.op === 'introduce-rows'
            ? column(m.rows, INTRO_ROW).includes(id)
            : m.op === 'adopt-rows'
              ? column(m.rows, ADOPT_ROW).includes(id)
              : m.op === 'forget' && [...m.ids].includes(id)),
      );
    for (const id of ids) {
      const [intro, adopt, forget] = [
        firstIndex('introduce-rows', id),
        firstIndex('adopt-rows', id),
        firstIndex('forget', id),
      ];
      assert.ok(intro >= 0 && intro < adopt && adopt < forget, `watcher ${id}: ${intro} < ${adopt} < ${forget}`);
    }
    const host = beta.inProcessHost!;
    assert.ok(
      ids.every((id) => !host.members.has(id)),
      'none is left a member',
    );
    await clock.advance(5);
    await flush();
    // The worker handed their writer sides back on forget: the next registration finds them free.
    const next = asWatcher(cache.watch({ resourceVersion: String(cache.resourceVersion), channelCapacity: 4 }));
    assert.equal(beta.pooledChannels, 1, 'their regions went back to the pool');
    next.stop();
    await cache.stop();
  });
});

test('sync worker endpoint: introduction and adopt rows adopt exactly the watchers they name, none twice; a dropped or unknown spec is refused', () => {
  const ring = new HistoryRing({ capacity: 16, arenaBytes: 64 * 1024 });
  const control = new ControlBlock();
  const clock = new VirtualClock();
  const told: WorkerToMain[] = [];
  const endpoint = new SyncWorkerEndpoint((m) => told.push(m), clock);
  initEndpoint(endpoint, ring, control);
  const slabs = new ChannelSlabs((id, buffer) => endpoint.handle({ op: 'slab', id, buffer }), 64 * 1024);
  const everything = { namespace: '', name: '', labelSelector: '', fieldSelector: '' };
  const region = (): number[] => {
    const s = slabs.allocate(8);
    SpscChannel.initRegion(slabs.bufferOf(s), s.offset + CELL_BYTES, 8, WriterOwner.SYNC_WORKER);
    return [s.slab, s.offset, s.capacity];
  };
  const rows = Float64Array.from([...[1, ...region(), 7], ...[2, ...region(), 7], ...[3, ...region(), 7]]);
  endpoint.handle({ op: 'introduce-rows', selections: [{ id: 7, spec: everything }], rows });
  assert.equal(endpoint.host!.members.size, 0, 'an introduction adopts nobody');
  endpoint.handle({
    op: 'adopt-rows',
    rows: Float64Array.from([...[1, 10, 8, 0], ...[3, 10, 8, 0], ...[3, 12, 8, 0]]),
  });
  assert.deepEqual(sorted(endpoint.host!.members.keys()), [1, 3], 'exactly the named ones, the twice-named once');
  assert.equal(endpoint.host!.members.get(3)!.cursor.position, 12, 'the later row of the same watcher wins');
  assert.equal(told.filter((m) => m.op === 'error').length, 0);

  endpoint.handle({ op: 'forget', ids: Float64Array.of(1), selections: [] });
  assert.deepEqual(sorted(endpoint.host!.members.keys()), [3]);
  endpoint.handle({ op: 'adopt-rows', rows: Float64Array.of(1, 10, 8, 0) });
  assert.equal(
    told.filter((m) => m.op === 'error').length,
    1,
    'a forgotten watcher cannot be adopted without a new introduction',
  );
  assert.ok(!endpoint.host!.members.has(1));

  endpoint.handle({ op: 'forget', ids: Float64Array.of(2, 3), selections: [7] });
  assert.equal(endpoint.host!.members.size, 0);
  endpoint.handle({ op: 'introduce-rows', selections: [], rows: Float64Array.from([4, ...region(), 7]) });
  assert.equal(told.filter((m) => m.op === 'error').length, 2, 'a dropped spec is refused');
  endpoint.handle({ op: 'stop' });
});
