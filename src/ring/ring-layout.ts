/**
 * History ring layout: the shared-memory protocol of the beta mode's event
 * history, read by both threads (the writer, src/ring/ring-writer.ts, on the
 * main thread; readers, src/ring/ring-reader.ts, in the sync worker and in
 * remote consumer threads). Offsets, word meanings and the seqlock rules are
 * defined here once; what a payload's bytes mean is src/protocol/ring-payload.ts.
 *
 * Three shared buffers, all in one structured-cloneable {@link HistoryRingHandle}:
 *
 * Header (Int32 words, plus Float64 words guarded by the header seqlock HSEQ):
 *
 *   byte i32 f64 field          written by          meaning
 *   ---- --- --- -------------  ------------------  ------------------------------------------
 *      0   0     MAGIC          create              0x57435248
 *      4   1     LAYOUT         create              layout version (2)
 *      8   2     HSEQ           writer, Atomics     seqlock over the four Float64 words below
 *     12   3     PUBLISH_COUNT  writer, Atomics.add +1 per publish(); readers wait on it
 *     16   4     WAITERS        readers, Atomics    readers parked on PUBLISH_COUNT
 *     20   5     CAPACITY       writer, Atomics     slot capacity = layout modulus
 *     24   6     ARENA_SIZE     writer, Atomics     arena bytes the allocator uses
 *     28   7     MAX_CAPACITY   create
 *     32   8     MAX_ARENA      create
 *     40       5 PUBLISHED      writer, HSEQ        first absolute index not yet readable
 *     48       6 OLDEST         writer, HSEQ        oldest absolute index still valid
 *     56       7 FLOOR_RV       writer, HSEQ        RV of the last evicted event (or startRV)
 *     64       8 LAST_RV        writer, HSEQ        RV of the newest published event
 *
 * Index (growable SAB): slot = absIndex % CAPACITY, 64 bytes per slot:
 *
 *   byte i32 f64 field
 *   ---- --- --- -----------------
 *      0   0     SEQ               per-slot seqlock: odd while the writer rewrites the slot
 *      4   1     TYPE              bits 0-1: 1 ADDED, 2 MODIFIED, 3 DELETED; bit 3 (HAS_PREV): the event carries a previous object
 *      8       1 ABS               absolute index the slot holds (-1: invalidated copy)
 *     16       2 RV                event RV (safe integer, < 2^53)
 *     24   6     NS_HASH           hash32(namespace)
 *     28   7     NAME_HASH         hash32(name)
 *     32   8     TRIGGER_HASH      hash32(trigger value of the object), 0 = none
 *     36   9     PREV_TRIGGER_HASH hash32(trigger value of prevObject), 0 = none
 *     40  10     OFFSET            payload's first byte in the arena
 *     44  11     LENGTH            payload bytes (≥ 1)
 *     48  12     PREV_OFFSET       arena byte where the previous object's bytes start (PREV_LENGTH > 0)
 *     52  13     PREV_LENGTH       bytes of the previous object's frame; 0 = the slot has none
 *     56  14     REF_BY            writer's own word (readers never read it): R - abs when a later
 *                                  slot R's PREV words point into this slot's payload, else 0
 *     60  15     (unused)
 *
 * The previous object (PREV words): its bytes are either inside the slot's own
 * payload (PREV_OFFSET in [OFFSET, OFFSET + LENGTH)) or a byte range of an
 * EARLIER slot's payload: the frame of the event that carried that object (the
 * previous event on the same key), referenced instead of copied. Each slot is
 * referenced by at most one later slot (REF_BY). The referenced bytes outlive
 * their own slot when needed: see order rule 5.
 *
 * Arena (growable SAB, size a multiple of 8): a circular FIFO of contiguous
 * payloads, each starting on a 4-byte boundary (readers copy by Int32 words).
 * A payload that does not fit before the end of the arena starts again at
 * byte 0 (the tail bytes are left unused for that lap). Address order of the
 * held payloads, starting at the write position, is their age order.
 *
 * Absolute indices are monotonic safe integers that never wrap as numbers.
 * They and RVs live in Float64 words: never torn as observed, because every
 * Float64 read is bracketed by a seqlock (HSEQ for the header, SEQ per slot).
 *
 * Seqlock rules (both threads rely on them):
 *
 * - Memory model: the writer stores slot/arena words with plain stores inside
 *   the seqlock (SEQ odd … SEQ even, both Atomics.store); a reader reads SEQ
 *   by Atomics.load, the words and the bytes with plain loads, then SEQ and
 *   OLDEST again by Atomics.load. The publication direction (plain stores,
 *   then an Atomics store; an Atomics load, then plain loads) is sound under
 *   the JS memory model. The validation direction (plain loads that must not
 *   move below the re-check's Atomics.load) relies on V8 treating Atomics as
 *   compiler barriers and on x86-64 (TSO) keeping loads in order, which this
 *   project runs on; ECMAScript has no standalone fence, so every SAB seqlock
 *   or byte ring in JS carries that assumption. SEQ is a 32-bit counter: an
 *   ABA would need a reader to stall through 2^31 rewrites of one slot, and
 *   the ABS and OLDEST checks would still catch a reused slot.
 *
 * Order rules the writer keeps (each enforced at the line that says INVARIANT):
 *   1. publish ordering: slot and arena stores of every event below PUBLISHED
 *      precede the Atomics stores of HSEQ/PUBLISHED; a reader loads PUBLISHED
 *      (by HSEQ) before any slot word.
 *   2. overwritten detection: OLDEST is advanced (HSEQ) before an evicted event's
 *      slot or arena bytes are reused; a reader re-checks OLDEST ≤ its index
 *      after copying.
 *   3. torn-read detection: SEQ (per slot) and HSEQ (header) are odd while the
 *      words they guard change; the same even value before and after a read
 *      means one consistent version.
 *   4. layout switch: CAPACITY changes only when every held event is at
 *      abs % CAPACITY under the new value (copies first, invalidation after).
 *   5. referenced bytes: the bytes a held slot's PREV words point at are never
 *      reused while that slot is held, even after the slot that carried them
 *      was evicted. So a reader validates a previous object exactly as its
 *      payload: same even SEQ of the referencing slot, then OLDEST ≤ its index.
 *      (Below maxArenaBytes the arena grows rather than cover them; at
 *      maxArenaBytes the referencing slot is evicted first, FIFO kept.) When
 *      the writer moves them (arena relocation) it rewrites PREV_OFFSET under
 *      the referencing slot's SEQ.
 */
import type { ChangeType } from '../core/types.js';

/** Event type codes stored in a slot's TYPE word. */
export const EventTypeCode = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;
export type EventTypeCode = (typeof EventTypeCode)[keyof typeof EventTypeCode];

/** ChangeType → slot code. */
export function eventTypeCode(type: ChangeType): EventTypeCode {
  return type === 'ADDED' ? EventTypeCode.ADDED : type === 'MODIFIED' ? EventTypeCode.MODIFIED : EventTypeCode.DELETED;
}

/** Slot code → ChangeType. */
export function eventTypeName(code: number): ChangeType {
  if (code === EventTypeCode.ADDED) return 'ADDED';
  if (code === EventTypeCode.MODIFIED) return 'MODIFIED';
  if (code === EventTypeCode.DELETED) return 'DELETED';
  throw new RangeError(`unknown event type code ${code}`);
}

/** Bit of a slot's TYPE word: the event carries a previous object. */
export const TYPE_HAS_PREV = 8;
/** The type code bits of a slot's TYPE word. */
export const TYPE_CODE_MASK = 3;

/** Everything a reader in another thread needs: only SharedArrayBuffers and numbers. */
export interface HistoryRingHandle {
  readonly header: SharedArrayBuffer;
  readonly index: SharedArrayBuffer;
  readonly arena: SharedArrayBuffer;
  readonly layout: number;
}

/** Header constants and word numbers (the Header table above). */
export const MAGIC = 0x57435248;
export const LAYOUT = 2;
export const HEADER_BYTES = 128;

export const H_MAGIC = 0;
export const H_LAYOUT = 1;
export const H_HSEQ = 2;
export const H_PUBLISH_COUNT = 3;
export const H_WAITERS = 4;
export const H_CAPACITY = 5;
export const H_ARENA_SIZE = 6;
export const H_MAX_CAPACITY = 7;
export const H_MAX_ARENA = 8;
export const HF_PUBLISHED = 5;
export const HF_OLDEST = 6;
export const HF_FLOOR_RV = 7;
export const HF_LAST_RV = 8;

/** Slot size and word numbers (the Index table above). */
export const SLOT_BYTES = 64;
export const SLOT_I32 = 16;
export const SLOT_F64 = 8;
export const S_SEQ = 0;
export const S_TYPE = 1;
export const SF_ABS = 1;
export const SF_RV = 2;
export const S_NS = 6;
export const S_NAME = 7;
export const S_TRIGGER = 8;
export const S_PREV_TRIGGER = 9;
export const S_OFFSET = 10;
export const S_LENGTH = 11;
export const S_PREV_OFFSET = 12;
export const S_PREV_LENGTH = 13;
export const S_REF_BY = 14;

/** Arena offsets are Int32 words; sizes are multiples of 8. */
export const ARENA_LIMIT = 0x7ffffff8;

/** Payloads start on 4-byte boundaries, so readers copy them by Int32 words. */
export function align4(n: number): number {
  return n + ((4 - (n & 3)) & 3);
}
