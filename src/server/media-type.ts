/**
 * Accept negotiation for watch streams: JSON lines (application/json, the
 * default) or length-prefixed msgpack frames (application/vnd.msgpack). Media
 * parameters such as `;as=Table` (kubectl) are ignored: plain objects are
 * served. Ranges with q=0 are skipped; higher q wins, then header order.
 */
import type { WatchEncoding } from './watch-stream.js';

export const MSGPACK_TYPE = 'application/vnd.msgpack';

interface Range {
  type: string;
  q: number;
  index: number;
}

function parseAccept(accept: string): Range[] {
  const ranges: Range[] = [];
  accept.split(',').forEach((part, index) => {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    if (type === undefined || type === '') return;
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/i.exec(p);
      if (m !== null) q = Number(m[1]);
    }
    if (q > 0) ranges.push({ type: type.toLowerCase(), q, index });
  });
  return ranges.sort((a, b) => b.q - a.q || a.index - b.index);
}

/** The encoding to stream, or undefined when nothing the client accepts can be produced. */
export function negotiateWatchEncoding(accept: string | undefined): WatchEncoding | undefined {
  if (accept === undefined || accept.trim() === '') return 'json';
  for (const r of parseAccept(accept)) {
    if (r.type === MSGPACK_TYPE) return 'msgpack';
    if (r.type === 'application/json' || r.type === '*/*' || r.type === 'application/*') return 'json';
  }
  return undefined;
}

/** Single objects and lists are always JSON; a client must accept it. */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return parseAccept(accept).some(
    (r) => r.type === 'application/json' || r.type === '*/*' || r.type === 'application/*' || r.type === MSGPACK_TYPE,
  );
}
