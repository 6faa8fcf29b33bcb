/**
 * Ring payload: what one history-ring slot's payload bytes hold, written by
 * the main thread's mirror (src/beta/ring-mirror.ts) and read by the sync
 * worker (src/beta/worker-pass-host.ts) and remote watch consumers
 * (src/beta/watch-port.ts). The one module both sides import.
 *
 * A payload is msgpack values back to back:
 *
 *   order  value                       present            meaning
 *   -----  --------------------------  -----------------  ------------------------------------------
 *   1      {type, object}              always             the event's wire frame (the same bytes msgpack streams send)
 *   2      RingSelectionData           always             hasPrev; indexer values iv / piv (functions cannot cross threads)
 *   3      {type, object}              when hasPrev       the frame that carried the previous object (reused bytes)
 */
import type { Unpackr } from 'msgpackr';
import type { ChangeType, KubeObject } from '../core/types.js';
import { msgpack } from '../wire/watch-event.js';

/** The payload's second value: what selection needs besides the objects. */
export interface RingSelectionData {
  hasPrev?: boolean;
  /** Indexer values of the object and of the previous object. */
  iv?: Record<string, string>;
  piv?: Record<string, string>;
}

export interface RingFrame {
  type: ChangeType;
  object: KubeObject;
}

/** The payload of one event: its frame, its selection data, the previous object's frame. */
export function encodeRingPayload(
  frame: Uint8Array,
  sel: RingSelectionData,
  prevFrame: Uint8Array | undefined,
): Uint8Array {
  const selBytes = msgpack.pack(sel);
  const bytes = new Uint8Array(frame.length + selBytes.length + (prevFrame?.length ?? 0));
  bytes.set(frame, 0);
  bytes.set(selBytes, frame.length);
  if (prevFrame !== undefined) bytes.set(prevFrame, frame.length + selBytes.length);
  return bytes;
}

/** Decode a ring payload: the event's frame, its selection data, and the previous object. */
export function decodeRingPayload(
  unpackr: Unpackr,
  bytes: Uint8Array,
): { frame: RingFrame; sel: RingSelectionData; prevObject: KubeObject | undefined } {
  const values = unpackr.unpackMultiple(bytes) as unknown[];
  const frame = values[0] as RingFrame;
  const sel = (values[1] ?? {}) as RingSelectionData;
  const prev = sel.hasPrev === true ? (values[2] as RingFrame | undefined) : undefined;
  return { frame, sel, prevObject: prev?.object };
}
