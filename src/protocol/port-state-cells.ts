/**
 * Watch-port state cells: how the end of a watch consumed in another thread
 * (src/beta/watch-port.ts, `cache.watchPort`) reaches that thread when the
 * server side does not own the watcher's channel (the sync worker does), so
 * it cannot close it. One 24-byte SharedArrayBuffer per port:
 *
 * | word                | type    | written by                                   | meaning                                   |
 * |---------------------|---------|----------------------------------------------|-------------------------------------------|
 * | 0 `PORT_ENDED`      | Int32   | the server side, Atomics, after the numbers  | 0 open, 1 ended, 2 expired (410)          |
 * | 1 `PORT_POSITION`   | Float64 | the server side, before ENDED or the close   | the 410's resource version                |
 * | 2 `PORT_OLDEST`     | Float64 | the server side, before ENDED or the close   | the 410's oldest servable RV − 1          |
 *
 * When the server side owns the channel it closes it with a Terminal code
 * instead (src/protocol/channel-variants.ts); an EXPIRED close carries the
 * same two numbers here. The consumer reads the numbers only after it saw
 * ENDED = 2 or the EXPIRED close (both Atomics), so they are never torn.
 */

const PORT_ENDED = 0;
const PORT_POSITION = 1;
const PORT_OLDEST = 2;
const PORT_STATE_BYTES = 24;

/** Values of the ENDED word. */
export const PortEnded = { OPEN: 0, ENDED: 1, EXPIRED: 2 } as const;
export type PortEnded = (typeof PortEnded)[keyof typeof PortEnded];

/** A new port's state cells (all open). */
export function newPortState(): SharedArrayBuffer {
  return new SharedArrayBuffer(PORT_STATE_BYTES);
}

/** One port's state cells, either side. */
export class PortStateCells {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.i32 = new Int32Array(buffer, 0, 1);
    this.f64 = new Float64Array(buffer, 0, 3);
  }

  /** Server side: the 410's numbers, written before the EXPIRED close or the ENDED word. */
  recordExpiry(position: number, oldestMinus1: number): void {
    this.f64[PORT_POSITION] = position;
    this.f64[PORT_OLDEST] = oldestMinus1;
  }

  /** Server side, when it does not own the channel: raise ENDED (release: the numbers are stored before it). */
  raiseEnded(expired: boolean): void {
    Atomics.store(this.i32, PORT_ENDED, expired ? PortEnded.EXPIRED : PortEnded.ENDED);
  }

  /** Consumer: the ENDED word (acquire). */
  get ended(): PortEnded {
    return Atomics.load(this.i32, PORT_ENDED) as PortEnded;
  }

  /** Consumer, after ENDED = EXPIRED or an EXPIRED close: the 410's resource version. */
  get position(): number {
    return this.f64[PORT_POSITION]!;
  }

  /** Consumer, likewise: the 410's oldest servable RV − 1. */
  get oldestMinus1(): number {
    return this.f64[PORT_OLDEST]!;
  }
}
