/**
 * Per-request logging: every answer with a 5xx status is logged at error
 * level with its cause (the error the handler failed with, stack included),
 * whatever the log level of requests (health checks' 503s are answers, not
 * errors); with the request log on, every
 * request is logged at info when its response is done: method, path,
 * status, protocol, duration in ms and whether it was a watch.
 */
import type { Logger } from 'pino';
import type { RequestLike, ResponseLike } from '../http-types.js';
import { errorCause } from '../status-response.js';

/** A 503 from a health check is its answer, not a server error. */
const HEALTH_PATHS = new Set(['/readyz', '/healthz', '/livez']);

export function logRequest(logger: Logger, requestLog: boolean, req: RequestLike, res: ResponseLike): void {
  const start = performance.now();
  res.once('close', () => {
    const status = (res as unknown as { statusCode?: number }).statusCode ?? 0;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const record = {
      method: req.method,
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? undefined : url.slice(q + 1),
      status,
      protocol: req.httpVersionMajor >= 2 ? 'h2' : 'http/1.1',
      durationMs: Math.round((performance.now() - start) * 10) / 10,
    };
    if (status >= 500 && !HEALTH_PATHS.has(record.path)) {
      const cause = errorCause(res);
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a non-Error cause is logged as String() shows it
      const shown = cause instanceof Error ? cause.message : cause === undefined ? undefined : String(cause);
      logger.error({ ...record, err: cause instanceof Error ? cause : undefined, cause: shown }, 'server error');
    } else if (requestLog) {
      logger.info(record, 'request');
    }
  });
}
