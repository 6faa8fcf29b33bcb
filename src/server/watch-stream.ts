/**
 * WatchStream: pumps one Watcher into one HTTP response (HTTP/1.1 chunked or
 * an HTTP/2 stream), with back-pressure and write batching.
 *
 * - Encoding: each event's wire form comes from the shared WatchEvent
 *   (`jsonLine` / `msgpackFrame`), encoded once per event and shared by every
 *   stream; nothing is re-encoded per stream.
 * - msgpack framing: every frame is preceded by its length as a 4-byte
 *   big-endian unsigned integer (`[len][msgpack {type, object}]...`).
 * - A stream given its own `lineEncoder` (a Table watch: its rows are its
 *   own) encodes each event with it instead of the shared JSON line.
 * - Batching: the events that are ready right now (channel backlog, initial
 *   replay) are gathered, up to MAX_BATCH_EVENTS / MAX_BATCH_BYTES, and sent
 *   with ONE write (a concatenation); a batch is flushed as soon as no further
 *   event is ready, so nothing waits for a later event.
 * - Back-pressure: when write() returns false the stream stops pulling from
 *   its watcher until 'drain'. The watcher's channel then fills, and the
 *   engine's mode decides (off: force-close; alpha/beta: stall and resume).
 *   At most one event is held outside the channel, and only when a replay
 *   ends with an empty channel (a next() call that was already waiting).
 * - Ending: when the watcher ends (timeout, ERROR event last, force-close,
 *   cache stop) the response is ended cleanly, also while the client is not
 *   reading (the end is queued behind the unread bytes); when the client goes
 *   away the watcher is stopped; shutdown() ends both.
 * - Failure: an exception while encoding or writing this stream's events
 *   ends THIS watch with one in-stream ERROR event (Status 500
 *   InternalError), never the process; `onFailure` hears the cause (logs).
 */
import { toWatchCacheError } from '../core/errors.js';
import type { Watcher } from '../watch/watcher.js';
import { msgpack, type EncodingCounter, type WatchEvent } from '../wire/watch-event.js';
import type { ResponseLike } from './http-types.js';

export type WatchEncoding = 'json' | 'msgpack';

const MAX_BATCH_EVENTS = 128;
const MAX_BATCH_BYTES = 256 * 1024;
/** How often a stream blocked on back-pressure checks whether its watcher ended. */
const ENDED_POLL_MS = 200;

const NOT_READY = Symbol('not-ready');
const NOT_READY_PROMISE: Promise<typeof NOT_READY> = Promise.resolve(NOT_READY);

type Pulled = IteratorResult<WatchEvent> | typeof NOT_READY;

/** The msgpack frame of an event with its 4-byte big-endian length prefix. */
function lengthPrefix(frame: Uint8Array): Buffer {
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(frame.length, 0);
  return header;
}

export class WatchStream {
  private readonly res: ResponseLike;
  private readonly watcher: Watcher;
  private readonly encoding: WatchEncoding;
  private readonly counter: EncodingCounter;
  private readonly lineEncoder: ((ev: WatchEvent) => Buffer) | undefined;
  private closed = false;
  private stopping = false;
  private wakeWriter: (() => void) | undefined;
  private readonly parts: Uint8Array[] = [];
  private partBytes = 0;
  private partEvents = 0;
  /** Events written to the response. */
  eventsWritten = 0;
  /** Called once with the cause when this stream fails (see the file comment). */
  onFailure: ((err: unknown) => void) | undefined;

  constructor(
    res: ResponseLike,
    watcher: Watcher,
    encoding: WatchEncoding,
    counter: EncodingCounter,
    lineEncoder?: (ev: WatchEvent) => Buffer,
  ) {
    this.res = res;
    this.lineEncoder = lineEncoder;
    this.watcher = watcher;
    this.encoding = encoding;
    this.counter = counter;
    res.once('close', () => {
      this.closed = true;
      this.watcher.stop('client');
      this.wake();
    });
  }

  /** End the watch and the response (server shutdown). */
  shutdown(): void {
    this.stopping = true;
    this.watcher.stop('client');
    this.wake();
  }

  /** Pump until the watcher or the response ends. Never rejects. */
  async run(): Promise<void> {
    let pending: Promise<IteratorResult<WatchEvent>> | undefined;
    try {
      for (;;) {
        if (this.closed || this.stopping) break;
        let r: Pulled;
        if (this.partEvents === 0) {
          r = await (pending ?? this.watcher.next()); // nothing held: waiting is fine
          pending = undefined;
        } else if (pending === undefined && this.readyNow()) {
          r = await this.watcher.next(); // resolves at once
        } else {
          pending ??= this.watcher.next();
          r = await Promise.race([pending, NOT_READY_PROMISE]);
          if (r !== NOT_READY) pending = undefined;
        }
        if (r === NOT_READY) {
          if (!this.flush()) await this.writable();
          continue;
        }
        if (r.done === true) break;
        this.add(r.value);
        if (this.partEvents >= MAX_BATCH_EVENTS || this.partBytes >= MAX_BATCH_BYTES) {
          if (!this.flush()) await this.writable();
        }
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.watcher.stop('client');
      this.finish();
    }
  }

  /** An event can be taken without waiting (channel backlog or a terminal event). */
  private readyNow(): boolean {
    const w = this.watcher;
    return w.queue.size > 0 || w.state === 'draining' || w.state === 'stopped';
  }

  private add(ev: WatchEvent): void {
    if (this.encoding === 'json') {
      const line = this.lineEncoder === undefined ? ev.jsonLine(this.counter) : this.lineEncoder(ev);
      this.parts.push(line);
      this.partBytes += line.length;
    } else {
      const frame = ev.msgpackFrame(this.counter);
      this.parts.push(lengthPrefix(frame), frame);
      this.partBytes += 4 + frame.length;
    }
    this.partEvents++;
  }

  private takeBatch(): Uint8Array | undefined {
    if (this.partEvents === 0) return undefined;
    const chunk = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partBytes);
    this.eventsWritten += this.partEvents;
    this.parts.length = 0;
    this.partBytes = 0;
    this.partEvents = 0;
    return chunk;
  }

  /** Write the batch in one write(); false when the transport is backed up. */
  private flush(): boolean {
    const chunk = this.takeBatch();
    if (chunk === undefined || this.closed) return true;
    return this.res.write(chunk);
  }

  /**
   * Resolves on 'drain', on client close, on shutdown, or when the watcher
   * ended meanwhile (checked every ENDED_POLL_MS: the Watcher has no end
   * notification), so a force-closed watch ends its response at once even
   * while the client is not reading.
   */
  private writable(): Promise<void> {
    if (this.closed || this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.res.removeListener('drain', done);
        clearInterval(poll);
        this.wakeWriter = undefined;
        resolve();
      };
      const poll = setInterval(() => {
        if (this.watcher.stopped) done();
      }, ENDED_POLL_MS);
      poll.unref();
      this.wakeWriter = done;
      this.res.once('drain', done);
    });
  }

  private wake(): void {
    this.wakeWriter?.();
  }

  /** End this watch with an ERROR event carrying a 500 Status (what was batched is dropped). */
  private fail(err: unknown): void {
    this.parts.length = 0;
    this.partBytes = 0;
    this.partEvents = 0;
    this.onFailure?.(err);
    if (this.closed || this.res.writableEnded) return;
    const status = toWatchCacheError(err).status;
    const event = {
      type: 'ERROR',
      object: { ...status, code: 500, reason: 'InternalError', message: `the watch failed: ${status.message}` },
    };
    try {
      if (this.encoding === 'json') this.res.write(JSON.stringify(event) + '\n');
      else {
        const frame = msgpack.pack(event);
        this.res.write(Buffer.concat([lengthPrefix(frame), frame]));
      }
    } catch {
      /* the response is broken too: finish() ends it */
    }
  }

  private finish(): void {
    if (this.closed || this.res.writableEnded) return;
    const chunk = this.takeBatch();
    if (chunk !== undefined) this.res.end(chunk);
    else this.res.end();
  }
}
