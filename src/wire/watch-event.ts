/**
 * WatchEvent: one event as a watcher receives it ({type, object}), shared by
 * every watcher that receives the same thing and never copied per watcher.
 *
 * Encode once: the wire forms are made on first use and cached on the event,
 * one per format, and each encoding is counted in
 * apiserver_watch_cache_event_encodings_total{format}.
 */
import { Packr, RESET_BUFFER_MODE, REUSE_BUFFER_MODE } from 'msgpackr';
import type { KubeObject, WatchEventLike, WatchEventType } from '../core/types.js';
import type { FrameBytes, PendingFrame } from './frame-source.js';

/** Counts encodings per format (bound to the prom-client counter by the cache). */
export interface EncodingCounter {
  encoded(format: 'json' | 'msgpack'): void;
}

export const msgpack = new Packr({ useRecords: false, moreTypes: false });

/** `packTransient`'s answer: valid only until the next msgpack pack on this thread (one reused object). */
const transient: FrameBytes = { bytes: new Uint8Array(0), start: 0, end: 0 };
/**
 * Pack into msgpackr's current buffer without taking the bytes: no buffer, no
 * view allocated (REUSE_BUFFER_MODE returns the buffer itself), and the next
 * pack writes over them (RESET_BUFFER_MODE). Packs made without these flags
 * keep their bytes: theirs end before where this one starts.
 */
const TRANSIENT = REUSE_BUFFER_MODE | RESET_BUFFER_MODE;

export class WatchEvent implements WatchEventLike {
  readonly type: WatchEventType;
  readonly object: KubeObject;
  /** The RV this event stands at in the watcher's stream (bookmarks: the bookmark RV). */
  readonly rv: number;
  /** Absolute history index of the event it delivers (-1: not from the history, e.g. bookmarks). */
  readonly ref: number;
  /** How it delivers that history event (selection.ts Delivery: 1 as is, 2 ADDED, 3 DELETED; 0 none). */
  readonly delivery: number;
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
   * The frame for the ring mirror to copy into its payload at once: the
   * frame a stream made already, else packed now (the event's one msgpack
   * encoding, counted) into msgpackr's reused buffer, valid until the next
   * pack. `kept` is where the mirror keeps it from now on (msgpackFrame reads
   * it there).
   */
  packTransient(counter: EncodingCounter, kept: PendingFrame): FrameBytes {
    const t = transient;
    const made = this.#msgpack;
    if (made !== undefined) {
      t.bytes = made;
      t.start = 0;
      t.end = made.length;
      return t;
    }
    const out = msgpack.pack({ type: this.type, object: this.object }, TRANSIENT) as unknown as Uint8Array & {
      start: number;
      end: number;
    };
    counter.encoded('msgpack');
    this.#frame = kept;
    t.bytes = out;
    t.start = out.start;
    t.end = out.end;
    return t;
  }

  toJSON(): { type: WatchEventType; object: KubeObject } {
    return { type: this.type, object: this.object };
  }
}
