/**
 * WatchEvent: one event as a watcher receives it ({type, object}), shared by
 * every watcher that receives the same thing and never copied per watcher.
 *
 * Encode once: the wire forms are made on first use and cached on the event,
 * one per format, and each encoding is counted in
 * apiserver_watch_cache_event_encodings_total{format}.
 */
import { Packr } from 'msgpackr';
import type { KubeObject, WatchEventLike, WatchEventType } from '../core/types.js';
import type { PendingFrame } from './frame-source.js';
import { slotWordOf } from '../protocol/channel-variants.js';

/** Counts encodings per format (bound to the prom-client counter by the cache). */
export interface EncodingCounter {
  encoded(format: 'json' | 'msgpack'): void;
}

/**
 * The one msgpack encoder of every frame (streams and beta's ring). Plain
 * msgpack maps (no records); variableMapSize: each map with the smallest
 * header for its size (fixmap below 16 keys) rather than msgpackr's default
 * map16 patched in afterwards. Standard msgpack either way (any decoder
 * reads both); for the bench's 2 KiB pods ~4 % fewer bytes, and msgpackr
 * walks Object.keys instead of for-in with a hasOwnProperty call per key:
 * ~6 % fewer instructions outside the GC, about half of it given back to
 * the GC for the key arrays (counted with cachegrind, ~1.5 % net).
 */
export const msgpack = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true });

export class WatchEvent implements WatchEventLike {
  readonly type: WatchEventType;
  readonly object: KubeObject;
  /** The RV this event stands at in the watcher's stream (bookmarks: the bookmark RV). */
  readonly rv: number;
  /** Absolute history index of the event it delivers (-1: not from the history, e.g. bookmarks). */
  readonly ref: number;
  /** How it delivers that history event (selection.ts Delivery: 1 as is, 2 ADDED, 3 DELETED; 0 none). */
  readonly delivery: number;
  /** The channel slot word of (ref, delivery) for beta's live push, made once here (slotWordOf; -1: none). */
  readonly slotWord: number;
  #jsonLine: Buffer | undefined;
  #msgpack: Uint8Array | undefined;
  /** Where the ring mirror put this event's frame (beta), read before encoding again. */
  #frame: PendingFrame | undefined;

  constructor(type: WatchEventType, object: KubeObject, rv: number, ref = -1, delivery = 0) {
    this.type = type;
    this.object = object;
    this.rv = rv;
    this.ref = ref;
    this.delivery = delivery;
    this.slotWord = slotWordOf(ref, delivery);
  }

  /** `{"type":...,"object":...}\n`, encoded once and shared by every stream that sends it. */
  jsonLine(counter: EncodingCounter): Buffer {
    let line = this.#jsonLine;
    if (line === undefined) {
      line = Buffer.from(JSON.stringify({ type: this.type, object: this.object }) + '\n');
      this.#jsonLine = line;
      counter.encoded('json');
    }
    return line;
  }

  /**
   * The msgpack frame of `{type, object}`, encoded once: made here on first
   * use, or copied from where the ring mirror packed it (beta: its ring
   * payload, while that is in the ring). Encoded again, and counted, only if
   * asked for after the mirror's copy left the ring unkept.
   */
  msgpackFrame(counter: EncodingCounter): Uint8Array {
    let frame = this.#msgpack;
    if (frame === undefined) {
      frame = this.#frame?.read();
      if (frame === undefined) {
        frame = msgpack.pack({ type: this.type, object: this.object });
        counter.encoded('msgpack');
      }
      this.#msgpack = frame;
    }
    return frame;
  }

  /**
   * For the ring mirror: the frame a stream made already (the ring copies
   * it), else undefined: then the mirror packs it straight into its ring
   * payload (the event's one msgpack encoding), and `kept`, where it keeps
   * it, is where msgpackFrame reads it from then on.
   */
  ringFrame(kept: PendingFrame): Uint8Array | undefined {
    const made = this.#msgpack;
    if (made === undefined) this.#frame = kept;
    return made;
  }

  toJSON(): { type: WatchEventType; object: KubeObject } {
    return { type: this.type, object: this.object };
  }
}
