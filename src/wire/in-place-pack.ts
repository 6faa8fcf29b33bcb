/**
 * In-place msgpack: an event's frame `{type, object}` packed straight into a
 * region of a larger buffer (beta's ring arena, src/protocol/ring-payload.ts)
 * instead of into msgpackr's own buffer and copied there (issue 13, the lean
 * mirror: one encode, written once). The same Packr as every other frame
 * (src/wire/watch-event.ts): the same bytes.
 *
 * msgpackr keeps its target buffer and position as module state, shared by
 * every Packr: a pack continues in the last buffer it was given. So after
 * packing into a region (which belongs to the ring once packed) it is
 * pointed at a parked buffer with no room left, and the next pack anywhere
 * starts in a fresh buffer of its own, as when its buffer runs out; the
 * bytes it handed out before (views streams keep) are never written again.
 */
import { RESET_BUFFER_MODE, REUSE_BUFFER_MODE } from 'msgpackr';
import type { FrameBytes } from './frame-source.js';
import { msgpack } from './watch-event.js';

/** Never written: msgpackr, at its end, starts the next pack in a new buffer of this size (its default). */
const PARKED = Buffer.alloc(8192);

/** A Buffer over the last target packed into (the ring's arena view; re-made when the arena grows). */
let whole: Buffer = PARKED;
let wholeOf: Uint8Array | undefined;

/**
 * The least room worth offering: msgpackr starts a pack in a buffer of its
 * own when fewer than 2 KiB (plus its 10-byte slack) remain.
 */
export const MIN_IN_PLACE_ROOM = 0x800 + 16;

/**
 * Room that always fits a frame of `length` bytes again: msgpackr makes room
 * for 3 bytes per UTF-16 unit of a string before writing it.
 */
export function inPlaceRoom(length: number): number {
  const room = 3 * length + 64;
  return room < MIN_IN_PLACE_ROOM ? MIN_IN_PLACE_ROOM : room + ((4 - (room & 3)) & 3);
}

/**
 * Pack `value` into target[start, end) (nothing outside it is written).
 * Returns the bytes it took, from `start`; or -1 when it did not fit: then
 * `spill` holds the whole frame in msgpackr's own buffer (valid until the
 * next pack), for the caller to copy.
 */
export function packInPlace(value: unknown, target: Uint8Array, start: number, end: number, spill: FrameBytes): number {
  // A Buffer view (msgpackr writes strings with Buffer#utf8Write), bounded by the region: a subarray of
  // one Buffer over the whole target (about a third of the cost of Buffer.from per region).
  if (wholeOf !== target) {
    whole = Buffer.from(target.buffer, target.byteOffset, target.length);
    wholeOf = target;
  }
  const region = whole.subarray(start, end);
  msgpack.useBuffer(region);
  let out: Buffer & { start: number; end: number };
  try {
    // REUSE_BUFFER_MODE: the answer is the buffer packed into (no view made); RESET_BUFFER_MODE: msgpackr
    // does not move on past the frame (the region is left at once below).
    out = msgpack.pack(value, REUSE_BUFFER_MODE | RESET_BUFFER_MODE) as unknown as Buffer & {
      start: number;
      end: number;
    };
  } finally {
    msgpack.useBuffer(PARKED);
    msgpack.position = PARKED.length;
  }
  if (out === region) return out.end;
  spill.bytes = out;
  spill.start = out.start;
  spill.end = out.end;
  return -1;
}
