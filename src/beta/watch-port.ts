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
import type { HistoryRingHandle } from '../ring/ring-layout.js';
import { createRingRecord, HistoryRingReader, ReadStatus } from '../ring/ring-reader.js';
import { POP_CLOSED, POP_EMPTY, SpscChannel, type SpscChannelHandle } from '../ring/spsc-channel.js';
import { Terminal, Variant, WriterOwner } from '../protocol/channel-variants.js';
import { PortEnded, PortStateCells } from '../protocol/port-state-cells.js';
import { decodeRingPayload } from '../protocol/ring-payload.js';
import { ControlBlock } from './control-block.js';

export interface WatchPortHandle {
  readonly kind: 'watchcache.watch-port';
  readonly version: 1;
  readonly channel: SpscChannelHandle;
  readonly ring: HistoryRingHandle;
  /** The port's state cells (src/protocol/port-state-cells.ts). */
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

/** The consuming side: an async iterator of events in any thread. */
export class RemoteWatch implements AsyncIterableIterator<WatchEventLike> {
  private readonly channel: SpscChannel;
  private readonly reader: HistoryRingReader;
  private readonly record = createRingRecord(4096);
  private readonly unpackr = new Unpackr({ useRecords: false });
  private readonly state: PortStateCells;
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
    this.state = new PortStateCells(handle.state);
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
        const ended = this.state.ended;
        if (ended === PortEnded.EXPIRED) return this.expired(this.state.position, this.state.oldestMinus1);
        if (ended !== PortEnded.OPEN) return this.finish();
        await this.channel.waitForData(undefined, true);
        continue;
      }
      if (ref === POP_CLOSED) {
        if (this.channel.terminal === Terminal.EXPIRED)
          return this.expired(this.state.position, this.state.oldestMinus1);
        return this.finish();
      }
      const variant = this.channel.lastVariant;
      // Room in a channel the worker feeds: it may be parked because every channel it owns was full.
      if (this.room !== undefined && this.channel.writerOwner === WriterOwner.SYNC_WORKER)
        this.room.signalRoom(this.channel.capacity - this.channel.leftAfterPop, this.channel.capacity);
      if (this.channel.leftAfterPop === 0) this.cursor.drained(); // candidate order key 2, seen by the sync worker
      if (variant === Variant.BOOKMARK) return { done: false, value: this.bookmark(ref) };
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

  private decode(ref: number, variant: Variant): WatchEventLike | undefined {
    // Only a DELETED delivery shows the previous object: copy and decode its frame only then.
    const withPrev = variant === Variant.DELETED;
    if (this.reader.read(ref, this.record, withPrev) !== ReadStatus.OK) return undefined;
    const rec = this.record;
    const { frame, prevObject } = decodeRingPayload(
      this.unpackr,
      rec.payload,
      withPrev ? rec.prevStart : -1,
      rec.prevLength,
    );
    this.lastRV = this.record.rv; // what this client has, for a later 410 message
    if (variant === Variant.ADDED) return { type: 'ADDED', object: frame.object };
    if (variant === Variant.DELETED) {
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
