/**
 * A tiny path-aware checker for JSON input (scenarios, sweep specs): each
 * helper reads one field, and every problem is collected as
 * "<path>: <what is wrong>" so a user sees all mistakes at once.
 */

export class Checker {
  readonly errors: string[] = [];

  fail(path: string, message: string): void {
    this.errors.push(`${path}: ${message}`);
  }

  /** An object (not null, not an array); reports and returns undefined otherwise. */
  object(path: string, value: unknown): Record<string, unknown> | undefined {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.fail(path, `must be an object, got ${describe(value)}`);
      return undefined;
    }
    return value as Record<string, unknown>;
  }

  /** Report keys of `obj` that are not in `allowed` (catches typos). */
  keys(path: string, obj: Record<string, unknown>, allowed: readonly string[]): void {
    for (const k of Object.keys(obj)) {
      if (!allowed.includes(k)) this.fail(join(path, k), `unknown field (allowed: ${allowed.join(', ')})`);
    }
  }

  array(path: string, value: unknown, opts: { min?: number } = {}): unknown[] | undefined {
    if (!Array.isArray(value)) {
      this.fail(path, `must be an array, got ${describe(value)}`);
      return undefined;
    }
    if (opts.min !== undefined && value.length < opts.min) {
      this.fail(path, `must have at least ${opts.min} item${opts.min === 1 ? '' : 's'}`);
      return undefined;
    }
    return value as unknown[];
  }

  number(
    path: string,
    value: unknown,
    opts: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean } = {},
  ): number | undefined {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.fail(path, `must be a finite number, got ${describe(value)}`);
      return undefined;
    }
    if (opts.integer === true && !Number.isInteger(value)) {
      this.fail(path, `must be an integer, got ${value}`);
      return undefined;
    }
    if (opts.min !== undefined && (opts.exclusiveMin === true ? value <= opts.min : value < opts.min)) {
      this.fail(path, `must be ${opts.exclusiveMin === true ? '>' : '>='} ${opts.min}, got ${value}`);
      return undefined;
    }
    if (opts.max !== undefined && value > opts.max) {
      this.fail(path, `must be <= ${opts.max}, got ${value}`);
      return undefined;
    }
    return value;
  }

  optionalNumber(
    path: string,
    value: unknown,
    opts: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean } = {},
  ): number | undefined {
    return value === undefined ? undefined : this.number(path, value, opts);
  }

  string(path: string, value: unknown, opts: { nonEmpty?: boolean } = {}): string | undefined {
    if (typeof value !== 'string') {
      this.fail(path, `must be a string, got ${describe(value)}`);
      return undefined;
    }
    if (opts.nonEmpty === true && value === '') {
      this.fail(path, 'must not be empty');
      return undefined;
    }
    return value;
  }

  boolean(path: string, value: unknown): boolean | undefined {
    if (typeof value !== 'boolean') {
      this.fail(path, `must be true or false, got ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  oneOf<T extends string>(path: string, value: unknown, allowed: readonly T[]): T | undefined {
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.fail(path, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${describe(value)}`);
      return undefined;
    }
    return value as T;
  }
}

export function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return `a ${typeof value}`;
}
