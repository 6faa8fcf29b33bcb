/**
 * FrameSource: an object's msgpack wire frame `{type, object}`, either made
 * already (the bytes) or held as a PendingFrame. Beta mirrors an event into
 * its shared ring after the live path has delivered it
 * (src/beta/deferred-mirror.ts), so the frame that carries an object may not
 * exist yet when the object state takes the object; the state keeps the
 * pending frame and the mirror resolves it later. Encode once: a frame is
 * made exactly once, by the mirror.
 *
 * An event's frame lives in the ring only (issue 13, the lean mirror): the
 * mirror packs it straight into its ring payload and the PendingFrame names
 * the ring index of that payload (`carrier`), so no event keeps a copy of its
 * own. The next event on the same object references that payload as its
 * previous object. Bytes of its own a PendingFrame gets only when they are
 * needed after its carrier leaves the ring (the mirror copies them out then,
 * unless a later event already took the frame), or for an object no event has
 * carried (one from the initial list: encoded when first needed).
 */
import type { KubeObject } from '../core/types.js';

/** A frame's bytes as bytes[start, end): a view of a larger buffer, without making one. */
export interface FrameBytes {
  bytes: Uint8Array;
  start: number;
  end: number;
}

/** Where a carried frame's bytes are while its carrier is in the ring (the mirror). */
export interface FrameStore {
  /** A copy of the frame carried by ring event `abs`, or undefined once that event left the ring. */
  copyFrame(abs: number): Uint8Array | undefined;
}

/**
 * What the ring mirror worked out about a frame's object when it mirrored
 * the event that carries it (its slot hashes and selection values): the next
 * event on the same object takes them for its previous object instead of
 * reading that object again (by then out of the CPU caches) and calling the
 * indexers on it. Valid for `object` only (checked by identity).
 */
export interface ObjectKeys {
  /** The object these keys are of. */
  readonly object: KubeObject;
  /** Its metadata.namespace and metadata.name as they are (the selection section's exactness check). */
  readonly namespace: unknown;
  readonly name: unknown;
  /** The event's namespace and name strings and their hash32 (the slot's NS_HASH and NAME_HASH). */
  readonly nsKey: string;
  readonly nsHash: number;
  readonly nameKey: string;
  readonly nameHash: number;
  /** The object's trigger value ('' none) and its TRIGGER_HASH. */
  readonly trigger: string;
  readonly triggerHash: number;
  /** Its indexer values, in the indexers' order (the selection section's values). */
  readonly values: readonly (string | undefined)[];
  /** Its metadata.labels as they are (the selection section's PREV_LABELS for the next event on it). */
  readonly labels: unknown;
}

export class PendingFrame {
  /** The frame's own bytes: an initial-list object's once encoded, or copied out of the ring when its carrier left. */
  bytes: Uint8Array | undefined = undefined;
  /** An object no event has carried yet (one from the initial list): the mirror encodes it; else its event's frame. */
  readonly object: KubeObject | undefined;
  /** Ring index of the payload whose FRAME holds these bytes (-1: none, e.g. not mirrored yet or the mirror stopped). */
  carrier = -1;
  /** Bytes of the frame (valid once carrier ≥ 0 or bytes is set). */
  length = 0;
  /** A later event took this frame as its previous object's (so nobody needs it once its carrier leaves). */
  taken = false;
  /** The ring the carrier is in. */
  store: FrameStore | undefined = undefined;
  /** The mirror's keys of the object (until the next event on it takes them). */
  keys: ObjectKeys | undefined = undefined;

  constructor(object?: KubeObject) {
    this.object = object;
  }

  /** The frame's bytes now: its own, or a copy out of the ring while its carrier is held (never an encode). */
  read(): Uint8Array | undefined {
    if (this.bytes !== undefined) return this.bytes;
    return this.carrier >= 0 ? this.store?.copyFrame(this.carrier) : undefined;
  }
}

export type FrameSource = Uint8Array | PendingFrame;
