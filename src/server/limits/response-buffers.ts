/**
 * Bounded response buffering: every byte a response writes is counted
 * against its connection (an HTTP/1.1 socket or an HTTP/2 session) and
 * against the whole server until the transport has taken it (the write's
 * callback). A write that would take a connection past `perConnectionBytes`
 * or the server past `perServerBytes` is not made: that response's stream is
 * ended at once (HTTP/2: RST_STREAM ENHANCE_YOUR_CALM; HTTP/1.1: the socket
 * is destroyed) and the overflow is counted by scope. So a client that
 * grants no flow-control window or never reads costs at most its
 * connection's budget, and all such clients together at most the server's.
 *
 * Watch streams stay within one batch each (watch-stream.ts waits for
 * 'drain'), so a merely slow watcher is never ended here unless its
 * connection carries very many of them; lists and gets written at once to a
 * client that never takes them are what the budget stops.
 */
import { constants } from 'node:http2';
import type { ResponseLike } from '../http-types.js';

const { NGHTTP2_ENHANCE_YOUR_CALM } = constants;

export interface BufferLimits {
  /** Bytes buffered per connection before a response on it is ended (default 32 MiB). */
  readonly perConnectionBytes: number;
  /** Bytes buffered by the whole server before the writing response is ended (default 256 MiB). */
  readonly perServerBytes: number;
}

const DEFAULT_BUFFER_LIMITS: BufferLimits = Object.freeze({
  perConnectionBytes: 32 * 1024 * 1024,
  perServerBytes: 256 * 1024 * 1024,
});

export type OverflowScope = 'connection' | 'server';

interface Counter {
  bytes: number;
}

type WriteCallback = (err?: Error | null) => void;
type Write = (chunk: Uint8Array | string, ...rest: unknown[]) => boolean;
type End = (...args: unknown[]) => unknown;

function byteLength(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.length;
  return 0;
}

export class ResponseBuffers {
  private readonly limits: BufferLimits;
  private readonly connections = new WeakMap<object, Counter>();
  /** Bytes written and not yet taken by the transport, server-wide. */
  total = 0;
  /** Hears each overflow (metrics, logs). */
  onOverflow: ((scope: OverflowScope) => void) | undefined;

  constructor(limits: Partial<BufferLimits> = {}) {
    this.limits = {
      perConnectionBytes: limits.perConnectionBytes ?? DEFAULT_BUFFER_LIMITS.perConnectionBytes,
      perServerBytes: limits.perServerBytes ?? DEFAULT_BUFFER_LIMITS.perServerBytes,
    };
    for (const [k, v] of Object.entries(this.limits))
      if (!(Number.isSafeInteger(v) && v >= 1)) throw new RangeError(`${k} must be a positive integer`);
  }

  /** Count every write of `res` against `connection` (its socket or HTTP/2 session) and the server. */
  guard(res: ResponseLike, connection: object): void {
    let conn = this.connections.get(connection);
    if (conn === undefined) {
      conn = { bytes: 0 };
      this.connections.set(connection, conn);
    }
    const c = conn;
    let outstanding = 0;
    let over = false; // ended for overflow: no further writes
    let released = false; // its outstanding bytes were given back
    const release = (): void => {
      if (released) return;
      released = true;
      c.bytes -= outstanding;
      this.total -= outstanding;
      outstanding = 0;
    };
    const account = (n: number): WriteCallback | 'over' | undefined => {
      if (n === 0) return undefined;
      if (c.bytes + n > this.limits.perConnectionBytes || this.total + n > this.limits.perServerBytes) {
        over = true;
        const scope: OverflowScope = c.bytes + n > this.limits.perConnectionBytes ? 'connection' : 'server';
        release();
        this.overflow(res, scope);
        return 'over';
      }
      outstanding += n;
      c.bytes += n;
      this.total += n;
      let done = false;
      return () => {
        if (done || released) return;
        done = true;
        outstanding -= n;
        c.bytes -= n;
        this.total -= n;
      };
    };
    // Whatever the transport never took is no longer held once the response is gone.
    res.once('close', release);
    const target = res as unknown as { write: Write; end: End };
    const write: Write = target.write.bind(res);
    const end: End = target.end.bind(res);
    target.write = (chunk: Uint8Array | string, ...rest: unknown[]): boolean => {
      if (over) return false;
      const cb = account(byteLength(chunk));
      if (cb === 'over') return false;
      return write(chunk, ...withCallback(rest, cb));
    };
    target.end = (...args: unknown[]): unknown => {
      if (over) return res;
      const chunk = typeof args[0] === 'function' ? undefined : args[0];
      const n = byteLength(chunk);
      if (n === 0) return end(...args);
      const cb = account(n);
      if (cb === 'over' || cb === undefined) return res;
      // end(chunk) = write(chunk) then end(): the write's callback tells when the transport took it.
      write(chunk as Uint8Array | string, cb);
      return end(...args.slice(1));
    };
  }

  private overflow(res: ResponseLike, scope: OverflowScope): void {
    this.onOverflow?.(scope);
    const stream = (res as { stream?: { close(code?: number): void; destroyed: boolean } }).stream;
    if (stream !== undefined) {
      if (!stream.destroyed) stream.close(NGHTTP2_ENHANCE_YOUR_CALM);
    } else {
      (res as unknown as { destroy(): void }).destroy();
    }
  }
}

/** The rest arguments of write(chunk, [encoding], [cb]) with our callback chained in. */
function withCallback(rest: unknown[], cb: WriteCallback | undefined): unknown[] {
  if (cb === undefined) return rest;
  const last = rest[rest.length - 1];
  if (typeof last === 'function') {
    const user = last as WriteCallback;
    return [...rest.slice(0, -1), (err?: Error | null) => (cb(err), user(err))];
  }
  return [...rest, cb];
}
