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
 *   align4(8+F+S) rest   PREV_FRAME   optional: the frame that carried the previous object (its bytes
 *                                     reused, never re-encoded), when no held slot carries it
 *
 * FRAME is packed straight into the arena (src/wire/in-place-pack.ts) when no
 * stream made it already: the writer reserves room for it first (a guess from
 * the previous frame of the same object, at least 2 KiB), and a frame that
 * does not fit is placed again at its exact length and copied. So F is known
 * only once packed, and the ring writer, not this module, puts PREV_FRAME
 * after the payload (AppendMeta.prevBytes).
 *
 * Where the previous object's frame is comes from the slot's PREV words, not
 * from this table (src/ring/ring-layout.ts, order rule 5): when the event that
 * carried it is still in the ring, the slot references that event's FRAME
 * (bytes [8, 8+F) of its payload) instead of copying it here; otherwise (an
 * object from the initial list, or one whose last event left the ring) the
 * ring writer copies PREV_FRAME here and the PREV words point at it. A reader
 * gets the bytes as RingRecord.prevStart/prevLength.
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
 * reads both as ''). Then LABELS and PREV_LABELS, the object's and the
 * previous object's metadata.labels: each a u32 count C then C pairs of
 * strings (key, value); C = 0: no labels (or no previous object);
 * 0xffffffff: not a map of strings (not written); 0xfffffffe (PREV_LABELS
 * only): the same keys and values as LABELS. FLAGS bit 1 LABELS_EXACT: both
 * were written, so a label selector is decided from this section too
 * (issue 13, deliverable 4: a label-selector watcher catching up had every
 * scanned event's payload decoded in the worker, ~30 µs each).
 */
import type { Unpackr } from 'msgpackr';
import type { ChangeType, IndexerFunc, KubeObject } from '../core/types.js';
import type { FrameBytes, ObjectKeys } from '../wire/frame-source.js';
import { inPlaceRoom, MIN_IN_PLACE_ROOM, packInPlace } from '../wire/in-place-pack.js';
import type { SectionInterner } from './section-interner.js';

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
  /** LABELS_EXACT: `labels` and `prevLabels` are the objects' labels (undefined: none). */
  labelsExact: boolean;
  labels: Record<string, string> | undefined;
  prevLabels: Record<string, string> | undefined;
}

const HEADER = 8;
/** Where a payload's FRAME starts (the bytes a later slot may reference as its previous object). */
export const RING_FRAME_START = HEADER;
const ABSENT = 0xffffffff;
/** Strings up to this many UTF-16 units are tried as ASCII first (RingPayloadWriter.str). */
const SHORT_STRING = 64;
const FLAG_SKELETON_EXACT = 1;
const FLAG_LABELS_EXACT = 2;
/** PREV_LABELS: the same keys and values as LABELS. */
const SAME_LABELS = 0xfffffffe;
/** ignoreBOM: a string that starts with U+FEFF keeps it (the default decoder strips a leading BOM as a marker). */
const utf8d = new TextDecoder('utf-8', { ignoreBOM: true });
/** The values of a writer without indexers (never written to). */
const NO_VALUES: (string | undefined)[] = [];

/**
 * Builds one payload at a time, as a ring-writer.ts PayloadSource (reused
 * across events: no allocation per event beyond the region view the
 * in-place pack takes, and a larger scratch when a selection section
 * outgrows it). The frame is written once, by writeTo, into the ring's
 * arena: packed there (pack), or copied there when a stream made it already
 * (set).
 */
export class RingPayloadWriter {
  private readonly fns: IndexerFunc[];
  private scratch = Buffer.alloc(256);
  private selLen = 0;
  private frameBytes: Uint8Array = new Uint8Array(0);
  private frameStart = 0;
  private frameLen = 0;
  /** The frame to pack in place (undefined: copy frameBytes), in at most frameRoom bytes. */
  private packing: RingFrame | undefined = undefined;
  private frameRoom = 0;
  /** A frame that did not fit its room: msgpackr's own bytes, copied by the second writeTo. */
  private readonly spill: FrameBytes = { bytes: new Uint8Array(0), start: 0, end: 0 };
  private objectValues: (string | undefined)[] = NO_VALUES;

  constructor(indexers: Record<string, IndexerFunc>) {
    this.fns = Object.values(indexers);
  }

  /**
   * The payload of an event whose frame is made already: bytes (or
   * bytes[start, end)), copied by writeTo. `prevKeys`: what the mirror kept
   * about prevObject (its keys when it carried it), used instead of reading it.
   */
  set(
    frame: Uint8Array | FrameBytes,
    object: KubeObject,
    prevObject: KubeObject | undefined,
    prevKeys?: ObjectKeys,
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
    this.packing = undefined;
    this.select(object, prevObject, prevKeys);
    return this;
  }

  /**
   * The payload of an event whose frame `{type, object}` writeTo packs in
   * place: in a reserved room that fits a frame of `hint` bytes (the previous
   * frame of the same object, or a recent one) again, at most `maxRoom` (0:
   * whatever the hint asks; a frame that does not fit is copied). `prevKeys`
   * as in set.
   */
  pack(
    type: ChangeType,
    object: KubeObject,
    prevObject: KubeObject | undefined,
    hint: number,
    maxRoom = 0,
    prevKeys?: ObjectKeys,
  ): this {
    this.packing = { type, object };
    const room = inPlaceRoom(hint);
    this.frameRoom = maxRoom > 0 && room > maxRoom ? Math.max(maxRoom & ~3, MIN_IN_PLACE_ROOM) : room;
    this.select(object, prevObject, prevKeys);
    return this;
  }

  /** The object's indexer values of the last set or pack (a new array each time: the mirror keeps it). */
  get values(): (string | undefined)[] {
    return this.objectValues;
  }

  /** Bytes of the payload; while a frame is still to be packed, its reservation. */
  get byteLength(): number {
    return HEADER + (this.packing !== undefined ? this.frameRoom : this.frameLen) + this.selLen;
  }

  /** Bytes of the event's frame (once written). */
  get frameLength(): number {
    return this.frameLen;
  }

  writeTo(target: Uint8Array, offset: number): number {
    const value = this.packing;
    if (value !== undefined) {
      this.packing = undefined; // packed once: a frame that does not fit is copied from the spill next
      const start = offset + HEADER;
      const f = packInPlace(value, target, start, start + this.frameRoom, this.spill);
      if (f < 0) {
        this.frameBytes = this.spill.bytes;
        this.frameStart = this.spill.start;
        this.frameLen = this.spill.end - this.spill.start;
        return -1;
      }
      this.frameLen = f;
    } else {
      const s = this.frameStart;
      const bytes = this.frameBytes;
      const n = this.frameLen;
      target.set(s === 0 && n === bytes.length ? bytes : bytes.subarray(s, s + n), offset + HEADER);
    }
    const f = this.frameLen;
    writeU32(target, offset, f);
    writeU32(target, offset + 4, this.selLen);
    // The selection section is a few dozen bytes: a loop, not a view to copy from.
    const sel = this.scratch;
    const at = offset + HEADER + f;
    for (let i = 0, n = this.selLen; i < n; i++) target[at + i] = sel[i]!;
    return HEADER + f + this.selLen;
  }

  /** The payload as its own bytes (tests; a frame made already). */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.byteLength);
    this.writeTo(out, 0);
    return out;
  }

  /**
   * The SELECTION section of `object` (and `prevObject`) into the scratch.
   * The previous object's namespace, name and indexer values come from
   * `prevKeys` when they are prevObject's (the same object, keyed when it
   * was mirrored: the same values), else from prevObject itself.
   */
  private select(object: KubeObject, prevObject: KubeObject | undefined, prevKeys: ObjectKeys | undefined): void {
    const md = object.metadata;
    const ns = md?.namespace;
    const name = md?.name;
    const known = prevKeys !== undefined && prevObject !== undefined && prevKeys.object === prevObject;
    const pmd = known ? undefined : prevObject?.metadata;
    const exact =
      (ns === undefined || typeof ns === 'string') &&
      (name === undefined || typeof name === 'string') &&
      (prevObject === undefined ||
        (known ? prevKeys.namespace === ns && prevKeys.name === name : pmd?.namespace === ns && pmd?.name === name));
    let at = 4;
    this.u32(0, exact ? FLAG_SKELETON_EXACT : 0);
    at = this.str(at, typeof ns === 'string' ? ns : undefined);
    at = this.str(at, typeof name === 'string' ? name : undefined);
    const fns = this.fns;
    const values: (string | undefined)[] = fns.length === 0 ? NO_VALUES : new Array<string | undefined>(fns.length);
    for (let i = 0; i < fns.length; i++) {
      const v = stringOrUndefined(fns[i]!(object));
      values[i] = v;
      at = this.str(at, v);
      const pv =
        prevObject === undefined ? undefined : known ? prevKeys.values[i] : stringOrUndefined(fns[i]!(prevObject));
      at = this.str(at, pv);
    }
    this.objectValues = values;
    // The labels: the previous object's from what the mirror kept of it (prevKeys) when it is that object.
    const labels = md?.labels;
    const prevLabels = prevObject === undefined ? undefined : known ? prevKeys.labels : pmd?.labels;
    const labelsAt = at;
    at = this.labels(at, labels);
    let labelsExact = at !== labelsAt + 4 || readU32(this.scratch, labelsAt) !== ABSENT;
    if (labelsExact && sameLabels(labels, prevLabels)) {
      this.u32(at, SAME_LABELS);
      at += 4;
    } else {
      const prevAt = at;
      at = this.labels(at, prevLabels);
      labelsExact &&= at !== prevAt + 4 || readU32(this.scratch, prevAt) !== ABSENT;
    }
    if (labelsExact) this.u32(0, (exact ? FLAG_SKELETON_EXACT : 0) | FLAG_LABELS_EXACT);
    this.selLen = at;
  }

  /**
   * LABELS at `at`: the count, then the pairs; 0 for none; ABSENT (and
   * nothing else) when `labels` is not a map of strings. Returns the end.
   */
  private labels(at: number, labels: unknown): number {
    if (labels === undefined || labels === null) {
      this.u32(at, 0);
      return at + 4;
    }
    if (typeof labels !== 'object' || Array.isArray(labels)) {
      this.u32(at, ABSENT);
      return at + 4;
    }
    const map = labels as Record<string, unknown>;
    let n = 0;
    let end = at + 4;
    for (const key in map) {
      if (!Object.prototype.hasOwnProperty.call(map, key)) continue;
      const value = map[key];
      if (typeof value !== 'string') {
        this.u32(at, ABSENT);
        return at + 4;
      }
      end = this.str(this.str(end, key), value);
      n++;
    }
    this.u32(at, n);
    return end;
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
  return readSelectionSection(bytes, HEADER + readU32(bytes, 0), fieldCount);
}

/** Bytes of a payload's head that say where its SELECTION is (selectionStart, selectionLength). */
export const SELECTION_LOCATOR_BYTES = HEADER;

/** Where the SELECTION section starts in a payload, from its first SELECTION_LOCATOR_BYTES bytes. */
export function selectionStart(head: Uint8Array): number {
  return HEADER + readU32(head, 0);
}

/** The SELECTION section's length, from a payload's first SELECTION_LOCATOR_BYTES bytes. */
export function selectionLength(head: Uint8Array): number {
  return readU32(head, 4);
}

/**
 * A SELECTION section that starts at `bytes[at]` (readRingSelection's, or the section alone, copied out
 * of the ring with HistoryRingReader.readPayloadBytes: the sync worker reads no more of a payload).
 */
export function readSelectionSection(
  bytes: Uint8Array,
  at: number,
  fieldCount: number,
  interner?: SectionInterner,
): RingSelection {
  const flags = readU32(bytes, at);
  at += 4;
  const read = (): string | undefined => {
    const n = readU32(bytes, at);
    at += 4;
    if (n === ABSENT) return undefined;
    const out = interner !== undefined ? interner.string(bytes, at, n) : sectionString(bytes, at, n);
    at += n;
    return out;
  };
  const namespace = read();
  const name = read();
  const values: (string | undefined)[] = [];
  const prevValues: (string | undefined)[] = [];
  for (let i = 0; i < fieldCount; i++) {
    values.push(read());
    prevValues.push(read());
  }
  const labelsExact = (flags & FLAG_LABELS_EXACT) !== 0;
  let labels: Record<string, string> | undefined;
  let prevLabels: Record<string, string> | undefined;
  if (labelsExact) {
    const decodeLabels = (n: number): Record<string, string> => {
      // No prototype: a key such as __proto__ is a label like any other.
      const out = Object.create(null) as Record<string, string>;
      for (let i = 0; i < n; i++) {
        const key = read()!;
        out[key] = read()!;
      }
      return out;
    };
    const readLabels = (): Record<string, string> | undefined => {
      const n = readU32(bytes, at);
      at += 4;
      if (n === 0) return undefined;
      if (interner === undefined) return decodeLabels(n);
      // The pairs' bytes, found from their lengths alone: the interner decodes them only on a miss.
      const from = at;
      let end = from;
      for (let i = 0; i < 2 * n; i++) end += 4 + readU32(bytes, end);
      const map = interner.labels(bytes, from, end, () => decodeLabels(n));
      at = end;
      return map;
    };
    labels = readLabels();
    if (readU32(bytes, at) === SAME_LABELS) prevLabels = labels;
    else prevLabels = readLabels();
  }
  return {
    exact: (flags & FLAG_SKELETON_EXACT) !== 0,
    namespace,
    name,
    values,
    prevValues,
    labelsExact,
    labels,
    prevLabels,
  };
}

/** The UTF-8 string a SELECTION section holds at bytes[at, at + n). */
export function sectionString(bytes: Uint8Array, at: number, n: number): string {
  // Names, namespaces and indexed values are short and mostly ASCII: byte by byte, no decoder call.
  return (n <= SHORT_STRING ? asciiOrUndefined(bytes, at, n) : undefined) ?? utf8d.decode(bytes.subarray(at, at + n));
}

/** bytes[at, at + n) as a string when every byte is ASCII (no view, no decoder call), else undefined. */
function asciiOrUndefined(bytes: Uint8Array, at: number, n: number): string | undefined {
  let s = '';
  for (let i = 0; i < n; i++) {
    const c = bytes[at + i]!;
    if (c >= 0x80) return undefined;
    s += String.fromCharCode(c);
  }
  return s;
}

/** Whether two objects' labels have the same keys and values (both absent included; maps of strings only). */
function sameLabels(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null;
  if (b === undefined || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const key in x) {
    if (!Object.prototype.hasOwnProperty.call(x, key)) continue;
    if (!Object.prototype.hasOwnProperty.call(y, key) || x[key] !== y[key]) return false;
    n++;
  }
  for (const key in y) if (Object.prototype.hasOwnProperty.call(y, key)) n--;
  return n === 0;
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
