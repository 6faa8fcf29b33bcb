/**
 * RingMirror: beta's mirror of the event history into the shared history
 * ring (the main thread's side of KEP-6268 "Target design", step 1). Every
 * event appended to the history is encoded once with msgpackr and appended
 * to the ring at the same absolute index, then published with Atomics; the
 * sync worker and remote consumers read it from there. The payload format is
 * src/protocol/ring-payload.ts.
 *
 * When the ring can no longer mirror the history (an append fails), the
 * mirror stops and reports it once through `onDesync`: nobody the worker
 * serves can be served any more, and the owner ends them.
 */
import type { IndexerFunc, KubeObject } from '../core/types.js';
import type { EventHistory } from '../history/event-history.js';
import type { WatchCacheEvent } from '../history/watch-cache-event.js';
import type { CacheMetrics } from '../metrics/cache-metrics.js';
import { hash32, hashOptional } from '../ring/hash32.js';
import { eventTypeCode, type HistoryRingHandle } from '../ring/ring-layout.js';
import { HistoryRing } from '../ring/ring-writer.js';
import { RING_FRAME_START, RingPayloadWriter } from '../protocol/ring-payload.js';
import { Delivery } from '../selection/selection.js';
import { msgpack } from '../wire/watch-event.js';

/**
 * Arena bytes the ring may grow to per event of the largest history (a payload is ~2 KiB for a 2 KiB pod
 * whose previous object is referenced, ~4 KiB when it is copied, plus frames kept for referrers).
 */
const RING_BYTES_PER_EVENT = 8 * 1024;
/** The ring's arena limit (Int32 offsets). */
const MAX_ARENA_BYTES = 0x7ffffff8;

export interface RingMirrorInit {
  history: EventHistory;
  metrics: CacheMetrics;
  indexers: Record<string, IndexerFunc>;
  /** The ring could not mirror an event (once; the mirror stops): end everyone the worker serves. */
  onDesync: (message: string, event: WatchCacheEvent) => void;
  /** Called after each publish (the in-process worker's wake-up; a thread wakes on Atomics). */
  onPublished?: (() => void) | undefined;
}

export class RingMirror {
  private readonly ring: HistoryRing;
  private readonly history: EventHistory;
  private readonly metrics: CacheMetrics;
  /** Builds each event's payload; the ring copies it straight into its arena. */
  private readonly payload: RingPayloadWriter;
  private readonly lowerBound: number;
  private readonly onDesync: RingMirrorInit['onDesync'];
  private readonly onPublished: (() => void) | undefined;
  private failed = false;
  /**
   * The ring index of the event whose payload carries each frame (frames are
   * immutable and made once per event): the next event on the same key
   * references that payload's FRAME as its previous object instead of copying
   * it. An entry is taken when used, so each payload is referenced at most
   * once (the ring's REF_BY has room for one referrer), and dropped once its
   * event left the ring (`carrierOrder`: the frames in ring order, from index
   * `carrierBase`). A Map, not a WeakMap: the history holds these frames
   * anyway, and V8's ephemeron tables cost GC time per young key.
   */
  private readonly carriers = new Map<Uint8Array, number>();
  private carrierOrder: Uint8Array[] = [];
  private carrierHead = 0;
  private carrierBase = 0;

  constructor(init: RingMirrorInit) {
    this.history = init.history;
    this.metrics = init.metrics;
    this.payload = new RingPayloadWriter(init.indexers);
    this.onDesync = init.onDesync;
    this.onPublished = init.onPublished;
    this.lowerBound = init.history.lowerBound;
    let maxCapacity = this.lowerBound;
    while (maxCapacity < init.history.upperBound) maxCapacity *= 2;
    // The ring must hold the whole history (issue 13, deliverable 5): a payload (the event's frame, its
    // selection section and the previous object's frame) is ~4 KiB for a 2 KiB pod, so the arena may grow
    // to 8 KiB per event of the largest history (address space reserved, memory used only as it grows);
    // capped at 2 KiB per event it held about half of a 50,000-event history.
    const arenaBytes = Math.max(64 * 1024, this.lowerBound * 2048);
    this.ring = new HistoryRing({
      capacity: this.lowerBound,
      maxCapacity,
      arenaBytes,
      maxArenaBytes: Math.max(arenaBytes, Math.min(MAX_ARENA_BYTES, maxCapacity * RING_BYTES_PER_EVENT)),
    });
  }

  /** The ring's handle (for the sync worker and for consumers in other threads). */
  get handle(): HistoryRingHandle {
    return this.ring.handle;
  }

  /** The ring could not mirror the history: the worker can no longer serve anyone. */
  get desynced(): boolean {
    return this.failed;
  }

  /** RV of the last event the ring dropped (or its start RV): the worker can serve only after it. */
  get floorRV(): number {
    return this.ring.floorRV;
  }

  /** A relist: the ring restarts after listRV (unless the mirror has stopped, or RVs would go back). */
  restartAfter(listRV: number): void {
    if (!this.failed && listRV >= this.ring.lastRV) this.ring.clear(listRV);
  }

  /** A msgpack frame for an object no event has carried yet (one from the initial list). */
  encodeFrame(object: KubeObject): Uint8Array {
    this.metrics.encoded('msgpack');
    return msgpack.pack({ type: 'ADDED', object });
  }

  /**
   * Mirror an appended history event into the ring, then publish. Payload
   * (src/protocol/ring-payload.ts): the event's wire frame `{type, object}`
   * (its one msgpack encoding, shared with msgpack streams) and the selection
   * section (binary, no second msgpack), copied once, straight into the
   * arena. The previous object is the frame that carried it: referenced in
   * the ring slot that carries it when that event is still in the ring, else
   * copied into the payload (reused bytes, never re-encoded). Returns the
   * event's frame (the object state keeps it for the next event), undefined
   * once desynced.
   */
  appended(event: WatchCacheEvent, prevFrame: Uint8Array | undefined): Uint8Array | undefined {
    if (this.failed) return undefined;
    this.syncCapacity();
    const frame = event.deliver(Delivery.AsIs).msgpackFrame(this.metrics);
    // The previous object's values go with the frame that carries it (hasPrev), never without it.
    const prevObject = prevFrame === undefined ? undefined : event.prevObject;
    this.dropCarriers();
    let carrier = -1;
    if (prevObject !== undefined) {
      carrier = this.carriers.get(prevFrame!) ?? -1;
      if (carrier >= 0) this.carriers.delete(prevFrame!);
      // Only a payload still in the ring can be referenced (a relist or eviction dropped older ones).
      if (carrier < this.ring.oldestIndex) carrier = -1;
    }
    const copied = prevObject !== undefined && carrier < 0 ? prevFrame : undefined;
    this.payload.set(frame, event.object, prevObject, copied);
    try {
      const abs = this.ring.appendPayload(
        {
          rv: event.rv,
          type: eventTypeCode(event.type),
          nsHash: hash32(event.namespace),
          nameHash: hash32(event.name),
          triggerHash: hashOptional(event.triggerValue === '' ? undefined : event.triggerValue),
          prevTriggerHash: hashOptional(event.prevTriggerValue === '' ? undefined : event.prevTriggerValue),
          hasPrev: prevObject !== undefined,
          // The previous object's bytes: the FRAME of the payload that carried it, or the copy in this one.
          prevLength: prevObject === undefined ? 0 : prevFrame!.length,
          prevStart: carrier >= 0 ? RING_FRAME_START : this.payload.prevFrameStart,
          prevAbs: carrier >= 0 ? carrier : undefined,
        },
        this.payload,
      );
      if (abs !== event.index) throw new Error(`ring index ${abs} != history index ${event.index}`);
      if (this.carrierOrder.length - this.carrierHead === 0) this.carrierBase = abs;
      this.carrierOrder.push(frame);
      this.carriers.set(frame, abs);
    } catch (err) {
      this.failed = true;
      this.onDesync(`history ring desynchronized: ${(err as Error).message}`, event);
      return frame;
    }
    this.ring.publish();
    this.onPublished?.();
    return frame;
  }

  /** Forget the carriers of events that left the ring (their payloads can no longer be referenced). */
  private dropCarriers(): void {
    const oldest = this.ring.oldestIndex;
    const order = this.carrierOrder;
    let h = this.carrierHead;
    while (h < order.length && this.carrierBase < oldest) {
      const f = order[h]!;
      if (this.carriers.get(f) === this.carrierBase) this.carriers.delete(f);
      h++;
      this.carrierBase++;
    }
    if (h === order.length) {
      this.carrierOrder = [];
      h = 0;
    } else if (h > 4096 && h * 2 > order.length) {
      this.carrierOrder = order.slice(h);
      h = 0;
    }
    this.carrierHead = h;
  }

  /** The ring's slot capacity follows the history's (powers of two of its lower bound). */
  private syncCapacity(): void {
    let want = this.lowerBound;
    while (want < this.history.capacity) want *= 2;
    if (want !== this.ring.capacity && want <= this.ring.maxCapacity) this.ring.setCapacity(want);
  }
}
