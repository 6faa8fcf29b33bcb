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
import { hash32, NO_VALUE_HASH } from '../ring/hash32.js';
import { EventTypeCode, eventTypeCode, type HistoryRingHandle } from '../ring/ring-layout.js';
import { HistoryRing, type AppendMeta } from '../ring/ring-writer.js';
import { PrefaultRequests } from '../ring/arena-prefault.js';
import { copyRingFrame, RING_FRAME_START, RingPayloadWriter } from '../protocol/ring-payload.js';
import { Delivery } from '../selection/selection.js';
import { PendingFrame, type FrameSource, type FrameStore, type ObjectKeys } from '../wire/frame-source.js';
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
  /**
   * Ask the sync worker thread to commit the arena's pages up to this byte (src/ring/arena-prefault.ts),
   * ahead of the writer. Absent (the in-process worker): nothing is asked, the writer faults them in itself.
   */
  prefaultArena?: ((upTo: number) => void) | undefined;
}

export class RingMirror implements FrameStore {
  private readonly ring: HistoryRing;
  private readonly history: EventHistory;
  private readonly metrics: CacheMetrics;
  /** Builds each event's payload; the ring copies it straight into its arena. */
  private readonly payload: RingPayloadWriter;
  /** The slot words of each append (one object, rewritten per event). */
  private readonly meta: AppendMeta = {
    rv: 0,
    type: EventTypeCode.ADDED,
    nsHash: 0,
    nameHash: 0,
    triggerHash: 0,
    prevTriggerHash: 0,
    hasPrev: false,
    prevLength: 0,
    prevStart: RING_FRAME_START,
    prevAbs: undefined,
    prevBytes: undefined,
  };
  /** The last frame's length: the room to reserve for a frame with no previous one to go by. */
  private lastFrameLength = 0;
  private readonly lowerBound: number;
  private readonly onDesync: RingMirrorInit['onDesync'];
  private readonly onPublished: (() => void) | undefined;
  /** Asks init.prefaultArena for the arena ahead of the writer (undefined without one). */
  private readonly prefaults: PrefaultRequests | undefined;
  private failed = false;
  /**
   * The frame of each event in the ring, in ring order (`held[heldHead + i]`
   * is event `heldBase + i`'s): its bytes are its payload's FRAME. When an
   * event leaves the ring and no later event took its frame (the object has
   * not changed since), the frame is copied out into its own bytes (order
   * rule: before the ring reuses them, onEvict), so the next event on that
   * object can still copy it as its previous object, never re-encoding it.
   */
  private held: PendingFrame[] = [];
  private heldHead = 0;
  private heldBase = 0;
  /** The history's capacity the ring's was last matched to. */
  private historyCapacity = 0;
  /** A relist restarts the ring: the object state is replaced, nobody needs the old frames. */
  private restarting = false;

  constructor(init: RingMirrorInit) {
    this.history = init.history;
    this.metrics = init.metrics;
    this.payload = new RingPayloadWriter(init.indexers);
    this.onDesync = init.onDesync;
    this.onPublished = init.onPublished;
    this.prefaults = init.prefaultArena === undefined ? undefined : new PrefaultRequests(init.prefaultArena);
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
      onEvict: (from, to) => this.evicted(from, to),
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
    if (this.failed || listRV < this.ring.lastRV) return;
    this.restarting = true;
    try {
      this.ring.clear(listRV);
    } finally {
      this.restarting = false;
    }
  }

  /** A msgpack frame for an object no event has carried yet (one from the initial list). */
  encodeFrame(object: KubeObject): Uint8Array {
    this.metrics.encoded('msgpack');
    return msgpack.pack({ type: 'ADDED', object });
  }

  /** FrameStore: a copy of the frame carried by ring event `abs` while it is in the ring (no encode). */
  copyFrame(abs: number): Uint8Array | undefined {
    const payload = this.ring.heldBytes(abs);
    return payload === undefined ? undefined : copyRingFrame(payload);
  }

  /**
   * Mirror an appended history event into the ring, then publish. Payload
   * (src/protocol/ring-payload.ts): the event's wire frame `{type, object}`
   * (its one msgpack encoding, packed straight into the arena, in a room
   * reserved from the previous frame's length; msgpack streams get it from
   * there) and the selection section (binary, no second msgpack). The
   * previous object is the frame that carried it (`prev`): referenced in the
   * ring slot that carries it when that event is still in the ring and
   * nobody references it yet, else copied into the payload by the ring
   * (reused bytes, never re-encoded). The previous object's slot hashes and
   * selection values come from that frame's keys (what this mirror worked
   * out when it carried the object), so the previous object, out of the
   * CPU caches by now, is not read again. `out` becomes the event's frame
   * (its carrier: this event's ring index, and its object's keys) for the
   * object state to keep; returned, undefined once desynced.
   */
  appended(event: WatchCacheEvent, prev: FrameSource | undefined, out = new PendingFrame()): PendingFrame | undefined {
    if (this.failed) return undefined;
    this.syncCapacity();
    // The previous object's values go with the frame that carries it (hasPrev), never without it.
    const prevObject = prev === undefined ? undefined : event.prevObject;
    const meta = this.meta;
    let carrier = -1;
    let copied: Uint8Array | undefined;
    let prevLength = 0;
    // What this mirror kept about the previous object when it carried it (its keys): used instead of
    // reading that object again, only if it is that very object.
    let prevKeys: ObjectKeys | undefined;
    if (prevObject !== undefined) {
      if (prev instanceof PendingFrame) {
        prev.taken = true; // this event takes it: nobody needs it once its carrier leaves the ring
        const k = prev.keys;
        prev.keys = undefined; // they move on with the object's newest frame
        if (k !== undefined && k.object === prevObject) prevKeys = k;
        // Only a payload still in the ring, and not referenced yet, can be referenced (order rule 5).
        if (prev.carrier >= 0 && this.ring.referable(prev.carrier)) {
          carrier = prev.carrier;
          prevLength = prev.length;
        } else copied = prev.read() ?? this.ownBytes(prev, prevObject);
      } else copied = prev;
      if (copied !== undefined) prevLength = copied.length;
    }
    try {
      const wire = event.deliver(Delivery.AsIs);
      const made = wire.ringFrame(out);
      if (made !== undefined) this.payload.set(made, event.object, prevObject, prevKeys);
      else {
        // The event's one msgpack encoding, straight into the arena (room: ~1.5 × the previous frame).
        this.metrics.encoded('msgpack');
        const hint = prevLength > 0 ? prevLength : this.lastFrameLength;
        this.payload.pack(event.type, event.object, prevObject, hint, this.ring.arenaBytes >> 3, prevKeys);
      }
      // The slot's hashes: the previous event's on this object where the strings are the same.
      const ns = event.namespace;
      const name = event.name;
      const trigger = event.triggerValue;
      const prevTrigger = event.prevTriggerValue;
      const nsHash = prevKeys !== undefined && prevKeys.nsKey === ns ? prevKeys.nsHash : hash32(ns);
      const nameHash = prevKeys !== undefined && prevKeys.nameKey === name ? prevKeys.nameHash : hash32(name);
      const triggerHash = trigger === '' ? NO_VALUE_HASH : hash32(trigger);
      meta.rv = event.rv;
      meta.type = eventTypeCode(event.type);
      meta.nsHash = nsHash;
      meta.nameHash = nameHash;
      meta.triggerHash = triggerHash;
      meta.prevTriggerHash =
        prevTrigger === ''
          ? NO_VALUE_HASH
          : prevKeys !== undefined && prevKeys.trigger === prevTrigger
            ? prevKeys.triggerHash
            : hash32(prevTrigger);
      meta.hasPrev = prevObject !== undefined;
      // The previous object's bytes: the FRAME of the payload that carried it, or a copy in this one.
      meta.prevLength = prevLength;
      meta.prevAbs = carrier >= 0 ? carrier : undefined;
      meta.prevBytes = copied;
      const abs = this.ring.appendPayload(meta, this.payload);
      meta.prevBytes = undefined; // keep no reference to the bytes
      if (abs !== event.index) throw new Error(`ring index ${abs} != history index ${event.index}`);
      out.carrier = abs;
      out.length = this.lastFrameLength = this.payload.frameLength;
      out.store = this;
      // A DELETED object has no next event on it: nobody takes its frame (a stream still may, while held).
      out.taken = event.type === 'DELETED';
      if (!out.taken) {
        out.keys = {
          object: event.object,
          namespace: event.object.metadata?.namespace,
          name: event.object.metadata?.name,
          nsKey: ns,
          nsHash,
          nameKey: name,
          nameHash,
          trigger,
          triggerHash,
          values: this.payload.values,
          labels: event.object.metadata?.labels,
        };
      }
      if (this.held.length === this.heldHead) this.heldBase = abs;
      this.held.push(out);
    } catch (err) {
      this.failed = true;
      this.onDesync(`history ring desynchronized: ${(err as Error).message}`, event);
      return out;
    }
    this.ring.publish();
    this.onPublished?.();
    // The arena ahead of the writer is committed by the worker, not page by page here (arena-prefault.ts).
    this.prefaults?.afterAppend(this.ring.writeEnd, this.ring.arenaBytes);
    return out;
  }

  /**
   * Bytes of a previous object's frame that is neither referable nor kept:
   * an initial-list object's (encoded now, once), else (its carrier left the
   * ring after the frame was taken: only when two events take one frame) the
   * previous object encoded again, counted.
   */
  private ownBytes(prev: PendingFrame, prevObject: KubeObject): Uint8Array {
    return (prev.bytes = this.encodeFrame(prev.object ?? prevObject));
  }

  /** onEvict: events [from, to) leave the ring; frames nobody took yet are copied out first. */
  private evicted(from: number, to: number): void {
    const held = this.held;
    let h = this.heldHead + Math.max(0, from - this.heldBase); // frames of events gone already
    for (let abs = Math.max(from, this.heldBase); abs < to && h < held.length; abs++, h++) {
      const f = held[h]!;
      if (!f.taken && f.bytes === undefined && !this.restarting) f.bytes = this.copyFrame(abs);
    }
    this.heldBase += h - this.heldHead;
    if (h === held.length) {
      this.held = [];
      h = 0;
    } else if (h > 4096 && h * 2 > held.length) {
      this.held = held.slice(h);
      h = 0;
    }
    this.heldHead = h;
  }

  /** The ring's slot capacity follows the history's (powers of two of its lower bound). */
  private syncCapacity(): void {
    if (this.history.capacity === this.historyCapacity) return; // unchanged since the last event
    this.historyCapacity = this.history.capacity;
    let want = this.lowerBound;
    while (want < this.history.capacity) want *= 2;
    if (want !== this.ring.capacity && want <= this.ring.maxCapacity) this.ring.setCapacity(want);
  }
}
