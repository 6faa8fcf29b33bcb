/**
 * The warm-up ring: a small history of synthetic pods, written once on the
 * main thread by the same RingMirror that mirrors the real history, for a
 * new sync worker thread to rehearse catch-up passes on before any real
 * watcher needs one (src/beta/worker-warm-up.ts).
 *
 * Why: a fresh worker thread ran its first catch-up on code V8 had not
 * optimized yet, and every path of the pass it took for the first time
 * there (a full channel, an owed member, members apart, the end of the
 * ring, positions read from the adopt rows) threw the optimized pass loop
 * away and compiled it again, ~100 ms of compile each on a 2-core machine,
 * 6-8 times in one catch-up (`--trace-opt --trace-deopt`; issue 13,
 * deliverable 4). For the same 100 watchers 50,000 events behind, that
 * first catch-up cost the worker 540-1,000 ms of pass time against
 * 130-300 ms for a later one, and beta's cold catch-up was 1.2x alpha's
 * while its warm one was 0.9x. The rehearsal takes those paths first.
 *
 * The ring is the worker's only input that must come from the main thread:
 * the worker never writes a ring (the single-writer rule; test/deps keeps
 * the ring writer out of its imports). It is private to the rehearsal: no
 * real watcher, channel or metric sees it, and the main thread keeps no
 * reference to it but its handle (warmUpMessage: one ring per process).
 */
import type { IndexerFunc, KubeObject } from '../core/types.js';
import { EventHistory } from '../history/event-history.js';
import { WatchCacheEvent } from '../history/watch-cache-event.js';
import { CacheMetrics } from '../metrics/cache-metrics.js';
import type { HistoryRingHandle } from '../ring/ring-layout.js';
import type { PendingFrame } from '../wire/frame-source.js';
import { ControlBlock } from './control-block.js';
import { RingMirror } from './ring-mirror.js';
import type { MainToWorker, SelectionSpec } from './sync-messages.js';

/** Events in the warm-up history (a power of two: the history's and the ring's capacity). */
export const WARM_UP_EVENTS = 1024;
/** Distinct pods the events cycle over (each later event on a pod carries the previous object). */
const WARM_UP_PODS = 256;
const TIERS = ['db', 'web', 'cache'] as const;

/**
 * The selections the rehearsal's watchers use, one per path of the worker's
 * offer (WorkerPassHost.offer): everything (no section, no decode), a label
 * selector and a name (the selection section), a namespace (the slot's
 * hashes), and a field the section does not hold (a payload decode).
 */
export const WARM_UP_SELECTIONS: readonly SelectionSpec[] = [
  { namespace: '', name: '', labelSelector: '', fieldSelector: '' },
  { namespace: '', name: '', labelSelector: 'tier=db', fieldSelector: '' },
  { namespace: '', name: '', labelSelector: '', fieldSelector: 'metadata.name=warm-up-7' },
  { namespace: 'warm-up-1', name: '', labelSelector: '', fieldSelector: '' },
  { namespace: '', name: '', labelSelector: '', fieldSelector: 'spec.nodeName=node-3' },
];

/**
 * Warm-up rings already written, by indexer fields and trigger field: a ring is only read once written,
 * so every sync worker of the process with the same fields rehearses on the same one (one main-thread
 * write per process, ~30-80 ms here, not one per cache).
 */
const written = new Map<string, { ring: HistoryRingHandle; oldest: number | undefined }>();

/** The `warm-up` message for a new sync worker thread: a ring (written here once) and a control block of its own. */
export function warmUpMessage(
  indexers: Readonly<Record<string, IndexerFunc>>,
  triggerField: string | undefined,
): Extract<MainToWorker, { op: 'warm-up' }> {
  const key = JSON.stringify([Object.keys(indexers), triggerField ?? null]);
  let ring = written.get(key);
  if (ring === undefined) written.set(key, (ring = writeWarmUpRing(indexers, triggerField)));
  const control = new ControlBlock();
  control.publish(WARM_UP_EVENTS, ring.oldest);
  return { op: 'warm-up', ring: ring.ring, control: control.buffer, selections: [...WARM_UP_SELECTIONS] };
}

function writeWarmUpRing(
  indexers: Readonly<Record<string, IndexerFunc>>,
  triggerField: string | undefined,
): { ring: HistoryRingHandle; oldest: number | undefined } {
  const history = new EventHistory({ lowerBound: WARM_UP_EVENTS, upperBound: WARM_UP_EVENTS });
  const mirror = new RingMirror({
    history,
    metrics: new CacheMetrics({ group: '', version: 'v1', resource: 'warm-up', kind: 'Pod' }),
    indexers,
    onDesync: (message) => {
      throw new Error(`warm-up ring: ${message}`);
    },
  });
  const trigger = triggerField === undefined ? undefined : indexers[triggerField];
  const last: (KubeObject | undefined)[] = new Array<KubeObject | undefined>(WARM_UP_PODS).fill(undefined);
  const frames: (PendingFrame | undefined)[] = new Array<PendingFrame | undefined>(WARM_UP_PODS).fill(undefined);
  for (let rv = 1; rv <= WARM_UP_EVENTS; rv++) {
    const i = rv % WARM_UP_PODS;
    const prev = last[i];
    // Each pod has one event per WARM_UP_PODS: every fourth round of them deletes it, the next adds it again.
    const type = prev === undefined ? 'ADDED' : Math.floor(rv / WARM_UP_PODS) % 4 === 3 ? 'DELETED' : 'MODIFIED';
    const object = warmUpPod(i, rv);
    const event = new WatchCacheEvent(type, object, prev, rv, 0, trigger);
    history.append(event);
    const frame = mirror.appended(event, prev === undefined ? undefined : frames[i]);
    last[i] = type === 'DELETED' ? undefined : object;
    frames[i] = type === 'DELETED' ? undefined : frame;
  }
  return { ring: mirror.handle, oldest: history.oldestServableRV() };
}

/** A small pod (~400 bytes encoded): what a warm-up event carries. */
function warmUpPod(i: number, rv: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: `warm-up-${i % 4}`,
      name: `warm-up-${i}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(rv),
      labels: { app: 'warm-up', tier: TIERS[i % TIERS.length]! },
    },
    spec: {
      nodeName: `node-${i % 8}`,
      containers: [{ name: 'main', image: 'registry.example/warm-up:1', resources: { requests: { cpu: '10m' } } }],
    },
    status: { phase: rv % 2 === 0 ? 'Running' : 'Pending', podIP: `10.0.${i >> 8}.${i & 255}` },
  };
}
