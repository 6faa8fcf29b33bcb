/**
 * Test clients for the watch server, over real sockets:
 * - `request()`: one HTTP/1.1 request (node:http, or https with a test CA), whole body.
 * - `RawWatch`: a raw TCP HTTP/1.1 client (node:net) that parses the status
 *   line, headers and the chunked body itself, so a test sees the exact wire
 *   (chunked framing, the terminating chunk = a clean end) and can stop
 *   reading (`pause()`: the socket is no longer read, the kernel buffers fill).
 * - `H2Watch`: an HTTP/2 stream (node:http2, h2c prior knowledge or TLS) with
 *   the same interface; `pause()` stops consuming, so with a small
 *   `initialWindowSize` the server's stream window closes.
 * Both decode JSON lines (or length-prefixed msgpack frames) into events.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { Unpackr } from 'msgpackr';

export interface WireEvent {
  type: string;
  object: {
    kind?: string;
    apiVersion?: string;
    metadata: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
    code?: number;
    reason?: string;
    [k: string]: unknown;
  };
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | object;
  /** CA for https URLs. */
  ca?: string | Buffer;
}

/** One request; resolves with the whole response. */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResult> {
  const u = new URL(url);
  let body: Buffer | undefined;
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.body !== undefined) {
    body =
      typeof options.body === 'string' || Buffer.isBuffer(options.body)
        ? Buffer.from(options.body)
        : Buffer.from(JSON.stringify(options.body));
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(body.length);
  }
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(u, { method: options.method ?? 'GET', headers, ca: options.ca, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const b = Buffer.concat(chunks);
        const text = b.toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: b,
          text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Poll until `fn` returns true (generous failure timeout, not a timing assertion). */
export async function waitUntil(fn: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Splits a byte stream into events (JSON lines or 4-byte length-prefixed msgpack frames). */
export class EventDecoder {
  readonly events: WireEvent[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private readonly format: 'json' | 'msgpack';
  private readonly unpackr = new Unpackr({ useRecords: false });
  /** Called after new events were decoded. */
  onEvents: (() => void) | undefined;

  constructor(format: 'json' | 'msgpack' = 'json') {
    this.format = format;
  }

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const before = this.events.length;
    if (this.format === 'json') {
      let nl: number;
      while ((nl = this.buf.indexOf(10)) >= 0) {
        this.events.push(JSON.parse(this.buf.subarray(0, nl).toString('utf8')) as WireEvent);
        this.buf = this.buf.subarray(nl + 1);
      }
    } else {
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readUInt32BE(0)) {
        const len = this.buf.readUInt32BE(0);
        this.events.push(this.unpackr.unpack(this.buf.subarray(4, 4 + len)) as WireEvent);
        this.buf = this.buf.subarray(4 + len);
      }
    }
    if (this.events.length > before) this.onEvents?.();
  }

  /** Bytes received that do not form a whole event yet. */
  get leftover(): number {
    return this.buf.length;
  }
}

/** Common surface of the watch clients. */
export abstract class WatchClient {
  readonly decoder: EventDecoder;
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  /** True once the response ended cleanly (HTTP/1.1: the terminating chunk; HTTP/2: END_STREAM). */
  endedCleanly = false;
  /** True once the connection or stream closed (cleanly or not). */
  closed = false;
  protected readonly waiters = new Set<() => void>();
  readonly response: Promise<void>;
  protected resolveResponse!: () => void;

  constructor(format: 'json' | 'msgpack') {
    this.decoder = new EventDecoder(format);
    this.decoder.onEvents = () => this.notify();
    this.response = new Promise((r) => (this.resolveResponse = r));
  }

  get events(): WireEvent[] {
    return this.decoder.events;
  }

  protected notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Wait until `pred` holds (checked on every decoded event and on close). */
  waitFor(pred: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (pred()) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what} (have ${this.events.length} events, closed=${this.closed})`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Wait for the stream to close. */
  waitClosed(timeoutMs = 30_000): Promise<void> {
    return this.waitFor(() => this.closed, 'the stream to close', timeoutMs);
  }

  abstract pause(): void;
  abstract resume(): void;
  abstract close(): void;
}

/** HTTP/1.1 watch over a raw TCP socket, parsing the chunked body itself. */
export class RawWatch extends WatchClient {
  readonly socket: net.Socket;
  private raw: Buffer = Buffer.alloc(0);
  private state: 'head' | 'size' | 'data' | 'crlf' | 'done' | 'plain' = 'head';
  private remaining = 0;

  constructor(port: number, path: string, headers: Record<string, string> = {}, format: 'json' | 'msgpack' = 'json') {
    super(format);
    this.socket = net.connect(port, '127.0.0.1');
    const lines = [
      `GET ${path} HTTP/1.1`,
      'Host: 127.0.0.1',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      '',
      '',
    ];
    this.socket.write(lines.join('\r\n'));
    this.socket.on('data', (d: Buffer) => this.onData(d));
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      this.closed = true;
      this.resolveResponse();
      this.notify();
    });
  }

  private onData(d: Buffer): void {
    this.raw = this.raw.length === 0 ? d : Buffer.concat([this.raw, d]);
    for (;;) {
      if (this.state === 'head') {
        const end = this.raw.indexOf('\r\n\r\n');
        if (end < 0) return;
        const [statusLine, ...hs] = this.raw.subarray(0, end).toString('latin1').split('\r\n');
        this.status = Number(statusLine!.split(' ')[1]);
        for (const h of hs) {
          const i = h.indexOf(':');
          this.headers[h.slice(0, i).toLowerCase()] = h.slice(i + 1).trim();
        }
        this.raw = this.raw.subarray(end + 4);
        this.state = this.headers['transfer-encoding'] === 'chunked' ? 'size' : 'plain';
        this.resolveResponse();
        this.notify();
      } else if (this.state === 'plain') {
        if (this.raw.length > 0) this.decoder.push(this.raw);
        this.raw = Buffer.alloc(0);
        return;
      } else if (this.state === 'size') {
        const end = this.raw.indexOf('\r\n');
        if (end < 0) return;
        this.remaining = parseInt(this.raw.subarray(0, end).toString('latin1').split(';')[0]!, 16);
        this.raw = this.raw.subarray(end + 2);
        if (this.remaining === 0) {
          this.state = 'done';
          this.endedCleanly = true;
          this.notify();
          return;
        }
        this.state = 'data';
      } else if (this.state === 'data') {
        if (this.raw.length === 0) return;
        const take = Math.min(this.remaining, this.raw.length);
        this.decoder.push(this.raw.subarray(0, take));
        this.raw = this.raw.subarray(take);
        this.remaining -= take;
        if (this.remaining === 0) this.state = 'crlf';
      } else if (this.state === 'crlf') {
        if (this.raw.length < 2) return;
        this.raw = this.raw.subarray(2);
        this.state = 'size';
      } else {
        return;
      }
    }
  }

  pause(): void {
    this.socket.pause();
  }
  resume(): void {
    this.socket.resume();
  }
  close(): void {
    this.socket.destroy();
  }
}

export interface H2Options {
  /** SETTINGS_INITIAL_WINDOW_SIZE the client advertises (small = the server's stream window closes fast). */
  initialWindowSize?: number;
  headers?: Record<string, string>;
  format?: 'json' | 'msgpack';
  ca?: string | Buffer;
  /** An existing session to open the stream on. */
  session?: http2.ClientHttp2Session;
}

/** A watch on an HTTP/2 stream (h2c with prior knowledge for http:// URLs, TLS for https://). */
export class H2Watch extends WatchClient {
  readonly session: http2.ClientHttp2Session;
  readonly stream: http2.ClientHttp2Stream;
  private readonly ownSession: boolean;

  constructor(origin: string, path: string, options: H2Options = {}) {
    super(options.format ?? 'json');
    this.ownSession = options.session === undefined;
    this.session =
      options.session ??
      http2.connect(origin, {
        ca: options.ca,
        settings: options.initialWindowSize === undefined ? {} : { initialWindowSize: options.initialWindowSize },
      });
    this.session.on('error', () => {});
    this.stream = this.session.request({ ':path': path, ...(options.headers ?? {}) });
    this.stream.on('response', (h) => {
      this.status = Number(h[':status']);
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':')) this.headers[k] = v;
      this.resolveResponse();
      this.notify();
    });
    this.stream.on('data', (d: Buffer) => this.decoder.push(d));
    this.stream.on('end', () => {
      this.endedCleanly = true;
      this.notify();
    });
    this.stream.on('error', () => {});
    this.stream.on('close', () => {
      this.closed = true;
      this.resolveResponse();
      this.notify();
      if (this.ownSession) this.session.close();
    });
  }

  pause(): void {
    this.stream.pause();
  }
  resume(): void {
    this.stream.resume();
  }
  close(): void {
    this.stream.close();
    if (this.ownSession) this.session.close();
  }
}
