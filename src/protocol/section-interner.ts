/**
 * SectionInterner: the strings and label maps of ring payloads' SELECTION
 * sections, each decoded once while it stays in a small table, for a reader
 * that reads the section of every scanned event (beta's sync worker).
 *
 * Why: a catch-up scans every event of the history and a label selector
 * needs each one's labels and previous labels. Decoding them afresh cost the
 * worker ~0.8 µs per event in a CPU profile (a string built byte by byte for
 * each name, key and value, a dictionary-mode object per label map), plus
 * their garbage, while a history holds few distinct label sets and names:
 * most events update an object that an event shortly before touched.
 *
 * How: two direct-mapped tables keyed by an FNV-1a hash of the encoded
 * bytes. A string entry is a hit when the cached string has exactly the
 * bytes (ASCII: one compare per byte, no copy held); a label-map entry holds
 * a copy of the map's bytes and is a hit when they are equal. A miss decodes
 * and replaces the entry. Nothing allocates on a hit.
 *
 * INVARIANT (shared maps): a label map is handed to every event whose
 * section has the same bytes, so it is frozen; readers of a skeleton only
 * read its labels (selection), never change them.
 */

import { sectionString } from './ring-payload.js';

const STRING_SLOTS = 4096;
const LABEL_SLOTS = 1024;
/** Strings longer than this are not interned (decoded each time). */
const MAX_INTERNED_STRING = 64;
/** Label maps encoded in more bytes than this are not interned. */
const MAX_INTERNED_LABEL_BYTES = 1024;

/** FNV-1a (32-bit) over bytes[at, at + n). */
function hashBytes(bytes: Uint8Array, at: number, n: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = at, end = at + n; i < end; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** Whether `s` is ASCII and its bytes are bytes[at, at + n). */
function asciiEquals(s: string, bytes: Uint8Array, at: number, n: number): boolean {
  if (s.length !== n) return false;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) !== bytes[at + i]) return false;
  return true;
}

function bytesEqual(a: Uint8Array, bytes: Uint8Array, at: number, n: number): boolean {
  if (a.length !== n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== bytes[at + i]) return false;
  return true;
}

export class SectionInterner {
  private readonly strings: (string | undefined)[] = new Array<string | undefined>(STRING_SLOTS).fill(undefined);
  private readonly labelBytes: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(LABEL_SLOTS).fill(
    undefined,
  );
  private readonly labelMaps: (Readonly<Record<string, string>> | undefined)[] = new Array<
    Readonly<Record<string, string>> | undefined
  >(LABEL_SLOTS).fill(undefined);
  private stringHits = 0;
  private labelHits = 0;

  /** The UTF-8 string bytes[at, at + n). */
  string(bytes: Uint8Array, at: number, n: number): string {
    if (n > MAX_INTERNED_STRING) return sectionString(bytes, at, n);
    const slot = hashBytes(bytes, at, n) & (STRING_SLOTS - 1);
    const cached = this.strings[slot];
    if (cached !== undefined && asciiEquals(cached, bytes, at, n)) {
      this.stringHits++;
      return cached;
    }
    const s = sectionString(bytes, at, n);
    // Only ASCII strings are kept: asciiEquals compares them byte for byte.
    if (s.length === n) this.strings[slot] = s;
    return s;
  }

  /**
   * The label map encoded in bytes[at, end) (a LABELS field: its pairs' bytes), decoded by `decode` on a
   * miss; frozen and shared (the module's INVARIANT).
   */
  labels(
    bytes: Uint8Array,
    at: number,
    end: number,
    decode: () => Record<string, string>,
  ): Readonly<Record<string, string>> {
    const n = end - at;
    if (n > MAX_INTERNED_LABEL_BYTES) return Object.freeze(decode());
    const slot = hashBytes(bytes, at, n) & (LABEL_SLOTS - 1);
    const cachedBytes = this.labelBytes[slot];
    if (cachedBytes !== undefined && bytesEqual(cachedBytes, bytes, at, n)) {
      this.labelHits++;
      return this.labelMaps[slot]!;
    }
    const map = Object.freeze(decode());
    this.labelBytes[slot] = bytes.slice(at, end);
    this.labelMaps[slot] = map;
    return map;
  }

  /** Lookups answered from the tables (strings, label maps): a statistic. */
  get hits(): { strings: number; labels: number } {
    return { strings: this.stringHits, labels: this.labelHits };
  }
}
