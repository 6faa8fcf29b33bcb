/**
 * GET with watch=true (or the /watch/ prefix): validate everything, then
 * answer 200 and stream. Everything that can fail is checked before the
 * headers go out, so a client gets a plain HTTP Status for: 400 (malformed
 * parameters; the engine throws BadRequestError synchronously), 406 (no
 * acceptable media type), 429 (cache not ready, or the server's watch cap
 * reached; Retry-After 1). Later failures (410 Expired, 504 too large RV)
 * arrive as one in-stream ERROR event, after which the response ends.
 *
 * A client asking for a Table (kubectl get -w) gets each event as a Table
 * of one row, encoded for its stream (src/server/table/table.ts).
 *
 * timeoutSeconds is passed through, clamped to the server's maximum
 * (limits/timeouts.ts); when absent (or 0) the watch lasts a random duration
 * in [min, 2 x min) s (min = 1800 by default), like kube-apiserver's
 * minRequestTimeout x (1 + rand).
 */
import { TooManyRequestsError } from '../core/errors.js';
import { asWatcher, type Watcher } from '../watch/watcher.js';
import { DEFAULT_TIMEOUTS, jitteredWatchTimeoutSeconds } from './limits/timeouts.js';
import { MSGPACK_TYPE, negotiateWatchEncoding } from './media-type.js';
import type { ReadQuery } from './query-params.js';
import type { ResourceRequest } from './resource-request.js';
import { notAcceptable, sendError } from './status-response.js';
import type { WatchRegistry } from './watch-registry.js';
import { WatchStream } from './watch-stream.js';
import { tableWatchEncoder } from './table/table.js';
import { tableRequest, type TableRequest } from './table/table-request.js';

const MIN_REQUEST_TIMEOUT_SECONDS = DEFAULT_TIMEOUTS.minRequestTimeoutSeconds;

/** Kubernetes' default watch duration: minRequestTimeout x (1 + rand[0,1)), in whole seconds. */
export function defaultWatchTimeoutSeconds(random: () => number = Math.random): number {
  return jitteredWatchTimeoutSeconds(MIN_REQUEST_TIMEOUT_SECONDS, random);
}

export interface WatchDeps {
  readonly registry: WatchRegistry;
  /** The timeout of a watch that asked for none (seconds). */
  readonly defaultTimeoutSeconds: () => number;
  /** A larger timeoutSeconds is clamped to this. */
  readonly maxTimeoutSeconds: number;
  /** Hears a watch stream that failed (logs). */
  readonly onStreamFailure?: (err: unknown) => void;
}

/** Start a watch stream; resolves when the stream is over. */
export async function handleWatch(r: ResourceRequest, q: ReadQuery, deps: WatchDeps): Promise<void> {
  const { cache } = r.served;
  const accept = r.req.headers.accept;
  const encoding = negotiateWatchEncoding(accept);
  if (encoding === undefined) return sendError(r.res, notAcceptable(accept ?? ''));
  let table: TableRequest | undefined;
  try {
    table = encoding === 'json' ? tableRequest(accept, r.params) : undefined;
  } catch (err) {
    return sendError(r.res, err);
  }
  if (!cache.ready)
    return sendError(
      r.res,
      new TooManyRequestsError(`the watch cache of ${r.served.spec.name} is (re)initializing, try again`, 1),
    );
  if (!deps.registry.reserve()) {
    return sendError(
      r.res,
      new TooManyRequestsError(`too many watches: this server allows ${deps.registry.maxWatches} at once`, 1),
    );
  }
  let watcher: Watcher;
  try {
    // The stream writer reads the engine's channel state (this server is part of the engine package).
    watcher = asWatcher(
      cache.watch({
        resourceVersion: q.resourceVersion,
        resourceVersionMatch: q.resourceVersionMatch,
        sendInitialEvents: q.sendInitialEvents,
        allowWatchBookmarks: q.allowWatchBookmarks,
        namespace: r.namespace,
        name: r.name,
        labelSelector: q.labelSelector,
        fieldSelector: q.fieldSelector,
        timeoutSeconds: Math.min(q.timeoutSeconds ?? deps.defaultTimeoutSeconds(), deps.maxTimeoutSeconds),
      }),
    );
  } catch (err) {
    deps.registry.cancel();
    return sendError(r.res, err);
  }
  r.res.writeHead(200, {
    'content-type': encoding === 'msgpack' ? MSGPACK_TYPE : 'application/json',
    'cache-control': 'no-cache, private',
    'x-content-type-options': 'nosniff',
  });
  r.res.flushHeaders();
  const lineEncoder = table === undefined ? undefined : tableWatchEncoder(table, r.served.spec);
  const stream = new WatchStream(r.res, watcher, encoding, cache.encodings, lineEncoder);
  stream.onFailure = deps.onStreamFailure;
  await deps.registry.run(stream);
}
