/**
 * Kubernetes field selectors (`=`, `==`, `!=`; a comma is AND; `\`-escapes for
 * `,`, `=`, `!` and `\`). Fields: metadata.name, metadata.namespace, every
 * configured indexer, and any dot path into the object (string comparison; a
 * missing field equals "").
 */
import { BadRequestError } from '../core/errors.js';
import type { IndexerFunc, KubeObject } from '../core/types.js';

export interface FieldRequirement {
  readonly field: string;
  readonly op: '=' | '!=';
  readonly value: string;
  /** The dot path, split once at parse time. */
  readonly path: readonly string[];
}

export type Indexers = Readonly<Record<string, IndexerFunc>>;

export class FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  private readonly source: string;

  constructor(requirements: readonly FieldRequirement[], source: string) {
    this.requirements = requirements;
    this.source = source;
  }

  static readonly everything = new FieldSelector([], '');

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  /** The value an `=` requirement pins for `field`, if any. */
  exactValue(field: string): string | undefined {
    for (const r of this.requirements) if (r.field === field && r.op === '=') return r.value;
    return undefined;
  }

  matches(object: KubeObject, indexers: Indexers): boolean {
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      const actual = fieldValue(object, r, indexers);
      if ((actual === r.value) !== (r.op === '=')) return false;
    }
    return true;
  }

  toString(): string {
    return this.source;
  }
}

/**
 * The string value of a field of an object ("" when missing). Total: a
 * non-string name/namespace or indexer value reads as missing.
 */
function fieldValue(object: KubeObject, req: Pick<FieldRequirement, 'field' | 'path'>, indexers: Indexers): string {
  if (req.field === 'metadata.name') return stringOr(object.metadata?.name);
  if (req.field === 'metadata.namespace') return stringOr(object.metadata?.namespace);
  const indexer = indexers[req.field];
  if (indexer !== undefined) return stringOr(indexer(object));
  let cur: unknown = object;
  for (const step of req.path) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[step];
  }
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return '';
}

function stringOr(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * User indexers made total: one that throws (say `o.spec.nodeName` on an
 * object without spec) or returns a non-string reads as "absent", so no
 * object can make dispatch, the history or the beta mirror throw.
 */
export function totalIndexers(indexers: Readonly<Record<string, IndexerFunc>>): Record<string, IndexerFunc> {
  const out: Record<string, IndexerFunc> = {};
  for (const [field, fn] of Object.entries(indexers)) {
    out[field] = (object) => {
      try {
        const v: unknown = fn(object);
        return typeof v === 'string' ? v : undefined;
      } catch {
        return undefined;
      }
    };
  }
  return out;
}

const MAX_SELECTOR_LENGTH = 10_000;
const FIELD_RE = /^[A-Za-z0-9_.\-/]+$/;

/** Split on an unescaped separator, keeping escapes for the next stage. */
function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function unescape(s: string, source: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') {
      const n = s[i + 1];
      if (n === undefined || !',=!\\'.includes(n)) {
        throw new BadRequestError(`invalid escape sequence in field selector "${source}"`);
      }
      out += n;
      i++;
    } else if (c === ',' || c === '=' || c === '!') {
      throw new BadRequestError(`invalid field selector "${source}": unescaped "${c}" in value`);
    } else out += c;
  }
  return out;
}

/** Parse a field selector; throws BadRequestError with a clear message when malformed. */
export function parseFieldSelector(source: string | undefined): FieldSelector {
  if (source === undefined) return FieldSelector.everything;
  if (source.length > MAX_SELECTOR_LENGTH) {
    throw new BadRequestError(`field selector is longer than ${MAX_SELECTOR_LENGTH} characters`);
  }
  const trimmed = source.trim();
  if (trimmed === '') return FieldSelector.everything;
  const reqs: FieldRequirement[] = [];
  for (const part of splitUnescaped(trimmed, ',')) {
    let field: string;
    let op: '=' | '!=';
    let rest: string;
    const neq = part.indexOf('!=');
    const eq = part.indexOf('=');
    if (neq >= 0 && neq < eq) {
      field = part.slice(0, neq);
      op = '!=';
      rest = part.slice(neq + 2);
    } else if (eq >= 0) {
      field = part.slice(0, eq);
      op = '=';
      rest = part.slice(part[eq + 1] === '=' ? eq + 2 : eq + 1);
    } else {
      throw new BadRequestError(`invalid field selector "${source}": "${part}" has no operator (=, == or !=)`);
    }
    field = field.trim();
    if (!FIELD_RE.test(field))
      throw new BadRequestError(`invalid field selector "${source}": bad field name "${field}"`);
    reqs.push({ field, op, value: unescape(rest.trim(), source), path: field.split('.') });
  }
  return new FieldSelector(reqs, trimmed);
}
