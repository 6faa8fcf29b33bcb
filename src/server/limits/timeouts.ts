/**
 * The server's timeouts, kube-apiserver style, with their defaults:
 * - idleTimeoutMs (90 s, like kube-apiserver's HTTP/2 idle timeout): an
 *   HTTP/1.1 keep-alive connection between requests, or an HTTP/2 session
 *   with no open stream, is closed after this long;
 * - headersTimeoutMs (60 s): an HTTP/1.1 request whose headers have not all
 *   arrived by then is answered 408 and closed (slowloris);
 * - requestTimeoutMs (60 s, kube-apiserver's --request-timeout): a non-watch
 *   request (body included: a body trickled in is a slowloris too) that has
 *   not been answered by then gets a 504 Timeout Status and its connection
 *   (HTTP/1.1) or stream (HTTP/2) is closed. Watches are long-running and
 *   exempt, as in Kubernetes;
 * - minRequestTimeoutSeconds (1800, kube-apiserver's --min-request-timeout):
 *   a watch that asks for no timeoutSeconds lasts min x (1 + rand) seconds;
 * - maxWatchTimeoutSeconds (86,400): a larger timeoutSeconds is clamped.
 */

export interface ServerTimeouts {
  readonly idleTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly maxWatchTimeoutSeconds: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = Object.freeze({
  idleTimeoutMs: 90_000,
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 60_000,
  minRequestTimeoutSeconds: 1800,
  maxWatchTimeoutSeconds: 86_400,
});

/** The defaults with the given overrides (undefined keeps the default); throws RangeError for a bad value. */
export function resolveTimeouts(given: Partial<ServerTimeouts> = {}): ServerTimeouts {
  const out = { ...DEFAULT_TIMEOUTS };
  for (const key of Object.keys(DEFAULT_TIMEOUTS) as (keyof ServerTimeouts)[]) {
    const v = given[key];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${key} must be a positive integer, got ${String(v)}`);
    out[key] = v;
  }
  return Object.freeze(out);
}

/** A watch's duration when it asked for none: min x (1 + rand[0,1)), whole seconds (kube-apiserver's jitter). */
export function jitteredWatchTimeoutSeconds(minSeconds: number, random: () => number = Math.random): number {
  return Math.floor(minSeconds * (1 + random()));
}
