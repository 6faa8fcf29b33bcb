/**
 * Kubernetes label selectors: the full grammar of
 * k8s.io/apimachinery/pkg/labels (`=`, `==`, `!=`, `in`, `notin`, `key`,
 * `!key`; a comma is AND). Parsed once when a watch or list starts; matching
 * allocates nothing.
 */
import { BadRequestError } from '../core/errors.js';

type LabelOperator = 'exists' | 'notexists' | 'in' | 'notin';

export interface LabelRequirement {
  readonly key: string;
  readonly op: LabelOperator;
  /** For `in` / `notin` (`=` is `in` with one value, `!=` is `notin` with one value). */
  readonly values: readonly string[];
}

export class LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  private readonly source: string;

  constructor(requirements: readonly LabelRequirement[], source: string) {
    this.requirements = requirements;
    this.source = source;
  }

  static readonly everything = new LabelSelector([], '');

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  /** Total over any value: a null or non-object `labels` has no labels; a non-string value matches no value. */
  matches(labels: Readonly<Record<string, string>> | null | undefined): boolean {
    const reqs = this.requirements;
    const map = labels !== null && typeof labels === 'object' ? labels : undefined;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      const has = map !== undefined && Object.prototype.hasOwnProperty.call(map, r.key);
      switch (r.op) {
        case 'exists':
          if (!has) return false;
          break;
        case 'notexists':
          if (has) return false;
          break;
        case 'in':
          if (!has || !r.values.includes(map[r.key]!)) return false;
          break;
        case 'notin':
          if (has && r.values.includes(map[r.key]!)) return false;
          break;
      }
    }
    return true;
  }

  /** The exact value a requirement pins (`key=v` / `key in (v)`), if any. */
  exactValue(key: string): string | undefined {
    for (const r of this.requirements) if (r.key === key && r.op === 'in' && r.values.length === 1) return r.values[0];
    return undefined;
  }

  toString(): string {
    return this.source;
  }
}

const MAX_SELECTOR_LENGTH = 10_000;
const NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE_RE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function validateKey(key: string, source: string): void {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  if (!NAME_RE.test(name) || (prefix !== undefined && (prefix.length > 253 || !PREFIX_RE.test(prefix)))) {
    throw new BadRequestError(`unable to parse requirement: invalid label key "${key}" in selector "${source}"`);
  }
}

function validateValue(value: string, source: string): void {
  if (!VALUE_RE.test(value)) {
    throw new BadRequestError(`unable to parse requirement: invalid label value "${value}" in selector "${source}"`);
  }
}

/** Split on commas that are not inside parentheses. */
function splitTopLevel(source: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth < 0) throw new BadRequestError(`unbalanced ")" in label selector "${source}"`);
    } else if (c === ',' && depth === 0) {
      parts.push(source.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new BadRequestError(`unbalanced "(" in label selector "${source}"`);
  parts.push(source.slice(start));
  return parts;
}

const SET_RE = /^(\S+)\s+(in|notin)\s*\((.*)\)$/;
const EQ_RE = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/;

/** Parse a label selector string; throws BadRequestError with a clear message when malformed. */
export function parseLabelSelector(source: string | undefined): LabelSelector {
  if (source === undefined) return LabelSelector.everything;
  if (source.length > MAX_SELECTOR_LENGTH) {
    throw new BadRequestError(`label selector is longer than ${MAX_SELECTOR_LENGTH} characters`);
  }
  const trimmed = source.trim();
  if (trimmed === '') return LabelSelector.everything;
  const reqs: LabelRequirement[] = [];
  for (const raw of splitTopLevel(trimmed)) {
    const part = raw.trim();
    if (part === '') throw new BadRequestError(`empty requirement in label selector "${source}"`);
    let m: RegExpExecArray | null;
    if ((m = SET_RE.exec(part)) !== null) {
      const key = m[1]!;
      validateKey(key, source);
      const values = m[3]!.split(',').map((v) => v.trim());
      if (values.length === 1 && values[0] === '') {
        throw new BadRequestError(`unable to parse requirement: "${part}": ${m[2]} needs at least one value`);
      }
      for (const v of values) validateValue(v, source);
      reqs.push({ key, op: m[2] as 'in' | 'notin', values });
    } else if ((m = EQ_RE.exec(part)) !== null) {
      const key = m[1]!;
      const value = m[3]!.trim();
      validateKey(key, source);
      validateValue(value, source);
      reqs.push({ key, op: m[2] === '!=' ? 'notin' : 'in', values: [value] });
    } else if (part.startsWith('!')) {
      const key = part.slice(1).trim();
      validateKey(key, source);
      reqs.push({ key, op: 'notexists', values: [] });
    } else if (/^[^\s=!(),]+$/.test(part)) {
      validateKey(part, source);
      reqs.push({ key: part, op: 'exists', values: [] });
    } else {
      throw new BadRequestError(`unable to parse requirement "${part}" in label selector "${source}"`);
    }
  }
  return new LabelSelector(reqs, trimmed);
}
