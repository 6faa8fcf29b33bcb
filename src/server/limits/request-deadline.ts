/**
 * The request timeout of non-watch requests (limits/timeouts.ts): every
 * request gets a deadline when it arrives; the router exempts watches (long
 * running) once it knows one is asked for. At the deadline a request not yet
 * answered gets a 504 Timeout Status, and then its HTTP/1.1 connection
 * (`Connection: close`) or its HTTP/2 stream is closed, so a body trickled
 * in byte by byte cannot hold the server's resources. Whatever the handler
 * writes later is ignored (sendJSON ends an already-answered response).
 */
import { constants } from 'node:http2';
import { WatchCacheError } from '../../core/errors.js';
import type { RequestLike, ResponseLike } from '../http-types.js';
import { sendError } from '../status-response.js';

const { NGHTTP2_NO_ERROR } = constants;

export class RequestDeadlines {
  private readonly timeoutMs: number;
  private readonly timers = new WeakMap<ResponseLike, NodeJS.Timeout>();
  /** Requests answered 504 by their deadline (for the metric). */
  timedOut = 0;
  /** Hears every request that ran out of time (logs). */
  onTimeout: ((req: RequestLike) => void) | undefined;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  /** Arm the deadline of a request that just arrived. */
  start(req: RequestLike, res: ResponseLike): void {
    const timer = setTimeout(() => this.expire(req, res), this.timeoutMs);
    timer.unref();
    this.timers.set(res, timer);
    res.once('close', () => this.exempt(res));
  }

  /** A long-running request (a watch): no deadline. */
  exempt(res: ResponseLike): void {
    const timer = this.timers.get(res);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(res);
  }

  private expire(req: RequestLike, res: ResponseLike): void {
    this.timers.delete(res);
    if (res.writableEnded) return;
    this.timedOut++;
    this.onTimeout?.(req);
    // HTTP/1.1: destroy the request (and so the socket, after `Connection: close`); HTTP/2: reset
    // the stream once the answer is out (the client may still be sending its body).
    const stream = (res as { stream?: { close(code?: number): void; destroyed: boolean } }).stream;
    const close = (): void => {
      if (stream === undefined) req.destroy();
      else if (!stream.destroyed) stream.close(NGHTTP2_NO_ERROR);
    };
    if (res.headersSent) {
      res.end();
      close();
      return;
    }
    if (stream === undefined) res.once('finish', close);
    const seconds = Math.round(this.timeoutMs / 1000);
    const err = new WatchCacheError(
      504,
      'Timeout',
      `Timeout: request did not complete within the allotted timeout of ${seconds}s`,
      {},
    );
    sendError(res, err, req.httpVersionMajor < 2 ? { connection: 'close' } : {});
    if (stream !== undefined) setImmediate(close); // the answer (END_STREAM) is queued first
  }
}
