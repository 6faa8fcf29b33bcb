/**
 * The request and response shapes the handlers use. HTTP/1.1 (node:http) and
 * HTTP/2 (node:http2 compatibility API) objects both satisfy them, so every
 * handler is written once for both protocols.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/** What a handler reads from a request (IncomingMessage or Http2ServerRequest). */
export interface RequestLike extends Readable {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** 1 for HTTP/1.x, 2 for HTTP/2. */
  readonly httpVersionMajor: number;
}

/** What a handler writes to (ServerResponse or Http2ServerResponse). */
export interface ResponseLike {
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders): unknown;
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  /** False when the transport is backed up: wait for 'drain'. */
  write(chunk: Uint8Array | string): boolean;
  end(chunk?: Uint8Array | string): unknown;
  flushHeaders(): void;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  on(event: 'drain' | 'close' | 'finish', listener: () => void): unknown;
  once(event: 'drain' | 'close' | 'finish', listener: () => void): unknown;
  removeListener(event: 'drain' | 'close' | 'finish', listener: () => void): unknown;
}
