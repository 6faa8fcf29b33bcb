/**
 * HTTP/1.1 and h2c (HTTP/2 with prior knowledge) on one plain TCP port.
 *
 * A net.Server accepts the connection and reads until the first bytes either
 * equal the HTTP/2 client preface `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (24
 * bytes; it may arrive split over several reads) or stop matching it (any
 * HTTP/1.x request line differs from it by the second byte at the latest).
 * Then the socket is handed over with `emit('connection', socket)`:
 * - HTTP/2: the bytes read are `unshift`ed back first; node:http2 feeds a
 *   socket's already-buffered bytes to the session before it starts reading.
 * - HTTP/1.1: the http.Server's parser reads the socket handle directly, so
 *   bytes pushed back into the JS stream would be lost; instead they are
 *   replayed with `socket.emit('data', bytes)` synchronously right after the
 *   hand-over, before any further read can happen (pipelined requests and
 *   bodies split over reads keep their order).
 * A connection that sends nothing within `sniffTimeoutMs` is closed.
 */
import type { Server as HttpServer } from 'node:http';
import type { Http2Server } from 'node:http2';
import type { Socket } from 'node:net';

export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** 'h2' | 'http1' once decidable from the first bytes, else undefined (need more). */
export function classifyPreface(head: Buffer): 'h2' | 'http1' | undefined {
  const n = Math.min(head.length, HTTP2_PREFACE.length);
  if (!head.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n))) return 'http1';
  return head.length >= HTTP2_PREFACE.length ? 'h2' : undefined;
}

export class ProtocolSniffer {
  private readonly http1: HttpServer;
  private readonly http2: Http2Server;
  private readonly sniffTimeoutMs: number;

  constructor(http1: HttpServer, http2: Http2Server, sniffTimeoutMs = 10_000) {
    this.http1 = http1;
    this.http2 = http2;
    this.sniffTimeoutMs = sniffTimeoutMs;
  }

  /** Take a freshly accepted connection. */
  accept(socket: Socket): void {
    let head: Buffer = Buffer.alloc(0);
    const cleanup = (): void => {
      clearTimeout(timer);
      socket.removeListener('data', onData);
      socket.removeListener('error', onError);
      socket.removeListener('end', onEnd);
    };
    const onData = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const kind = classifyPreface(head);
      if (kind === undefined) return;
      cleanup();
      if (kind === 'h2') {
        socket.pause();
        socket.unshift(head);
        this.http2.emit('connection', socket);
      } else {
        this.http1.emit('connection', socket);
        socket.emit('data', head);
      }
    };
    const onError = (): void => {
      cleanup();
      socket.destroy();
    };
    const onEnd = (): void => {
      cleanup();
      socket.destroy();
    };
    const timer = setTimeout(() => {
      cleanup();
      socket.destroy();
    }, this.sniffTimeoutMs);
    timer.unref();
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('end', onEnd);
  }
}
