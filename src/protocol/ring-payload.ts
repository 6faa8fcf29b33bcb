/**
 * Ring payload: what one history-ring slot's payload bytes hold, written by
 * the main thread's mirror (src/beta/ring-mirror.ts) straight into the ring's
 * arena, and read by the sync worker (src/beta/worker-pass-host.ts) and
 * remote watch consumers (src/beta/watch-port.ts). The one module both
 * sides import.
 *
 * One payload (all integers little-endian u32; offsets from the payload's
 * first byte, which the ring keeps 4-aligned):
 *
 *   offset        bytes  field        meaning
 *   ------------  -----  -----------  -------------------------------------------------------------
 *   0             4      FRAME_LEN    F: bytes of the event's frame
 *   4             4      SEL_LEN      S: bytes of the selection data
 *   8             F      FRAME        the event's wire frame {type, object}: its one msgpack encoding,
 *                                     the same bytes msgpack streams send
 *   8+F           S      SELECTION    binary, no msgpack (below)
 *   8+F+S         rest   PREV_FRAME   optional: the frame that carried the previous object (its bytes
 *                                     reused, never re-encoded), when no held slot carries it
 *
 * Where the previous object's frame is comes from the slot's PREV words, not
 * from this table (src/ring/ring-layout.ts, order rule 5): when the event that
 * carried it is still in the ring, the slot references that event's FRAME
 * (bytes [8, 8+F) of its payload) instead of copying it here; otherwise (an
 * object from the initial list, or one whose last event left the ring) the
 * mirror writes PREV_FRAME here and the PREV words point at it. A reader gets
 * the bytes as RingRecord.prevStart/prevLength.
 *
 * SELECTION: FLAGS (u32; bit 0 SKELETON_EXACT: namespace and name are strings
 * or absent, equal in the object and the previous object, so a selection
 * without label selectors whose field requirements are on metadata.name,
 * metadata.namespace or indexed fields is decided exactly from this section
 * alone), then strings, each as u32 length (0xffffffff: absent) plus UTF-8
 * bytes: NAMESPACE, NAME, then for every indexer field in the order both
 * sides got at start (the worker's `indexerFields`) the object's value and
 * the previous object's value. Indexer values travel here because functions
 * cannot cross threads; a non-string value is written as absent (selection
 * reads both as '').
 */
import type { Unpackr } from 'msgpackr';
import type { ChangeType, IndexerFunc, KubeObject } from '../core/types.js';
import type { FrameBytes } from '../wire/frame-source.js';

export interface RingFrame {
  type: ChangeType;
  object: KubeObject;
}

/** The SELECTION section of a payload, decoded (no msgpack). */
export interface RingSelection {
  /** SKELETON_EXACT: the strings below decide a label-free selection on name, namespace and indexed fields. */
  exact: boolean;
  namespace: string | undefined;
  name: string | undefined;
  /** Per indexer field (in `indexerFields` order): the object's value and the previous object's. */
  values: (string | undefined)[];
  prevValues: (string | undefined)[];
}

const HEADER = 8;
/** Where a payload's FRAME starts (the bytes a later slot may reference as its previous object). */
export const RING_FRAME_START = HEADER;
const ABSENT = 0xffffffff;
/** Strings up to this many UTF-16 units are tried as ASCII first (RingPayloadWriter.str). */
const SHORT_STRING = 64;
const FLAG_SKELETON_EXACT = 1;
const utf8d = new TextDecoder();

/**
 * Builds one payload at a time (reused across events: no allocation per
 * event beyond a larger scratch when a selection section outgrows it, and
 * the one view of the frame's bytes that writeTo copies from). The frames are
 * copied once, by writeTo, into the ring's arena (it is a ring-writer.ts
 * PayloadSource).
 */
export class RingPayloadWriter {
  private readonly fns: IndexerFunc[];
  private scratch = Buffer.alloc(256);
  private selLen = 0;
  private frameBytes: Uint8Array = new Uint8Array(0);
  private frameStart = 0;
  private frameLen = 0;
  private prevFrame: Uint8Array | undefined;

  constructor(indexers: Record<string, IndexerFunc>) {
    this.fns = Object.values(indexers);
  }

  /**
   * Prepare the payload of one event: its frame (bytes[start, end), read
   * again by writeTo), both objects (for the selection section) and the
   * previous object's frame when it is to be copied here (undefined when the
   * slot references it, or there is none).
   */
  set(
    frame: Uint8Array | FrameBytes,
    object: KubeObject,
    prevObject: KubeObject | undefined,
    prevFrame: Uint8Array | undefined,
  ): this {
    if (frame instanceof Uint8Array) {
      this.frameBytes = frame;
      this.frameStart = 0;
      this.frameLen = frame.length;
    } else {
      this.frameBytes = frame.bytes;
      this.frameStart = frame.start;
      this.frameLen = frame.end - frame.start;
    }
    this.prevFrame = prevFrame;
    const md = object.metadata;
    const ns = md?.namespace;
    const name = md?.name;
    const pmd = prevObject?.metadata;
    const exact =
      (ns === undefined || typeof ns === 'string') &&
      (name === undefined || typeof name === 'string') &&
      (prevObject === undefined || (pmd?.namespace === ns && pmd?.name === name));
    let at = 4;
    this.u32(0, exact ? FLAG_SKELETON_EXACT : 0);
    at = this.str(at, typeof ns === 'string' ? ns : undefined);
    at = this.str(at, typeof name === 'string' ? name : undefined);
    for (const fn of this.fns) {
      at = this.str(at, stringOrUndefined(fn(object)));
      at = this.str(at, prevObject === undefined ? undefined : stringOrUndefined(fn(prevObject)));
    }
    this.selLen = at;
    return this;
  }

  get byteLength(): number {
    return HEADER + this.frameLen + this.selLen + (this.prevFrame?.length ?? 0);
  }

  /** Bytes of the event's frame. */
  get frameLength(): number {
    return this.frameLen;
  }

  /** Where PREV_FRAME starts in this payload (its bytes: the prevFrame given to set, if any). */
  get prevFrameStart(): number {
    return HEADER + this.frameLen + this.selLen;
  }

  writeTo(target: Uint8Array, offset: number): void {
    const f = this.frameLen;
    const bytes = this.frameBytes;
    writeU32(target, offset, f);
    writeU32(target, offset + 4, this.selLen);
    const s = this.frameStart;
    target.set(s === 0 && f === bytes.length ? bytes : bytes.subarray(s, s + f), offset + HEADER);
    // The selection section is a few dozen bytes: a loop, not a view to copy from.
    const sel = this.scratch;
    const at = offset + HEADER + f;
    for (let i = 0, n = this.selLen; i < n; i++) target[at + i] = sel[i]!;
    if (this.prevFrame !== undefined) target.set(this.prevFrame, offset + HEADER + f + this.selLen);
  }

  /** The payload as its own bytes (tests, and appends that take bytes). */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.byteLength);
    this.writeTo(out, 0);
    return out;
  }

  private u32(at: number, v: number): void {
    this.room(at + 4);
    writeU32(this.scratch, at, v);
  }

  private str(at: number, s: string | undefined): number {
    if (s === undefined) {
      this.u32(at, ABSENT);
      return at + 4;
    }
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.room(at + 4 + s.length * 3);
    const b = this.scratch;
    const len = s.length;
    let n = 0;
    // Names, namespaces and indexed values are short and mostly ASCII: byte by byte, no native call.
    if (len <= SHORT_STRING) {
      while (n < len) {
        const c = s.charCodeAt(n);
        if (c >= 0x80) break;
        b[at + 4 + n++] = c;
      }
    }
    if (n < len) n = b.write(s, at + 4); // UTF-8 in place (no view), from the start
    writeU32(b, at, n);
    return at + 4 + n;
  }

  private room(n: number): void {
    if (n <= this.scratch.length) return;
    const bigger = Buffer.alloc(Math.max(n, this.scratch.length * 2));
    bigger.set(this.scratch);
    this.scratch = bigger;
  }
}

function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function writeU32(b: Uint8Array, at: number, v: number): void {
  b[at] = v & 0xff;
  b[at + 1] = (v >>> 8) & 0xff;
  b[at + 2] = (v >>> 16) & 0xff;
  b[at + 3] = (v >>> 24) & 0xff;
}

function readU32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/** A copy of the event's FRAME of `payload` (one payload's bytes): its msgpack frame, as streams send it. */
export function copyRingFrame(payload: Uint8Array): Buffer {
  return Buffer.from(payload.subarray(HEADER, HEADER + readU32(payload, 0)));
}

/** The SELECTION section of `bytes` (one payload), without decoding any msgpack. */
export function readRingSelection(bytes: Uint8Array, fieldCount: number): RingSelection {
  const f = readU32(bytes, 0);
  let at = HEADER + f;
  const flags = readU32(bytes, at);
  at += 4;
  const read = (): string | undefined => {
    const n = readU32(bytes, at);
    at += 4;
    if (n === ABSENT) return undefined;
    const s = utf8d.decode(bytes.subarray(at, at + n));
    at += n;
    return s;
  };
  const namespace = read();
  const name = read();
  const values: (string | undefined)[] = [];
  const prevValues: (string | undefined)[] = [];
  for (let i = 0; i < fieldCount; i++) {
    values.push(read());
    prevValues.push(read());
  }
  return { exact: (flags & FLAG_SKELETON_EXACT) !== 0, namespace, name, values, prevValues };
}

/**
 * Decode a ring payload: the event's frame and the previous object, whose
 * frame is bytes[prevStart, prevStart + prevLength) (RingRecord.prevStart /
 * prevLength; prevLength 0 or prevStart < 0: not wanted or none). msgpack
 * decodes only the frames.
 */
export function decodeRingPayload(
  unpackr: Unpackr,
  bytes: Uint8Array,
  prevStart: number,
  prevLength: number,
): { frame: RingFrame; prevObject: KubeObject | undefined } {
  const f = readU32(bytes, 0);
  const frame = unpackr.unpack(bytes.subarray(HEADER, HEADER + f)) as RingFrame;
  if (prevLength <= 0 || prevStart < 0) return { frame, prevObject: undefined };
  const prev = unpackr.unpack(bytes.subarray(prevStart, prevStart + prevLength)) as RingFrame;
  return { frame, prevObject: prev.object };
}
