/**
 * The sync worker keeps no decoded event past the pass that decoded it
 * (WorkerPassHost.letGoOfEvents). A pass decodes a scanned event's payload
 * once, for every member whose selection needs the objects (a label
 * selector), and builds a skeleton from the selection section for one on
 * name, namespace and indexed fields; both serve that pass only. Kept in the
 * pass's scanned-event table until a later pass refilled the entry, up to
 * 8,192 decoded pods stayed reachable, and the worker's heap grew to
 * ~450 MB in a watcher churn with a 4,096-event history (issue 13).
 * On the real endpoint, pass host and ring mirror, with a virtual clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RingMirror } from '../../src/beta/ring-mirror.js';
import { ControlBlock } from '../../src/beta/control-block.js';
import { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import type { WorkerToMain } from '../../src/beta/sync-messages.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { SpscChannel, POP_EMPTY, POP_CLOSED } from '../../src/ring/spsc-channel.js';
import { WriterOwner } from '../../src/protocol/channel-variants.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { resolvePassOptions } from '../../src/sync/pass-options.js';
import { VirtualClock, settle } from '../../src/sim/virtual-clock.js';

const EVENTS = 60;
const CAPACITY = 100;

test('worker: the decoded events and skeletons of a pass are let go at its end, and its members got exactly what they select', async () => {
  const history = new EventHistory({ lowerBound: 128, upperBound: 128 });
  const mirror: RingMirror = new RingMirror({
    history,
    metrics: new CacheMetrics(DEFAULT_RESOURCE),
    indexers: {},
    onDesync: (message) => assert.fail(message),
  });
  for (let rv = 1; rv <= EVENTS; rv++) {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default', name: `p${rv}`, labels: { app: rv % 3 === 0 ? 'x' : 'y' } },
    };
    const event = new WatchCacheEvent('ADDED', object, undefined, rv, 0, undefined);
    history.append(event);
    mirror.appended(event, undefined);
  }
  const control = new ControlBlock();
  control.publish(EVENTS, 1);
  const clock = new VirtualClock();
  const sent: WorkerToMain[] = [];
  const endpoint = new SyncWorkerEndpoint((m) => sent.push(m), clock, true);
  endpoint.handle({
    op: 'init',
    ring: mirror.handle,
    control: control.buffer,
    pass: resolvePassOptions({}, 'beta'),
    indexerFields: [],
    triggerField: undefined,
  });
  void endpoint.serveRoom();
  // A label selector (the payload is decoded) and a name selector (the selection section's skeleton).
  const selections = [
    { namespace: '', name: '', labelSelector: 'app=x', fieldSelector: '' },
    { namespace: '', name: '', labelSelector: '', fieldSelector: 'metadata.name=p7' },
  ];
  const channels = selections.map((selection, i) => {
    const channel = SpscChannel.create(CAPACITY, WriterOwner.SYNC_WORKER);
    endpoint.handle({
      op: 'adopt',
      watchers: [
        {
          id: i + 1,
          position: 0,
          capacity: CAPACITY,
          reachedLive: false,
          channel: channel.handle,
          cell: new SharedArrayBuffer(CELL_BYTES),
          selection,
        },
      ],
    });
    return channel;
  });
  const host = endpoint.host!;
  // What the pass held while it ran: its decoded events and skeletons are shared by its members.
  let heldDuring = 0;
  const offer = host.offer.bind(host);
  host.offer = (m, ref) => {
    const r = offer(m, ref);
    heldDuring = Math.max(heldDuring, host.eventsHeld);
    return r;
  };
  await clock.advance(0);
  for (let i = 0; i < 5; i++) await settle();
  assert.ok(host.scheduler.passes >= 1, 'a pass ran');
  assert.ok(heldDuring > 0, `the pass decoded or built skeletons (${heldDuring} held at most)`);
  assert.equal(host.eventsHeld, 0, 'none is held once the pass has ended');
  // Invariant 4 (selection): what each member got is exactly what its selection selects, in order.
  const got = channels.map((ch) => {
    const refs: number[] = [];
    for (let r = ch.pop(); r !== POP_EMPTY && r !== POP_CLOSED; r = ch.pop()) refs.push(r);
    return refs;
  });
  const rvs = (refs: number[]): number[] => refs.map((abs) => history.at(abs).rv);
  assert.deepEqual(
    rvs(got[0]!),
    Array.from({ length: EVENTS / 3 }, (_, i) => 3 * (i + 1)),
  );
  assert.deepEqual(rvs(got[1]!), [7]);
  endpoint.handle({ op: 'stop' });
  for (let i = 0; i < 5; i++) await settle();
  await clock.advance(2000);
});
