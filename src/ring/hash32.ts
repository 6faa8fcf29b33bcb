/**
 * 32-bit selection-key hashes stored in history-ring slots (namespace, name,
 * trigger values), so a reader can pre-filter events without decoding them.
 *
 * FNV-1a over the string's UTF-16 code units: no allocation, no encoding step.
 * A hash is never 0; 0 ({@link NO_VALUE_HASH}) means "no value" (for example
 * an object without a trigger value, or no previous object). Hashes collide:
 * a hash match is only a candidate, and the consumer confirms on the decoded
 * object; a hash mismatch is a definite "not selected".
 */

/** The hash slot value for "absent". {@link hash32} never returns it. */
export const NO_VALUE_HASH = 0;

/** FNV-1a (32-bit) of `value`'s UTF-16 code units, as a signed int32, never 0. */
export function hash32(value: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h === 0 ? 1 : h;
}

/** {@link hash32} of a possibly absent value; {@link NO_VALUE_HASH} when undefined. */
export function hashOptional(value: string | undefined): number {
  return value === undefined ? NO_VALUE_HASH : hash32(value);
}
