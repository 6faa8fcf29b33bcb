/**
 * JSON Merge Patch (RFC 7386), `application/merge-patch+json`: a map patch
 * merges key by key into a map target (a null value removes the key), any
 * other patch value replaces the target. Arrays are replaced whole. The
 * target is not modified.
 */
import { copyMap, isJsonMap, setKey, type JsonValue } from './json-values.js';

export function applyMergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonMap(patch)) return patch;
  const out = isJsonMap(target) ? copyMap(target) : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key]!;
    if (value === null) delete out[key];
    else setKey(out, key, applyMergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}
