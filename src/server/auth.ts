/**
 * Bearer-token authentication (`--token`): every path but /healthz, /readyz
 * and /livez needs `Authorization: Bearer TOKEN`, compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export class BearerAuth {
  private readonly expected: Buffer;

  constructor(token: string) {
    if (token === '') throw new RangeError('the bearer token must not be empty');
    this.expected = digest(token);
  }

  /** True when the request carries the right bearer token. */
  check(headers: IncomingHttpHeaders): boolean {
    const header = headers.authorization;
    if (typeof header !== 'string') return false;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m === null) return false;
    return timingSafeEqual(digest(m[1]!), this.expected);
  }
}
