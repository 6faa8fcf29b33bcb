/**
 * Watching from another thread (API.md "Threads"): `cache.watchPort(options)`
 * registers a beta watch at once and returns a WatchPortHandle — only
 * SharedArrayBuffers and plain data, structured-cloneable, no MessagePort —
 * and `openWatch(handle)` in any thread returns the same async iterable of
 * events. Events arrive through the watcher's shared channel as references
 * into the shared history ring and are decoded once per consuming thread;
 * nothing is posted per event.
 *
 * The end of a watch reaches the other thread through shared memory too:
 * the channel is closed with a terminal code (END, or EXPIRED with the 410's
 * numbers in the state cells) by whichever thread owns it, or the server
 * raises the ENDED flag and wakes the consumer when it does not own it.
 */
import { SyncCursor } from '../sync/sync-cursor.js';
import { Unpackr } from 'msgpackr';
import { makeStatus } from '../core/errors.js';
import { apiVersionOf, type KubeObject, type ResourceInfo, type WatchEventLike } from '../core/types.js';
import { createRingRecord, HistoryRingReader, ReadStatus, type HistoryRingHandle } from '../ring/history-ring.js';
import {
  POP_CLOSED,
  POP_EMPTY,
  SpscChannel,
  Terminal,
  WriterOwner,
  type SpscChannelHandle,
} from '../ring/spsc-channel.js';
import { ControlBlock } from './control-block.js';
import { VARIANT_ADDED, VARIANT_BOOKMARK, VARIANT_DELETED } from './shared-watcher-channel.js';
import { decodeRingPayload } from './worker-pass-host.js';

/** State cells shared by the server side and the consuming thread. */
const PORT_ENDED = 0; // Int32 word: 1 once the server ended the watch, 2 when it expired it (410)
const PORT_POSITION = 1; // Float64 word: the 410's resource version
const PORT_OLDEST = 2; // Float64 word: the 410's oldest servable RV - 1

export interface WatchPortHandle {
  readonly kind: 'watchcache.watch-port';
  readonly version: 1;
  readonly channel: SpscChannelHandle;
  readonly ring: HistoryRingHandle;
  /** Int32 [ENDED] + Float64 [_, POSITION, OLDEST] (24 bytes). */
  readonly state: SharedArrayBuffer;
  /** The watcher's cursor cell (shared): the consumer sets its drained flag, as an in-thread one does. */
  readonly cursor: Float64Array;
  /**
   * The sync worker's control block: a pop from a channel the worker feeds
   * raises its room signal, as an in-thread consumer's does, so a worker
   * parked because every channel it owns was full wakes (absent: no signal).
   */
  readonly room?: SharedArrayBuffer;
  /** The initial events (msgpack array of {type, object}), for '0' and sendInitialEvents starts. */
  readonly initial: SharedArrayBuffer | null;
  readonly resource: ResourceInfo;
}

export function newPortState(): SharedArrayBuffer {
  return new SharedArrayBuffer(24);
}

/** The consuming side: an async iterator of events in any thread. */
export class RemoteWatch implements AsyncIterableIterator<WatchEventLike> {
  private readonly channel: SpscChannel;
  private readonly reader: HistoryRingReader;
  private readonly record = createRingRecord(4096);
  private readonly unpackr = new Unpackr({ useRecords: false });
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly cursor: SyncCursor;
  private readonly room: ControlBlock | undefined;
  private readonly resource: ResourceInfo;
  private initial: WatchEventLike[];
  private done = false;
  private lastRV = 0;

  constructor(handle: WatchPortHandle) {
    if (handle?.kind !== 'watchcache.watch-port' || handle.version !== 1)
      throw new TypeError('openWatch: not a watch port handle');
    this.channel = new SpscChannel(handle.channel);
    this.reader = new HistoryRingReader(handle.ring);
    this.i32 = new Int32Array(handle.state, 0, 1);
    this.f64 = new Float64Array(handle.state, 0, 3);
    this.cursor = new SyncCursor(handle.cursor);
    this.room = handle.room === undefined ? undefined : new ControlBlock(handle.room);
    this.resource = handle.resource;
    this.initial =
      handle.initial === null ? [] : (this.unpackr.unpack(new Uint8Array(handle.initial)) as WatchEventLike[]);
  }

  async next(): Promise<IteratorResult<WatchEventLike>> {
    for (;;) {
      if (this.done) return { done: true, value: undefined };
      const first = this.initial.shift();
      if (first !== undefined) return { done: false, value: first };
      const ref = this.channel.pop();
      if (ref === POP_EMPTY) {
        const ended = Atomics.load(this.i32, PORT_ENDED);
        if (ended === 2) return this.expired(this.f64[PORT_POSITION]!, this.f64[PORT_OLDEST]!);
        if (ended !== 0) return this.finish();
        await this.channel.waitForData(undefined, true);
        continue;
      }
      if (ref === POP_CLOSED) {
        if (this.channel.terminal === Terminal.EXPIRED)
          return this.expired(this.f64[PORT_POSITION]!, this.f64[PORT_OLDEST]!);
        return this.finish();
      }
      const variant = this.channel.lastVariant as number;
      // Room in a channel the worker feeds: it may be parked because every channel it owns was full.
      if (this.room !== undefined && this.channel.writerOwner === WriterOwner.SYNC_WORKER)
        this.room.signalRoom(this.channel);
      if (this.channel.size === 0) this.cursor.drained(); // candidate order key 2, seen by the sync worker
      if (variant === VARIANT_BOOKMARK) return { done: false, value: this.bookmark(ref) };
      const ev = this.decode(ref, variant);
      // The reference left the ring: an honest 410, never wrong data.
      if (ev === undefined) return this.expired(this.lastRV, this.reader.floorRV);
      return { done: false, value: ev };
    }
  }

  /** Stop the watch from this thread; the server unregisters it on its next delivery attempt. */
  stop(): void {
    if (this.done) return;
    this.done = true;
    this.channel.cancel();
  }

  return(): Promise<IteratorResult<WatchEventLike>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private decode(ref: number, variant: number): WatchEventLike | undefined {
    if (this.reader.read(ref, this.record) !== ReadStatus.OK) return undefined;
    const { frame, prevObject } = decodeRingPayload(this.unpackr, this.record.payload.subarray(0, this.record.length));
    this.lastRV = this.record.rv; // what this client has, for a later 410 message
    if (variant === VARIANT_ADDED) return { type: 'ADDED', object: frame.object };
    if (variant === VARIANT_DELETED) {
      const prev = prevObject ?? frame.object;
      return {
        type: 'DELETED',
        object: { ...prev, metadata: { ...prev.metadata, resourceVersion: String(this.record.rv) } },
      };
    }
    return frame;
  }

  private bookmark(rv: number): WatchEventLike {
    return {
      type: 'BOOKMARK',
      object: {
        kind: this.resource.kind,
        apiVersion: apiVersionOf(this.resource),
        metadata: { resourceVersion: String(rv) },
      },
    };
  }

  private expired(position: number, oldestMinus1: number): IteratorResult<WatchEventLike> {
    this.done = true;
    this.channel.cancel();
    const status = makeStatus(410, 'Expired', `too old resource version: ${position} (${oldestMinus1})`);
    return { done: false, value: { type: 'ERROR', object: status as unknown as KubeObject } };
  }

  private finish(): IteratorResult<WatchEventLike> {
    this.done = true;
    this.channel.cancel();
    return { done: true, value: undefined };
  }
}

/** Open a watch handed over by `cache.watchPort()`, in any thread. */
export function openWatch(handle: WatchPortHandle): RemoteWatch {
  return new RemoteWatch(handle);
}
