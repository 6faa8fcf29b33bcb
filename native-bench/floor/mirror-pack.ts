/**
 * The ring mirror against its own pack, like for like (issue 13, the lean
 * mirror: "ring mirror ≤ 1.2x the msgpackr floor for the same pod"). Both
 * rows come from one process, in alternating batches, on the same stream of
 * objects: the throughput suite's trigger-1k events (each a new update of
 * one of its 5,000 pods on 1,000 nodes, copied and frozen by the store's own
 * frozenStored, so with the store's hidden classes), each JSON-encoded first
 * as a consumer's jsonLine does (the mirror packs an object right after that
 * encode, deferred-mirror.ts, so it is in the CPU caches):
 *
 * - pack: the event's frame `{type, object}` packed once with the engine's
 *   Packr into a reused buffer (the mirror packs into the ring's arena: no
 *   output buffer allocated); only the pack is timed;
 * - mirror: RingMirror.appended for the event (its one pack straight into
 *   the arena, the selection section, the slot hashes, the previous object
 *   referenced, the append and the publish); only that call is timed.
 *
 * The pack batches mirror their events too, untimed, so both see the same
 * ring. The arena's pages are committed ahead of the writer as in the
 * engine, where the sync worker thread does it (src/ring/arena-prefault.ts):
 * here the same ArenaPrefault runs on this thread between the timed calls,
 * untimed. Without it every mirrored event also paid ~0.8 minor page faults
 * (each run makes a fresh arena), ~7 µs of kernel time the engine's main
 * thread does not pay: the mirror row read ~2x the pack for that alone. Each row's figure is the median over batches of the batch mean (GC
 * that lands in a batch counts, as it does in the engine's figure), with
 * p99 the slowest batch; this host's speed swings up to 2x between runs,
 * which alternating batches put on both rows alike.
 */
import { REUSE_BUFFER_MODE, RESET_BUFFER_MODE } from 'msgpackr';
import type { KubeObject } from '../../src/core/types.js';
import { RingMirror } from '../../src/beta/ring-mirror.js';
import { realClock, type Clock, type TimerHandle } from '../../src/core/clock.js';
import { ArenaPrefault } from '../../src/ring/arena-prefault.js';
import { EventHistory } from '../../src/history/event-history.js';
import { WatchCacheEvent } from '../../src/history/watch-cache-event.js';
import { CacheMetrics } from '../../src/metrics/cache-metrics.js';
import { DEFAULT_RESOURCE } from '../../src/index.js';
import { frozenStored, metadataAt } from '../../src/store/stored-copy.js';
import type { FrameSource } from '../../src/wire/frame-source.js';
import { msgpack } from '../../src/wire/watch-event.js';
import { makePod, podUpdate } from '../lib/pod.js';
import type { FloorRow } from '../lib/types.js';

/** The throughput suite's trigger-1k pods (5,000 on 1,000 nodes). */
const SUITE_PODS = 5000;
const NODES = 1000;
/** Events per batch; batches alternate mirror, pack. */
const BATCH = 100;
const WARMUP_BATCHES = 40;

const nodeName = (o: KubeObject): string | undefined => (o.spec as { nodeName?: string } | undefined)?.nodeName;

/**
 * The sync worker's arena prefault (src/ring/arena-prefault.ts), run on this
 * thread: the mirror's requests schedule its slices, and `commit` runs them
 * (untimed, between the timed calls: what the worker does meanwhile).
 */
export class SteppedArenaPrefault {
  private slice: (() => void) | undefined;
  private prefault: ArenaPrefault | undefined;
  private readonly clock: Clock = {
    ...realClock,
    setTimeout: (callback: () => void): TimerHandle => {
      this.slice = callback;
      return {};
    },
    clearTimeout: (): void => {
      this.slice = undefined;
    },
  };

  /** RingMirror's prefaultArena: `arena` wanted committed up to `upTo`. */
  request(arena: SharedArrayBuffer, upTo: number): void {
    (this.prefault ??= new ArenaPrefault(arena, this.clock)).request(upTo);
  }

  /** Run every slice scheduled so far (each may schedule the next). */
  commit(): void {
    for (let s = this.slice; s !== undefined; s = this.slice) {
      this.slice = undefined;
      s();
    }
  }

  /** Pages touched so far. */
  get pages(): number {
    return this.prefault?.pages ?? 0;
  }
}

/** Rows `mirror` and `pack` (in that order) from `batches` alternating batches of each. */
export function mirrorVsPack(batches: number): FloorRow[] {
  const history = new EventHistory({ lowerBound: 100, upperBound: 100 * 1024 });
  const ahead = new SteppedArenaPrefault();
  const mirror: RingMirror = new RingMirror({
    history,
    metrics: new CacheMetrics(DEFAULT_RESOURCE),
    indexers: { 'spec.nodeName': nodeName },
    onDesync: (message) => {
      throw new Error(message);
    },
    prefaultArena: (upTo) => ahead.request(mirror.handle.arena, upTo),
  });
  const commitAhead = (): void => ahead.commit();
  let rv = 0;
  const pods = Array.from({ length: SUITE_PODS }, (_, i): { object: KubeObject; frame: FrameSource | undefined } => {
    const pod = makePod(i, { nodes: NODES });
    const object = frozenStored(pod, metadataAt(pod.metadata, ++rv));
    return { object, frame: mirror.encodeFrame(object) };
  });
  const out = Buffer.alloc(64 * 1024);
  let seq = 0;
  /** The next suite event, appended to the history, its object JSON-encoded as a consumer's jsonLine does. */
  const next = (): { event: WatchCacheEvent; pod: (typeof pods)[number] } => {
    const pod = pods[seq % SUITE_PODS]!;
    const update = podUpdate(pod.object, seq, seq * 0.25);
    seq++;
    const object = frozenStored(update, metadataAt(update.metadata, ++rv));
    Buffer.from(JSON.stringify({ type: 'MODIFIED', object }) + '\n');
    const event = new WatchCacheEvent('MODIFIED', object, pod.object, rv, 0, nodeName);
    history.append(event);
    return { event, pod };
  };
  const mirrorOne = (event: WatchCacheEvent, pod: (typeof pods)[number]): void => {
    pod.frame = mirror.appended(event, pod.frame);
    pod.object = event.object;
  };
  const mirrorBatch = (): number => {
    let ms = 0;
    for (let i = 0; i < BATCH; i++) {
      const { event, pod } = next();
      const start = performance.now();
      mirrorOne(event, pod);
      ms += performance.now() - start;
      commitAhead();
    }
    return (ms * 1000) / BATCH;
  };
  const packBatch = (): number => {
    let ms = 0;
    for (let i = 0; i < BATCH; i++) {
      const { event, pod } = next();
      msgpack.useBuffer(out);
      const start = performance.now();
      msgpack.pack({ type: event.type, object: event.object }, REUSE_BUFFER_MODE | RESET_BUFFER_MODE);
      ms += performance.now() - start;
      // Leave no room: the next pack anywhere starts a buffer of its own, never in `out`.
      msgpack.position = out.length;
      mirrorOne(event, pod);
      commitAhead();
    }
    return (ms * 1000) / BATCH;
  };
  for (let i = 0; i < WARMUP_BATCHES; i++) {
    mirrorBatch();
    packBatch();
  }
  const m: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < batches; i++) {
    m.push(mirrorBatch());
    p.push(packBatch());
  }
  const row = (name: string, us: number[]): FloorRow => {
    const sorted = [...us].sort((a, b) => a - b);
    const mean = us.reduce((a, b) => a + b, 0) / us.length;
    return {
      name,
      group: 'ring mirror vs its pack',
      unit: 'us/op',
      mean,
      p50: sorted[sorted.length >> 1]!,
      p99: sorted[sorted.length - 1]!,
      opsPerSec: 1e6 / mean,
      samples: us.length,
    };
  };
  const what = `trigger-1k: ${SUITE_PODS.toLocaleString('en-US')} pods, each update new, just JSON-encoded`;
  return [
    row(`ring mirror: RingMirror.appended per suite update (${what}; batches alternate with the pack below)`, m),
    row(`msgpackr pack the suite's update as the mirror meets it (${what}; into a reused buffer)`, p),
  ];
}
