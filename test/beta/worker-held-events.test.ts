/**
 * How the sync worker decides a selection that needs more than the slot's
 * hashes, and what it keeps of that (WorkerPassHost):
 *  - a label selector, like one on name, namespace or indexed fields, is
 *    decided from the payload's selection section (a skeleton of the
 *    objects: src/protocol/ring-payload.ts LABELS) without decoding the
 *    payload, where the labels are maps of strings; elsewhere the payload is
 *    decoded. Either way each member gets exactly what the main thread's
 *    Selection.classify gives it for the same history events (invariant 4),
 *    selector transitions included (ADDED / DELETED);
 *  - the decoded events and skeletons of a pass are let go at its end
 *    (letGoOfEvents): kept in the pass's scanned-event table until a later
 *    pass refilled the entry, up to 8,192 decoded pods stayed reachable, and
 *    the worker's heap grew to ~450 MB in a watcher churn with a 4,096-event
 *    history (issue 13).
 * On the real endpoint, pass host and ring mirror, with a virtual clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RingMirror } from '../../src/beta/ring-mirror.js';
import { ControlBlock } from '../../src/beta/control-block.js';
import { SyncWorkerEndpoint } from '../../src/beta/sync-worker-endpoint.js';
import type { SelectionSpec, WorkerToMain } from '../../src/beta/sync-messages.js';
import type { KubeObject } from '../../src/core/types.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { SpscChannel, POP_EMPTY, POP_CLOSED } from '../../src/ring/spsc-channel.js';
import { deliveryOf, WriterOwner } from '../../src/protocol/channel-variants.js';
import { CELL_BYTES } from '../../src/protocol/cursor-cell.js';
import { resolvePassOptions } from '../../src/sync/pass-options.js';
import { Delivery, Selection } from '../../src/selection/selection.js';
import { VirtualClock, settle } from '../../src/sim/virtual-clock.js';
import type { PendingFrame } from '../../src/wire/frame-source.js';

const EVENTS = 90;
const PODS = 10;
const CAPACITY = 256;

const SELECTIONS: SelectionSpec[] = [
  { namespace: '', name: '', labelSelector: 'app=x', fieldSelector: '' },
  { namespace: '', name: '', labelSelector: 'app!=x,tier', fieldSelector: '' },
  { namespace: '', name: '', labelSelector: '', fieldSelector: 'metadata.name=p7' },
  { namespace: '', name: '', labelSelector: 'app=x', fieldSelector: 'metadata.name=p3' },
];

/**
 * EVENTS events on PODS pods (ADDED, then MODIFIED with the previous object), app moving between x and y
 * (selector transitions), tier on some; `labelsOf` may make them something else than a map of strings.
 */
async function run(labelsOf: (rv: number) => unknown) {
  const history = new EventHistory({ lowerBound: 128, upperBound: 128 });
  const mirror: RingMirror = new RingMirror({
    history,
    metrics: new CacheMetrics(DEFAULT_RESOURCE),
    indexers: {},
    onDesync: (message) => assert.fail(message),
  });
  const last = new Map<string, KubeObject>();
  // Each pod's last frame: the next event on it names it as its previous object's (as the object state does).
  const frames = new Map<string, PendingFrame | undefined>();
  for (let rv = 1; rv <= EVENTS; rv++) {
    const name = `p${rv % PODS}`;
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'default', name, labels: labelsOf(rv) },
    } as KubeObject;
    const prev = last.get(name);
    const event = new WatchCacheEvent(prev === undefined ? 'ADDED' : 'MODIFIED', object, prev, rv, 0, undefined);
    last.set(name, object);
    history.append(event);
    frames.set(name, mirror.appended(event, frames.get(name)));
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
  const channels = SELECTIONS.map((selection, i) => {
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
  const heldAfter = host.eventsHeld;
  // Invariant 4 (selection): each member got, in order, what the main thread's Selection gives it.
  SELECTIONS.forEach((spec, i) => {
    const selection = new Selection(spec, {}, undefined);
    const want: string[] = [];
    for (let abs = history.startIndex; abs < history.endIndex; abs++) {
      const ev = history.at(abs);
      const d = selection.classify(ev);
      if (d !== Delivery.None) want.push(`${ev.rv}:${d}`);
    }
    const got: string[] = [];
    const ch = channels[i]!;
    for (let r = ch.pop(); r !== POP_EMPTY && r !== POP_CLOSED; r = ch.pop())
      got.push(`${history.at(r).rv}:${deliveryOf(ch.lastVariant)}`);
    assert.deepEqual(got, want, `${JSON.stringify(spec)}`);
    assert.ok(want.length > 0, 'each member selects something');
  });
  const decodes = Math.max(0, ...sent.map((m) => ('decodes' in m ? m.decodes : 0)));
  endpoint.handle({ op: 'stop' });
  for (let i = 0; i < 5; i++) await settle();
  await clock.advance(2000);
  return { heldDuring, heldAfter, decodes };
}

test('worker: label selectors are decided from the selection section (no decode), exactly as Selection.classify', async () => {
  const r = await run((rv) => ({ app: rv % 3 === 0 ? 'x' : 'y', ...(rv % 4 === 0 ? { tier: 'db' } : {}) }));
  assert.equal(r.decodes, 0, 'no payload decoded');
  assert.ok(r.heldDuring > 0, `the pass built skeletons (${r.heldDuring} held at most)`);
  assert.equal(r.heldAfter, 0, 'none is held once the pass has ended');
});

test('worker: labels that are not a map of strings are decided on the decoded payload, exactly as Selection.classify', async () => {
  const r = await run((rv) =>
    rv % 5 === 0 ? { app: 'x', n: rv } : rv % 7 === 0 ? undefined : { app: rv % 3 === 0 ? 'x' : 'y', tier: 'web' },
  );
  assert.ok(r.decodes > 0, 'the events whose labels are not strings are decoded');
  assert.ok(r.heldDuring > 0);
  assert.equal(r.heldAfter, 0, 'none is held once the pass has ended: decoded events included');
});
