/**
 * Continue tokens for paged lists, in the Kubernetes format: unpadded
 * base64url of `{"v":"meta.k8s.io/v1","rv":<rv>,"start":"<next key>"}`. The
 * token pins the RV of the first page.
 */
import { BadRequestError } from '../core/errors.js';

export interface ContinuePoint {
  rv: number;
  /** The first key the next page may return (exclusive of what was served). */
  start: string;
}

export function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: lastKey + '\u0000' })).toString('base64url');
}

export function decodeContinue(token: string): ContinuePoint {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw new BadRequestError('continue key is not valid: malformed token');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p === null || typeof p !== 'object' || p.v !== 'meta.k8s.io/v1')
    throw new BadRequestError(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  if (typeof p.rv !== 'number' || !Number.isSafeInteger(p.rv) || p.rv <= 0)
    throw new BadRequestError('continue key is not valid: incorrect encoded start resourceVersion');
  if (typeof p.start !== 'string' || p.start === '')
    throw new BadRequestError('continue key is not valid: encoded start key empty');
  return { rv: p.rv, start: p.start };
}
