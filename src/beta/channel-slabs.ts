/**
 * ChannelSlabs: beta's watcher channels and position cells, pooled in a few
 * large SharedArrayBuffers (issue 13, deliverable 1). A watcher's region is
 * its position cell (CELL_SLOTS Float64 words) followed by its SpscChannel;
 * the sync worker receives each slab once, when it is created, so telling
 * the worker about a watcher (its introduction, its adopt at a stall) is two
 * numbers, the slab id and the offset, and no SharedArrayBuffer is cloned per
 * watcher. (Node clones the SharedArrayBuffers of one message in time that
 * grows faster than linearly: 10,000 watchers stalling at once with a buffer
 * pair each held the main thread for tens of milliseconds.)
 *
 * Regions are reused: `release` returns one to a free list of its size, and
 * `allocate` takes from it before carving a new one. The caller releases a
 * region only when no thread uses its previous channel any more (BetaSync:
 * the watcher ended and the sync worker no longer owns its writer side).
 * Watchers consumed in another thread (cache.watchPort) keep buffers of their
 * own: that thread may read its channel after the watch ended.
 */
import { SpscChannel } from '../ring/spsc-channel.js';
import { CELL_BYTES, CELL_SLOTS } from '../protocol/cursor-cell.js';

/** Default slab size: about 4,000 channels of 100 slots. */
const DEFAULT_SLAB_BYTES = 4 * 1024 * 1024;

/** Where a watcher's region is: the slab id, and the byte offset of its position cell. */
export interface SlabSlot {
  readonly slab: number;
  readonly offset: number;
  readonly capacity: number;
}

/** A region's bytes for a channel of `capacity` slots (cell + channel, a multiple of 8). */
export function regionBytes(capacity: number): number {
  return CELL_BYTES + SpscChannel.bytesFor(capacity);
}

export class ChannelSlabs {
  /** Slab id -> its buffer. */
  readonly buffers: SharedArrayBuffer[] = [];
  private readonly slabBytes: number;
  private readonly onSlab: (id: number, buffer: SharedArrayBuffer) => void;
  /** Next free byte in the newest shared slab (-1: none yet). */
  private bump = -1;
  private current = -1;
  private readonly free = new Map<number, SlabSlot[]>();
  /** Regions handed out and not released (for tests and the memory figures). */
  inUse = 0;

  /** `onSlab` is told about every new slab (BetaSync posts it to the sync worker). */
  constructor(onSlab: (id: number, buffer: SharedArrayBuffer) => void, slabBytes = DEFAULT_SLAB_BYTES) {
    this.onSlab = onSlab;
    this.slabBytes = slabBytes;
  }

  /** A region for a channel of `capacity` slots: a released one of that size, else a new one. */
  allocate(capacity: number): SlabSlot {
    const bytes = regionBytes(capacity);
    this.inUse++;
    const reused = this.free.get(bytes)?.pop();
    if (reused !== undefined) return reused;
    if (bytes > this.slabBytes) return { slab: this.newSlab(bytes), offset: 0, capacity }; // a slab of its own
    if (this.current < 0 || this.bump + bytes > this.slabBytes) {
      this.current = this.newSlab(this.slabBytes);
      this.bump = 0;
    }
    const slot = { slab: this.current, offset: this.bump, capacity };
    this.bump += bytes;
    return slot;
  }

  /** The region is free again: nobody uses its channel or cell any more. */
  release(slot: SlabSlot): void {
    this.inUse--;
    const bytes = regionBytes(slot.capacity);
    let list = this.free.get(bytes);
    if (list === undefined) this.free.set(bytes, (list = []));
    list.push(slot);
  }

  /** The buffer of `slot`'s slab. */
  bufferOf(slot: SlabSlot): SharedArrayBuffer {
    return this.buffers[slot.slab]!;
  }

  private newSlab(bytes: number): number {
    const id = this.buffers.length;
    const buffer = new SharedArrayBuffer(bytes);
    this.buffers.push(buffer);
    this.onSlab(id, buffer);
    return id;
  }
}

/** Open the position cell and the channel of `slot` in `buffer` (either thread). */
export function openRegion(buffer: SharedArrayBuffer, slot: SlabSlot): { cell: Float64Array; channel: SpscChannel } {
  return {
    cell: new Float64Array(buffer, slot.offset, CELL_SLOTS),
    channel: new SpscChannel({ buffer, capacity: slot.capacity, byteOffset: slot.offset + CELL_BYTES }),
  };
}
