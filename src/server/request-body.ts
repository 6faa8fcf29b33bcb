/**
 * Request bodies: read up to a byte limit (3 MiB by default, like the
 * apiserver's 3 MB request limit rounded to MiB) and parse as JSON. A larger
 * body is a 413 RequestEntityTooLarge; the rest of it is read and discarded
 * so the client still receives the answer. Non-JSON media types are 415. A
 * body nested deeper than the stored-object depth limit is a 400 before it
 * is parsed (the stores check the rest of the stored shape).
 */
import { BadRequestError, RequestEntityTooLargeError, WatchCacheError } from '../core/errors.js';
import { DEFAULT_OBJECT_LIMITS } from '../store/stored-shape.js';
import type { RequestLike } from './http-types.js';
import { jsonDeeperThan } from './limits/json-depth.js';

export const DEFAULT_BODY_LIMIT = 3 * 1024 * 1024;

function tooLarge(limit: number): RequestEntityTooLargeError {
  return new RequestEntityTooLargeError(`the request body is larger than the limit of ${limit} bytes`);
}

/** Read the whole body (rejects with 413 past `limit`). */
export function readBody(req: RequestLike, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume(); // discard, so the connection can carry the answer
      reject(tooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!over) reject(err);
    });
  });
}

function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType === '') return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json') || type === '*/*';
}

/**
 * Read and parse a JSON body. `optional`: an empty body gives undefined
 * (DELETE), else it is a 400.
 */
export async function readJsonBody(
  req: RequestLike,
  limit: number,
  optional = false,
  maxDepth = DEFAULT_OBJECT_LIMITS.maxDepth,
): Promise<unknown> {
  const contentType = req.headers['content-type'];
  const body = await readBody(req, limit);
  if (body.length === 0) {
    if (optional) return undefined;
    throw new BadRequestError('the request body is empty: expected a JSON object');
  }
  if (!isJsonType(contentType)) {
    throw new WatchCacheError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unsupported format "${contentType}": use application/json`,
    );
  }
  if (jsonDeeperThan(body, maxDepth))
    throw new BadRequestError(`the request body is nested deeper than ${maxDepth} levels`);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    throw new BadRequestError(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}
