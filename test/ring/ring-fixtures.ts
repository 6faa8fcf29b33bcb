/**
 * Test fixtures shared by the ring tests and their worker scripts: a
 * deterministic event for every absolute index (its RV, size and content are
 * functions of the index), and a checker that says whether a decoded event is
 * exactly the one for that index. A torn or foreign payload fails the check.
 */
import type { ChangeType } from '../../src/core/types.js';
import { eventTypeCode } from '../../src/ring/ring-layout.js';
import type { RingEvent } from '../../src/ring/ring-reader.js';

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
