/**
 * The JSON value shapes the patch algorithms work on, and the two operations
 * they all need: telling an object (a JSON map) from the rest, and setting a
 * key as an own property (so a `__proto__` key in a patch is data, never the
 * prototype).
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonMap;
export interface JsonMap {
  [key: string]: JsonValue;
}

export function isJsonMap(v: unknown): v is JsonMap {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Set `key` as an own enumerable property, whatever its name. */
export function setKey(map: JsonMap, key: string, value: JsonValue): void {
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A shallow copy of a map (own keys only, `__proto__` included as data). */
export function copyMap(map: JsonMap): JsonMap {
  const out: JsonMap = {};
  for (const k of Object.keys(map)) setKey(out, k, map[k]!);
  return out;
}
