/**
 * The body of one Kubernetes watch response, decoded: JSON objects
 * `{"type":...,"object":...}`, one per line (kube-apiserver and `watchcache
 * serve` both end each with `\n`; a last line without one is decoded at the
 * end). Each event is handed on synchronously, in wire order; the stream
 * reports once how it ended: cleanly (the server ended the response) or
 * broken (reset, aborted, undecodable).
 */
import type { IncomingMessage } from 'node:http';
import type { KubeObject, WatchEventType } from '../core/types.js';

export interface WireWatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface WatchStreamHandlers {
  onEvent(event: WireWatchEvent): void;
  /** Called once: `error` undefined for a clean end of the response. */
  onEnd(error: Error | undefined): void;
}

const TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export class KubeWatchStream {
  private readonly res: IncomingMessage;
  private handlers: WatchStreamHandlers;
  private pending: Buffer = Buffer.alloc(0);
  private ended = false;

  constructor(res: IncomingMessage, handlers: WatchStreamHandlers) {
    this.res = res;
    this.handlers = handlers;
    res.on('data', (chunk: Buffer) => this.push(chunk));
    res.on('end', () => {
      if (this.pending.length > 0 && this.pending.toString('utf8').trim() !== '') this.decodeLine(this.pending);
      this.pending = Buffer.alloc(0);
      this.end(undefined);
    });
    res.on('error', (err) => this.end(err));
    res.on('close', () => this.end(new Error('the watch connection closed before the response ended')));
  }

  /** Hand the rest of the stream to other handlers (a list's watch-list stream adopted by a watch). */
  setHandlers(handlers: WatchStreamHandlers): void {
    this.handlers = handlers;
  }

  /** Stop reading and drop the connection; no further callbacks. */
  close(): void {
    this.ended = true;
    this.res.destroy();
  }

  private push(chunk: Buffer): void {
    if (this.ended) return;
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let nl: number;
    while (!this.ended && (nl = buf.indexOf(10)) >= 0) {
      const line = buf.subarray(0, nl);
      buf = buf.subarray(nl + 1);
      if (line.length > 0) this.decodeLine(line);
    }
    this.pending = buf;
  }

  private decodeLine(line: Buffer): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line.toString('utf8'));
    } catch {
      this.fail(new Error(`undecodable watch event: ${line.toString('utf8').slice(0, 200)}`));
      return;
    }
    const ev = parsed as Partial<WireWatchEvent>;
    if (
      ev === null ||
      typeof ev !== 'object' ||
      typeof ev.type !== 'string' ||
      !TYPES.has(ev.type) ||
      ev.object === null ||
      typeof ev.object !== 'object'
    ) {
      this.fail(new Error(`malformed watch event: ${line.toString('utf8').slice(0, 200)}`));
      return;
    }
    this.handlers.onEvent(ev as WireWatchEvent);
  }

  private fail(err: Error): void {
    this.end(err);
    this.res.destroy();
  }

  private end(err: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.handlers.onEnd(err);
  }
}
