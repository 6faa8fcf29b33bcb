/**
 * JSON and Status responses. Every error answer is a Kubernetes `Status`
 * with the HTTP code, reason and message of a WatchCacheError; errors that
 * carry retryAfterSeconds (429, 504 TooLargeResourceVersion, 503) also get a
 * `Retry-After` header.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { WatchCacheError, ServiceUnavailableError, toWatchCacheError, type StatusDetails } from '../core/errors.js';
import { StoreUnavailableError, UpstreamStatusError } from '../store/store-errors.js';
import { PreconditionFailedError } from '../store/write-preconditions.js';
import type { ResponseLike } from './http-types.js';

const JSON_TYPE = 'application/json';

/** Send a JSON body with a status code. */
export function sendJSON(res: ResponseLike, code: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(code, { 'content-type': JSON_TYPE, 'content-length': payload.length, ...headers });
  res.end(payload);
}

/** Send plain text (health endpoints). */
export function sendText(
  res: ResponseLike,
  code: number,
  text: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  const payload = Buffer.from(text);
  res.writeHead(code, { 'content-type': contentType, 'content-length': payload.length });
  res.end(payload);
}

/** Any thrown value as a WatchCacheError: store outages are 503, other non-Status errors 500. */
function asStatusError(err: unknown): WatchCacheError {
  if (err instanceof WatchCacheError) return err;
  if (err instanceof StoreUnavailableError) return new ServiceUnavailableError(err.message, 1);
  return toWatchCacheError(err);
}

const causes = new WeakMap<ResponseLike, unknown>();

/** The error a response was answered with by sendError (for the 5xx log). */
export function errorCause(res: ResponseLike): unknown {
  return causes.get(res);
}

/** Send the Status of an error (with Retry-After when the error carries one). */
export function sendError(res: ResponseLike, err: unknown, headers: OutgoingHttpHeaders = {}): void {
  causes.set(res, err);
  const e = asStatusError(err);
  const extra: OutgoingHttpHeaders = { ...headers };
  const retry = e.retryAfterSeconds ?? e.status.details?.retryAfterSeconds;
  if (retry !== undefined) extra['retry-after'] = String(retry);
  sendJSON(res, e.code, e.status, extra);
}

/** An error with an arbitrary code and reason. */
export function statusError(code: number, reason: string, message: string, details?: StatusDetails): WatchCacheError {
  return new WatchCacheError(code, reason, message, details);
}

/** 404 for a path or resource this server does not serve. */
export function resourceNotFound(): WatchCacheError {
  return statusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** 404 for a missing object, named with the plural resource (`pods "x" not found`). */
function objectNotFound(resource: string, name: string): WatchCacheError {
  return statusError(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
}

/** 405 with the methods the path allows. */
export function methodNotAllowed(): WatchCacheError {
  return statusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

/** 401 for a missing or wrong bearer token. */
export function unauthorized(): WatchCacheError {
  return statusError(401, 'Unauthorized', 'Unauthorized');
}

/** 406 when no acceptable media type can be produced. */
export function notAcceptable(accept: string): WatchCacheError {
  return statusError(
    406,
    'NotAcceptable',
    `only the following media types are accepted: application/json, application/vnd.msgpack (watch only); got "${accept}"`,
  );
}

/**
 * Errors about one object, re-worded with the plural resource name: the
 * engine and stores word 404/409 from the kind (`pods "x" not found`), which
 * is wrong for kinds such as Endpoints.
 */
export function objectError(err: unknown, resource: string, name: string): WatchCacheError {
  const e = asStatusError(err);
  if (e instanceof UpstreamStatusError) return e; // an upstream's answer goes out exactly as it came
  if (e.code === 404) return objectNotFound(resource, name);
  if (e.code === 409 && e.reason === 'AlreadyExists') {
    return statusError(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });
  }
  if (e instanceof PreconditionFailedError) {
    return statusError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${name}": ${e.detail}`, {
      name,
      kind: resource,
    });
  }
  if (e.code === 409 && e.reason === 'Conflict') {
    const message = `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`;
    return statusError(409, 'Conflict', message, { name, kind: resource });
  }
  return e;
}
