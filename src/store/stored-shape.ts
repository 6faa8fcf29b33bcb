/**
 * The shape every stored object has, so that nothing a store holds can break
 * a later read (selection, list, watch, the beta ring mirror's msgpack
 * encoding, JSON encoding):
 *
 * - a plain JSON value all the way down: objects, arrays, strings, finite
 *   numbers, booleans, null (no functions, symbols, bigints, NaN, class
 *   instances, cycles); `undefined` members are allowed (JSON drops them);
 * - nested at most `maxDepth` containers deep (the top-level object is 1):
 *   msgpackr packs and JSON.stringify recurse, and a few thousand levels
 *   overflow the main thread's stack;
 * - about `maxBytes` bytes of JSON at most (an estimate from the walk);
 * - `metadata` an object whose fields the engine and clients read have their
 *   Kubernetes types: name, namespace, generateName, resourceVersion, uid and
 *   timestamps are strings; labels and annotations maps of strings;
 *   finalizers an array of strings; ownerReferences and managedFields arrays.
 *   A `null` map or list (valid JSON for a Go nil map) means absent and is
 *   dropped, as Kubernetes decodes it. `kind` and `apiVersion` are strings.
 *
 * Writes (`storableObject`) reject anything else with a 400 (413 past the
 * size); reads (`readableObject`, at the store-read boundary: EtcdStore's
 * decode and the reflector for any other Store) make an unfit object
 * invisible instead. Objects that passed are remembered (a WeakSet), so the
 * reflector does not walk again what a store already checked.
 *
 * Name and label SYNTAX (DNS-1123 names, label key/value grammar, 422
 * causes) is validation, not shape, and lives with the API validation.
 */
import { BadRequestError, RequestEntityTooLargeError } from '../core/errors.js';
import type { KubeObject, StoreEvent } from '../core/types.js';

export interface ObjectLimits {
  /** Deepest nesting of objects/arrays allowed (the object itself is depth 1). */
  readonly maxDepth: number;
  /** Largest object allowed, in (estimated) bytes of JSON. */
  readonly maxBytes: number;
}

/**
 * 256 levels (msgpackr overflows the main thread's stack near 1,300 levels);
 * 4 MiB (the server's 3 MiB body limit with room for what stores add; etcd's
 * own --max-request-bytes, 1.5 MiB by default, is answered as a 413 too).
 */
export const DEFAULT_OBJECT_LIMITS: ObjectLimits = Object.freeze({ maxDepth: 256, maxBytes: 4 * 1024 * 1024 });

/** An object that does not have the stored shape: 400 BadRequest. */
class ShapeError extends BadRequestError {}

const STRING_FIELDS = [
  'name',
  'namespace',
  'generateName',
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'selfLink',
] as const;
const STRING_MAPS = ['labels', 'annotations'] as const;
const NUMBER_FIELDS = ['generation', 'deletionGracePeriodSeconds'] as const;
const LISTS = ['finalizers', 'ownerReferences', 'managedFields'] as const;

const checked = new WeakSet<object>();

function bad(message: string): ShapeError {
  return new ShapeError(message);
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A value that does not fit, found by `measure`: the keys of its path are
 * added as the walk unwinds (outermost last), so that a walk that finds
 * nothing builds no path strings (it runs on every write: issue 13).
 */
class MisShaped extends Error {
  readonly keys: string[] = [];
  constructor(readonly problem: string) {
    super(problem);
  }
  /** The 400 for it: `metadata.labels.app is ...` (arrays add no key). */
  error(): ShapeError {
    return bad(`${this.keys.reverse().join('.')} ${this.problem}`);
  }
}

/**
 * Walk a JSON value: its types and depth; returns the estimated JSON size.
 * Recursion is bounded by `maxDepth` (a cycle exceeds it).
 */
function measure(v: unknown, depth: number, limits: ObjectLimits): number {
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'boolean':
      return 5;
    case 'number':
      if (!Number.isFinite(v)) throw new MisShaped('is not a finite number');
      return 8;
    case 'undefined':
      return 0;
    case 'object': {
      if (v === null) return 4;
      if (depth >= limits.maxDepth) throw new MisShaped(`is nested deeper than ${limits.maxDepth} levels`);
      if (Array.isArray(v)) {
        let n = 2;
        for (let i = 0; i < v.length; i++) n += measure(v[i], depth + 1, limits) + 1;
        return n;
      }
      if (!isPlainObject(v)) throw new MisShaped('is not a JSON object');
      let n = 2;
      for (const key of Object.keys(v)) {
        try {
          n += key.length + 4 + measure((v as Record<string, unknown>)[key], depth + 1, limits);
        } catch (err) {
          if (err instanceof MisShaped) err.keys.push(key);
          throw err;
        }
      }
      return n;
    }
    default:
      throw new MisShaped(`is a ${typeof v}, not a JSON value`);
  }
}

/** `measure` from the top: a value that does not fit is a 400 naming its path. */
function measured(object: unknown, limits: ObjectLimits): number {
  try {
    return measure(object, 0, limits);
  } catch (err) {
    throw err instanceof MisShaped ? err.error() : err;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Check metadata's typed fields; returns the names of fields that are null (to drop). */
function checkMetadata(meta: Record<string, unknown>): string[] {
  const nulls: string[] = [];
  for (const f of STRING_FIELDS) {
    const v = meta[f];
    if (v === null) nulls.push(f);
    else if (v !== undefined && typeof v !== 'string') throw bad(`metadata.${f} must be a string`);
  }
  for (const f of NUMBER_FIELDS) {
    const v = meta[f];
    if (v === null) nulls.push(f);
    else if (v !== undefined && typeof v !== 'number') throw bad(`metadata.${f} must be a number`);
  }
  for (const f of STRING_MAPS) {
    const v = meta[f];
    if (v === null) nulls.push(f);
    else if (v !== undefined) {
      if (!isRecord(v)) throw bad(`metadata.${f} must be a map of strings`);
      for (const k of Object.keys(v)) {
        if (typeof v[k] !== 'string')
          throw bad(`metadata.${f}["${k}"] must be a string, got ${v[k] === null ? 'null' : typeof v[k]}`);
      }
    }
  }
  for (const f of LISTS) {
    const v = meta[f];
    if (v === null) nulls.push(f);
    else if (v !== undefined) {
      if (!Array.isArray(v)) throw bad(`metadata.${f} must be a list`);
      if (f === 'finalizers' && v.some((x) => typeof x !== 'string'))
        throw bad('metadata.finalizers must be a list of strings');
      if (f !== 'finalizers' && v.some((x) => !isRecord(x))) throw bad(`metadata.${f} must be a list of objects`);
    }
  }
  return nulls;
}

/**
 * The write path: check an object against the stored shape; returns it (or,
 * when it has null maps/fields or a null kind/apiVersion, a copy without
 * them) and its estimated JSON size. Throws a 400 BadRequest (413 past maxBytes).
 */
export function storableObject(
  object: unknown,
  limits: ObjectLimits = DEFAULT_OBJECT_LIMITS,
): { object: KubeObject; bytes: number } {
  if (!isRecord(object) || !isPlainObject(object)) throw bad('the object must be a JSON object');
  if (!isRecord(object.metadata)) throw bad('metadata is required and must be an object');
  const nulls = checkMetadata(object.metadata);
  const topNulls: string[] = [];
  for (const f of ['kind', 'apiVersion'] as const) {
    if (object[f] === null) topNulls.push(f);
    else if (object[f] !== undefined && typeof object[f] !== 'string') throw bad(`${f} must be a string`);
  }
  const bytes = measured(object, limits);
  if (bytes > limits.maxBytes) {
    throw new RequestEntityTooLargeError(
      `the object is larger than the limit of ${limits.maxBytes} bytes (about ${bytes} bytes of JSON)`,
    );
  }
  if (nulls.length === 0 && topNulls.length === 0) return { object: object as KubeObject, bytes };
  const metadata = { ...object.metadata };
  for (const f of nulls) delete metadata[f];
  const copy: Record<string, unknown> = { ...object, metadata };
  for (const f of topNulls) delete copy[f];
  return { object: copy as KubeObject, bytes };
}

/** Remember that a (frozen) stored object has the shape, so readers need not walk it again. */
export function markChecked(object: KubeObject): KubeObject {
  checked.add(object);
  return object;
}

/**
 * The read boundary: the object as readers may see it (null maps dropped),
 * or undefined when it cannot be made safe (it is then invisible).
 */
export function readableObject(object: unknown, limits?: ObjectLimits): KubeObject | undefined {
  if (object !== null && typeof object === 'object' && checked.has(object)) return object as KubeObject;
  try {
    const fit = storableObject(object, limits).object;
    checked.add(fit);
    return fit;
  } catch (err) {
    if (err instanceof ShapeError || err instanceof RequestEntityTooLargeError) return undefined;
    throw err;
  }
}

/**
 * A store event as readers may see it: objects made readable; a change that
 * makes an object unreadable is seen as its deletion (so caches never keep a
 * stale copy), and an event with nothing readable left is dropped.
 */
export function readableEvent(event: StoreEvent): StoreEvent | undefined {
  const object = readableObject(event.object);
  const prev = event.prevObject === undefined ? undefined : readableObject(event.prevObject);
  if (object !== undefined) {
    if (object === event.object && prev === event.prevObject) return event;
    const out: StoreEvent = { type: event.type, object, resourceVersion: event.resourceVersion };
    if (prev !== undefined) out.prevObject = prev;
    else if (event.type === 'MODIFIED') out.type = 'ADDED'; // the previous state was invisible
    return out;
  }
  if (event.type !== 'ADDED' && prev !== undefined) {
    const last = {
      ...prev,
      metadata: { ...prev.metadata, resourceVersion: String(event.resourceVersion) },
    } as KubeObject;
    return { type: 'DELETED', object: markChecked(last), prevObject: prev, resourceVersion: event.resourceVersion };
  }
  return undefined;
}
