/**
 * Whether a GET asks for a Table (`Accept: application/json;as=Table;
 * v=v1;g=meta.k8s.io`, or v1beta1, as kubectl sends for human-readable
 * output), and which rows' `object` it wants (`includeObject`: Metadata =
 * PartialObjectMetadata, the default; Object = the whole object; None).
 * The Accept ranges are taken by q, then in order: the first one this
 * server can produce decides (a Table, or plain JSON).
 */
import { BadRequestError } from '../../core/errors.js';
import { MSGPACK_TYPE } from '../media-type.js';

type TableVersion = 'v1' | 'v1beta1';
type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableRequest {
  readonly version: TableVersion;
  readonly includeObject: IncludeObject;
}

interface Range {
  type: string;
  params: Map<string, string>;
  q: number;
  index: number;
}

function ranges(accept: string): Range[] {
  const out: Range[] = [];
  accept.split(',').forEach((part, index) => {
    const [type, ...rest] = part.split(';').map((s) => s.trim());
    if (type === undefined || type === '') return;
    const params = new Map<string, string>();
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
    }
    const q = params.has('q') ? Number(params.get('q')) : 1;
    if (q > 0) out.push({ type: type.toLowerCase(), params, q, index });
  });
  return out.sort((a, b) => b.q - a.q || a.index - b.index);
}

const PLAIN = new Set(['application/json', 'application/*', '*/*', MSGPACK_TYPE]);

/** The Table asked for, or undefined for a plain object or list. Throws 400 for a bad includeObject. */
export function tableRequest(accept: string | undefined, params: URLSearchParams): TableRequest | undefined {
  if (accept === undefined || accept.trim() === '') return undefined;
  for (const r of ranges(accept)) {
    const as = r.params.get('as');
    if (r.type === 'application/json' && as === 'Table' && r.params.get('g') === 'meta.k8s.io') {
      const v = r.params.get('v');
      if (v === 'v1' || v === 'v1beta1') return { version: v, includeObject: includeObject(params) };
      continue;
    }
    if (as === undefined && PLAIN.has(r.type)) return undefined;
  }
  return undefined;
}

function includeObject(params: URLSearchParams): IncludeObject {
  const v = params.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw new BadRequestError(`includeObject must be None, Metadata or Object, got "${v}"`);
}
