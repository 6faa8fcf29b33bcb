/**
 * FrameSource: an object's msgpack wire frame `{type, object}`, either made
 * already (the bytes) or to be made later (a PendingFrame). Beta mirrors an
 * event into its shared ring after the live path has delivered it
 * (src/beta/deferred-mirror.ts), so the frame that carries an object may not
 * exist yet when the object state takes the object; the state keeps the
 * pending frame and reads its bytes once they are made. Encode once: a
 * pending frame is made exactly once, by the mirror.
 */
import type { KubeObject } from '../core/types.js';

export class PendingFrame {
  /** Set once the frame is made (undefined until then, and for good if the mirror stopped). */
  bytes: Uint8Array | undefined = undefined;
  /** An object no event has carried yet (one from the initial list): the mirror encodes it; else its event's frame. */
  readonly object: KubeObject | undefined;

  constructor(object?: KubeObject) {
    this.object = object;
  }
}

export type FrameSource = Uint8Array | PendingFrame;
