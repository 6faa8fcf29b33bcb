/**
 * Test fixtures shared by the ring tests and their worker scripts: a
 * deterministic event for every absolute index (its RV, size and content are
 * functions of the index), and a checker that says whether a decoded event is
 * exactly the one for that index. A torn or foreign payload fails the check.
 */
import type { ChangeType } from '../../src/core/types.js';
import { EventTypeCode, eventTypeCode } from '../../src/ring/ring-layout.js';
import type { RingEvent } from '../../src/ring/ring-reader.js';
import type { HistoryRing, PayloadSource } from '../../src/ring/ring-writer.js';

const TYPES: readonly ChangeType[] = ['ADDED', 'MODIFIED', 'DELETED'];

/** RV of the event at absolute index `abs` (strictly increasing, with gaps). */
export function rvOf(abs: number): number {
  return abs * 3 + 7;
}

/** Padding length: varies payload sizes from ~150 B to ~750 B. */
function padOf(abs: number): number {
  return (abs * 7919) % 600;
}

function typeOf(abs: number): ChangeType {
  return TYPES[abs % 3]!;
}

export function namespaceOf(abs: number): string {
  return `ns-${abs % 5}`;
}

/** The event stored at absolute index `abs`. */
export function makeEvent(abs: number): RingEvent {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: namespaceOf(abs), name: `pod-${abs}`, resourceVersion: String(rvOf(abs)) },
    seq: abs,
    pad: 'x'.repeat(padOf(abs)),
  };
  const type = typeOf(abs);
  if (type === 'MODIFIED') {
    return { type, object, prevObject: { metadata: { namespace: namespaceOf(abs), name: `pod-${abs}` }, seq: -abs } };
  }
  return { type, object };
}

/** null when `event` (decoded at `abs`, slot RV `rv`) is exactly makeEvent(abs); else what differs. */
export function checkEvent(abs: number, rv: number, event: RingEvent): string | null {
  if (rv !== rvOf(abs)) return `slot rv ${rv} != ${rvOf(abs)}`;
  if (event === null || typeof event !== 'object') return 'not an object';
  if (event.type !== typeOf(abs)) return `type ${String(event.type)}`;
  const o = event.object;
  if (o?.seq !== abs) return `seq ${String(o?.seq)} != ${abs}`;
  if (o.metadata.resourceVersion !== String(rvOf(abs))) return `object rv ${String(o.metadata.resourceVersion)}`;
  if (o.metadata.name !== `pod-${abs}`) return `name ${String(o.metadata.name)}`;
  if (typeof o.pad !== 'string' || o.pad.length !== padOf(abs)) return 'pad length';
  if (event.type === 'MODIFIED' && event.prevObject?.seq !== -abs) return 'prevObject';
  if (event.type !== 'MODIFIED' && event.prevObject !== undefined) return 'unexpected prevObject';
  return null;
}

/** Slot type code expected at `abs`. */
export function typeCodeOf(abs: number): number {
  return eventTypeCode(typeOf(abs));
}

// -- Previous objects by reference (ring-layout.ts order rule 5) ------------------------------
//
// Event `abs` is on key refKeyOf(abs); its previous object is the frame of the previous event on
// the same key (refPrevTable). A payload is [u32 abs][u32 F][frame: F bytes][pad][embedded prev
// frame, when the writer is not given a reference]. Frame bytes are a function of their event's
// index, so a torn, stale or foreign range fails refCheck.

/** The key of event `abs` among `keys` keys (a fixed pseudo-random sequence). */
function refKeyOf(abs: number, keys: number): number {
  return ((Math.imul(abs + 1, 2654435761) >>> 0) >>> 7) % keys;
}

/** prev[abs]: the previous event on the same key, or -1. */
export function refPrevTable(n: number, keys: number): Int32Array {
  const last = new Int32Array(keys).fill(-1);
  const prev = new Int32Array(n);
  for (let abs = 0; abs < n; abs++) {
    const k = refKeyOf(abs, keys);
    prev[abs] = last[k]!;
    last[k] = abs;
  }
  return prev;
}

/** Frame bytes of event `abs` (60 .. 1,259 bytes). */
export function refFrameLenOf(abs: number): number {
  return 60 + ((abs * 7919) % 1200);
}

function refFrameByte(abs: number, k: number): number {
  return (abs * 31 + k * 7 + (k >> 8)) & 255;
}

/** Where a reference payload's frame starts. */
export const REF_FRAME_START = 8;

/** The payload of event `abs`; with `embedPrev` (≥ 0) the frame of event embedPrev follows it. */
export function refPayload(abs: number, embedPrev: number): { bytes: Uint8Array; prevStart: number } {
  const f = refFrameLenOf(abs);
  const pad = abs % 5;
  const body = REF_FRAME_START + f + pad;
  const pf = embedPrev >= 0 ? refFrameLenOf(embedPrev) : 0;
  const bytes = new Uint8Array(body + pf);
  const dv = new DataView(bytes.buffer);
  dv.setUint32(0, abs, true);
  dv.setUint32(4, f, true);
  for (let k = 0; k < f; k++) bytes[REF_FRAME_START + k] = refFrameByte(abs, k);
  for (let k = 0; k < pf; k++) bytes[body + k] = refFrameByte(embedPrev, k);
  return { bytes, prevStart: body };
}

/** null when a read record of `abs` holds its payload and (prev ≥ 0) the frame of event `prev`. */
export function refCheck(
  abs: number,
  prev: number,
  rec: { payload: Uint8Array; length: number; prevStart: number; prevLength: number },
): string | null {
  const b = rec.payload;
  const dv = new DataView(b.buffer, b.byteOffset, rec.length);
  if (rec.length < REF_FRAME_START || dv.getUint32(0, true) !== abs) return `payload of ${abs}: wrong index`;
  const f = refFrameLenOf(abs);
  if (dv.getUint32(4, true) !== f) return `payload of ${abs}: frame length`;
  for (let k = 0; k < f; k++) if (b[REF_FRAME_START + k] !== refFrameByte(abs, k)) return `frame of ${abs}: byte ${k}`;
  if (prev < 0) return rec.prevLength === 0 ? null : `${abs}: unexpected previous object`;
  const pf = refFrameLenOf(prev);
  if (rec.prevLength !== pf) return `${abs}: previous object length ${rec.prevLength} != ${pf}`;
  if (rec.prevStart < 0) return `${abs}: previous object not read`;
  for (let k = 0; k < pf; k++) {
    if (b[rec.prevStart + k] !== refFrameByte(prev, k)) return `${abs}: previous object (event ${prev}) byte ${k}`;
  }
  return null;
}

/**
 * A payload packed in place that did not fit its first reservation (as the
 * mirror's in-place pack when a frame outgrows its room): the first writeTo
 * scribbles over the whole room and asks again; then byteLength is exact.
 */
class SpillingSource implements PayloadSource {
  private spilled = false;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly reservation: number,
  ) {}
  get byteLength(): number {
    return this.spilled ? this.bytes.length : this.reservation;
  }
  writeTo(target: Uint8Array, offset: number): number {
    if (!this.spilled) {
      target.fill(0xee, offset, offset + this.reservation);
      this.spilled = true;
      return -1;
    }
    target.set(this.bytes, offset);
    return this.bytes.length;
  }
}

/**
 * Append event `abs` (previous event `prev`, or -1) as the beta mirror does: its previous object is
 * a reference to the previous event's frame while that event is held (unless `copy`), else a copy
 * embedded in the payload. With `spill`, the payload is written as an in-place pack that did not
 * fit its room (half its length) at first, and a copied previous frame goes as meta.prevBytes
 * (the writer puts it after the payload). Returns whether it referenced.
 */
export function appendRef(ring: HistoryRing, abs: number, prev: number, copy = false, spill = false): boolean {
  const ref = prev >= 0 && !copy && prev >= ring.oldestIndex;
  const embed = prev >= 0 && !ref && !spill;
  const { bytes, prevStart } = refPayload(abs, embed ? prev : -1);
  const meta = {
    rv: rvOf(abs),
    type: prev >= 0 ? EventTypeCode.MODIFIED : EventTypeCode.ADDED,
    nsHash: 1,
    nameHash: abs,
    triggerHash: 0,
    prevTriggerHash: 0,
    hasPrev: prev >= 0,
    prevLength: prev >= 0 ? refFrameLenOf(prev) : 0,
    prevStart: ref ? REF_FRAME_START : prevStart,
    ...(ref ? { prevAbs: prev } : {}),
  };
  let got: number;
  if (spill) {
    const prevBytes =
      prev >= 0 && !ref
        ? refPayload(prev, -1).bytes.subarray(REF_FRAME_START, REF_FRAME_START + refFrameLenOf(prev))
        : undefined;
    got = ring.appendPayload({ ...meta, prevBytes }, new SpillingSource(bytes, Math.max(1, bytes.length >> 1)));
  } else got = ring.append(meta, bytes);
  if (got !== abs) throw new Error(`appended at ${got}, not ${abs}`);
  return ref;
}
