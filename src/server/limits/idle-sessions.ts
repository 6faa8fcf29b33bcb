/**
 * Idle HTTP/2 sessions are closed (limits/timeouts.ts idleTimeoutMs): a
 * session with no open stream for that long gets a GOAWAY and closes, like
 * kube-apiserver's HTTP/2 idle timeout. A session carrying a watch is never
 * idle, however quiet the watch is.
 */
import type { ServerHttp2Session } from 'node:http2';

/** Watch one session; `onIdleClose` hears each session closed for idleness (metrics). */
export function closeWhenIdle(session: ServerHttp2Session, idleMs: number, onIdleClose?: () => void): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    timer = setTimeout(() => {
      onIdleClose?.();
      try {
        session.close();
      } catch {
        /* already closing */
      }
    }, idleMs);
    timer.unref();
  };
  const disarm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  session.on('stream', (stream) => {
    open++;
    disarm();
    stream.once('close', () => {
      open--;
      if (open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', disarm);
  arm();
}
