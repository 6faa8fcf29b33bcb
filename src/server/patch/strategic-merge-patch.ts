/**
 * Strategic merge patch, `application/strategic-merge-patch+json`
 * (kubectl's default for core types), following apimachinery's
 * strategicpatch package as kube-apiserver applies it:
 *
 * - maps merge key by key; a null value deletes the key;
 * - a list whose field merges (patch-strategies.ts) merges element by
 *   element: maps by their merge key (a matching element is merged, a new one
 *   appended), primitives as a set union; every other list is replaced whole;
 * - `$patch: replace` in a map replaces the map with the patch;
 *   `$patch: delete` in a map empties it; `$patch: merge` is the default;
 *   an element `{"<mergeKey>": v, "$patch": "delete"}` removes that element;
 *   an element `{"$patch": "replace"}` makes the rest of the patch list the
 *   whole list;
 * - `$deleteFromPrimitiveList/<field>: [v…]` removes those values;
 * - `$setElementOrder/<field>: […]` orders the merged list (patch items by
 *   that order, items only on the server kept where they were relative to
 *   the others: apimachinery's normalizeElementOrder / mergeSortedSlice);
 *   without it, the patch list's order wins over the server's;
 * - `$retainKeys: [k…]` in a map drops every key of the original that is
 *   not listed (and the patch may set only listed keys).
 * Patches and targets are not modified. Malformed directives are 400.
 */
import { BadRequestError } from '../../core/errors.js';
import { isJsonMap, setKey, type JsonMap, type JsonValue } from './json-values.js';
import type { FieldPatchMeta, PatchSchema } from './patch-strategies.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';
const SET_ELEMENT_ORDER = '$setElementOrder/';

/** Apply a strategic merge patch (a JSON object) to a copy of `original`. */
export function applyStrategicMergePatch(original: JsonValue, patch: JsonValue, schema: PatchSchema): JsonValue {
  if (!isJsonMap(patch)) throw new BadRequestError('a strategic merge patch must be a JSON object');
  return mergeMap(isJsonMap(original) ? copy(original) : {}, copy(patch), schema);
}

function copy<T extends JsonValue>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T; // own "__proto__" keys stay data
}

type Shape = 'map' | 'list' | 'scalar';
function shape(v: JsonValue): Shape {
  return Array.isArray(v) ? 'list' : isJsonMap(v) ? 'map' : 'scalar';
}

/** kube's mergeMap; mutates and returns `original` (a copy owned by the caller). */
function mergeMap(original: JsonMap, patch: JsonMap, schema: PatchSchema): JsonMap {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const d = patch[DIRECTIVE];
    delete patch[DIRECTIVE];
    if (d === 'replace') return mergeMap({}, patch, schema);
    if (d === 'delete') return {};
    if (d !== 'merge')
      throw new BadRequestError(`unknown patch type: ${JSON.stringify(d)} in map: ${JSON.stringify(patch)}`);
  }
  applyRetainKeys(original, patch);
  applySetElementOrder(original, patch, schema);
  for (const k of Object.keys(patch)) {
    const value = patch[k]!;
    const isDeleteList = k.startsWith(DELETE_FROM_PRIMITIVE_LIST);
    const key = isDeleteList ? k.slice(DELETE_FROM_PRIMITIVE_LIST.length) : k;
    const meta = schema[key];
    if (value === null) {
      delete original[key];
      continue;
    }
    if (isDeleteList) {
      if (!Array.isArray(value)) throw new BadRequestError(`${k} must be a list of values to delete`);
      const current = Object.hasOwn(original, key) ? original[key]! : null;
      if (Array.isArray(current))
        setKey(
          original,
          key,
          current.filter((x) => !value.some((d) => d === x)),
        );
      continue;
    }
    const current = Object.hasOwn(original, key) ? original[key]! : undefined;
    if (current === undefined || current === null || shape(current) !== shape(value)) {
      setKey(original, key, fresh(value, meta));
    } else if (isJsonMap(current) && isJsonMap(value)) {
      setKey(original, key, mergeMap(current, value, meta?.schema ?? {}));
    } else if (Array.isArray(current) && Array.isArray(value)) {
      setKey(original, key, mergeListField(current, value, meta));
    } else {
      setKey(original, key, value);
    }
  }
  return original;
}

/** A patch value for a key the original does not have: directives applied to nothing, nulls dropped. */
function fresh(value: JsonValue, meta: FieldPatchMeta | undefined): JsonValue {
  if (isJsonMap(value)) return mergeMap({}, value, meta?.schema ?? {});
  if (Array.isArray(value)) return mergeListField([], value, meta);
  return value;
}

function isDirectiveElement(v: JsonValue): v is JsonMap {
  return isJsonMap(v) && Object.hasOwn(v, DIRECTIVE);
}

/** A list field: merged when its strategy says so, else replaced by the patch list. */
function mergeListField(original: JsonValue[], patch: JsonValue[], meta: FieldPatchMeta | undefined): JsonValue[] {
  const replaceAt = patch.findIndex((e) => isDirectiveElement(e) && e[DIRECTIVE] === 'replace');
  if (meta?.merge !== true || replaceAt >= 0) {
    const schema = meta?.schema ?? {};
    return patch.filter((e) => !isDirectiveElement(e)).map((e) => (isJsonMap(e) ? mergeMap({}, e, schema) : e));
  }
  return mergeList(original, patch, meta);
}

/** kube's mergeSlice for a merging list. */
function mergeList(original: JsonValue[], patch: JsonValue[], meta: FieldPatchMeta): JsonValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  const ofMaps = [...original, ...patch].some(isJsonMap);
  let merged: JsonValue[];
  let server = original;
  let items = patch;
  const mergeKey = meta.mergeKey;
  if (!ofMaps) {
    merged = dedupe([...original, ...patch]);
  } else {
    if (mergeKey === undefined) throw new BadRequestError('cannot merge lists of maps without a merge key');
    if (![...original, ...patch].every(isJsonMap))
      throw new BadRequestError('a merging list must hold only maps or only primitives');
    ({ server, items } = applyElementDirectives(original as JsonMap[], patch as JsonMap[], mergeKey));
    merged = mergeByKey(server as JsonMap[], items as JsonMap[], mergeKey, meta.schema ?? {});
  }
  const { inList, serverOnly } = partition(merged, items, mergeKey);
  return normalizeElementOrder(inList, serverOnly, items, server, mergeKey);
}

/** `$patch: delete` elements remove their match from the original; other directive elements are refused. */
function applyElementDirectives(
  original: JsonMap[],
  patch: JsonMap[],
  mergeKey: string,
): { server: JsonMap[]; items: JsonMap[] } {
  let server = original;
  const items: JsonMap[] = [];
  for (const e of patch) {
    if (!Object.hasOwn(e, DIRECTIVE)) {
      items.push(e);
      continue;
    }
    const d = e[DIRECTIVE];
    if (d === 'delete') {
      if (!Object.hasOwn(e, mergeKey))
        throw new BadRequestError(`map: ${JSON.stringify(e)} does not contain declared merge key: ${mergeKey}`);
      server = server.filter((o) => o[mergeKey] !== e[mergeKey]);
    } else if (d === 'merge') {
      const { [DIRECTIVE]: _d, ...rest } = e;
      if (Object.keys(rest).length > 0) items.push(rest);
    } else {
      throw new BadRequestError(`unknown patch type: ${JSON.stringify(d)} in list element: ${JSON.stringify(e)}`);
    }
  }
  return { server, items };
}

function mergeByKey(original: JsonMap[], patch: JsonMap[], mergeKey: string, schema: PatchSchema): JsonValue[] {
  const out: JsonValue[] = [...original];
  for (const e of patch) {
    if (!Object.hasOwn(e, mergeKey))
      throw new BadRequestError(`map: ${JSON.stringify(e)} does not contain declared merge key: ${mergeKey}`);
    const at = out.findIndex((o) => isJsonMap(o) && o[mergeKey] === e[mergeKey]);
    if (at >= 0) out[at] = mergeMap(out[at] as JsonMap, e, schema);
    else out.push(mergeMap({}, e, schema));
  }
  return out;
}

function dedupe(values: JsonValue[]): JsonValue[] {
  const out: JsonValue[] = [];
  for (const v of values) if (!out.some((o) => o === v)) out.push(v);
  return out;
}

/** Position of `item` in `list` (by merge key for maps, by value for primitives); -1 when absent. */
function indexIn(list: readonly JsonValue[], item: JsonValue, mergeKey: string | undefined): number {
  if (isJsonMap(item) && mergeKey !== undefined)
    return list.findIndex((e) => isJsonMap(e) && e[mergeKey] === item[mergeKey]);
  return list.findIndex((e) => e === item);
}

function partition(
  merged: JsonValue[],
  list: readonly JsonValue[],
  mergeKey: string | undefined,
): { inList: JsonValue[]; serverOnly: JsonValue[] } {
  const inList: JsonValue[] = [];
  const serverOnly: JsonValue[] = [];
  for (const v of merged) (indexIn(list, v, mergeKey) >= 0 ? inList : serverOnly).push(v);
  return { inList, serverOnly };
}

function sortBy(items: JsonValue[], order: readonly JsonValue[], mergeKey: string | undefined): JsonValue[] {
  return [...items].sort((a, b) => indexIn(order, a, mergeKey) - indexIn(order, b, mergeKey)); // stable
}

/**
 * apimachinery's normalizeElementOrder: patch items sorted by `patchOrder`,
 * server-only items by `serverOrder`, then interleaved (mergeSortedSlice): a
 * server-only item goes before the next patch item when the server had it first.
 */
function normalizeElementOrder(
  patchItems: JsonValue[],
  serverOnly: JsonValue[],
  patchOrder: readonly JsonValue[],
  serverOrder: readonly JsonValue[],
  mergeKey: string | undefined,
): JsonValue[] {
  const right = sortBy(patchItems, patchOrder, mergeKey);
  const left = sortBy(serverOnly, serverOrder, mergeKey);
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]!);
    else if (j >= right.length) out.push(left[i++]!);
    else {
      const li = indexIn(serverOrder, left[i]!, mergeKey);
      const ri = indexIn(serverOrder, right[j]!, mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}

/** `$setElementOrder/<field>`: merge that field's patch list now, ordered by the directive. */
function applySetElementOrder(original: JsonMap, patch: JsonMap, schema: PatchSchema): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[key]!;
    delete patch[key];
    if (!Array.isArray(order)) throw new BadRequestError(`${key} must be a list`);
    const field = key.slice(SET_ELEMENT_ORDER.length);
    const meta = schema[field];
    const mergeKey = meta?.mergeKey;
    const current = Object.hasOwn(original, field) && Array.isArray(original[field]) ? original[field] : undefined;
    const given = Object.hasOwn(patch, field) && Array.isArray(patch[field]) ? patch[field] : undefined;
    if (given !== undefined) {
      for (const e of given) {
        if (isDirectiveElement(e) || (isJsonMap(e) && mergeKey === undefined)) continue; // maps match only by a merge key
        if (indexIn(order, e, mergeKey) < 0)
          throw new BadRequestError(
            `${key}: the patch list of ${field} has an element not in the order list: ${JSON.stringify(e)}`,
          );
      }
    }
    let merged: JsonValue[];
    if (current !== undefined && given === undefined) merged = current;
    else if (current === undefined && given !== undefined) merged = mergeListField([], given, meta);
    else if (current !== undefined && given !== undefined) merged = mergeListField(current, given, meta);
    else continue;
    const { inList, serverOnly } = partition(merged, order, mergeKey);
    setKey(original, field, normalizeElementOrder(inList, serverOnly, order, current ?? [], mergeKey));
    delete patch[field];
  }
}

/** `$retainKeys`: only the listed keys of the original survive; the patch may only set listed keys. */
function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const keep = patch[RETAIN_KEYS]!;
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(keep) || !keep.every((k) => typeof k === 'string'))
    throw new BadRequestError(`${RETAIN_KEYS} must be a list of field names`);
  const set = new Set(keep);
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!set.has(k))
      throw new BadRequestError(`invalid patch format of retainKeys: "${k}" is set but not in ${RETAIN_KEYS}`);
  }
  for (const k of Object.keys(original)) if (!set.has(k)) delete original[k];
}
