/**
 * Graceful shutdown bookkeeping: every accepted socket, every HTTP/2
 * session, and the number of requests whose response is not closed yet.
 *
 * drain(graceMs): wait until no response is in flight (watch responses are
 * ended by the caller first), then close HTTP/2 sessions (GOAWAY) and end
 * every socket (FIN after the queued bytes); whatever is still open when
 * the grace period is over (e.g. a client that stopped reading) is destroyed.
 */
import type { ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { ResponseLike } from './http-types.js';

const POLL_MS = 10;

export class ConnectionTracker {
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private inflight = 0;

  get openSockets(): number {
    return this.sockets.size;
  }

  addSocket(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  addSession(session: ServerHttp2Session): void {
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
  }

  /** Count a response as in flight until it closes. */
  track(res: ResponseLike): void {
    this.inflight++;
    let done = false;
    res.once('close', () => {
      if (done) return;
      done = true;
      this.inflight--;
    });
  }

  async drain(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    const sleep = (): Promise<void> => new Promise((r) => setTimeout(r, POLL_MS));
    while (this.inflight > 0 && Date.now() < deadline) await sleep();
    for (const s of this.sessions) {
      try {
        s.close();
      } catch {
        /* already closing */
      }
    }
    for (const s of this.sockets) s.end();
    while (this.sockets.size > 0 && Date.now() < deadline) await sleep();
    for (const s of this.sockets) s.destroy();
    for (const s of this.sessions) s.destroy();
  }
}
