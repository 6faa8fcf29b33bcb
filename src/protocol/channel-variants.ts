/**
 * Channel codes: the values a watcher's SPSC channel (src/ring/spsc-channel.ts)
 * carries in shared memory, one table for every thread that reads or writes
 * one: the main thread (live path, hand-back), the sync worker (passes) and a
 * consumer in another thread (src/beta/watch-port.ts).
 *
 * | code          | where in the channel       | values                                                    |
 * |---------------|----------------------------|-----------------------------------------------------------|
 * | `Variant`     | VARIANT[slot] (Uint8)      | 0 as is, 1 ADDED, 2 DELETED (a history reference), 3 BOOKMARK (the reference is the RV) |
 * | `Terminal`    | TERMINAL header word       | 0 open, 1 END (clean), 2 EXPIRED (in-stream 410)           |
 * | `WriterOwner` | WRITER_OWNER header word   | 0 main thread, 1 sync worker                              |
 *
 * A variant says what the consumer delivers for a popped reference: a
 * selector transition changes the type delivered (MODIFIED delivered as
 * ADDED when the object starts matching, as DELETED when it stops), so the
 * slot holds the variant beside the reference, never a copy of the event.
 */
import { Delivery } from '../selection/selection.js';

/** What the consumer delivers for a popped reference. */
export const Variant = { AS_IS: 0, ADDED: 1, DELETED: 2, BOOKMARK: 3 } as const;
export type Variant = (typeof Variant)[keyof typeof Variant];

/** Why a closed channel ended. */
export const Terminal = { NONE: 0, END: 1, EXPIRED: 2 } as const;
export type Terminal = (typeof Terminal)[keyof typeof Terminal];

/** Which thread is the channel's producer (single writer). */
export const WriterOwner = { MAIN: 0, SYNC_WORKER: 1 } as const;
export type WriterOwner = (typeof WriterOwner)[keyof typeof WriterOwner];

/** The variant of a history event delivered as `delivery` (Selection.classify; never Delivery.None). */
export function variantOf(delivery: Delivery): Variant {
  // Arithmetic, not a lookup of Variant's fields: it runs in every live push (shared-watcher-channel.ts).
  // Variant = Delivery − 1 for the three deliveries (AsIs 1 → AS_IS 0, Added 2 → ADDED 1, Deleted 3 →
  // DELETED 2); None (0, never a delivery) → AS_IS. test/ring/channel-variants.test.ts checks the table.
  return (delivery > Delivery.AsIs ? delivery - 1 : 0) as Variant;
}

/**
 * Largest reference whose slot word is a small integer: 4·ref + 3 < 2^30 (V8's Smi range with pointer
 * compression, so the word is one tagged field everywhere and a push stores it with one conversion).
 */
const SMALL_WORD_REF_BOUND = 2 ** 28 - 1;

/**
 * The slot word (4·ref + variant: a channel slot's format, src/ring/spsc-channel.ts) of history event `ref`
 * delivered as `delivery`, or -1: not a history reference (a bookmark), or above SMALL_WORD_REF_BOUND.
 * Computed once per delivered form (WatchEvent.slotWord), so the live push of every watcher that receives
 * it stores one ready word (issue 13, deliverable 2); -1 sends the push to the path that packs it itself.
 */
export function slotWordOf(ref: number, delivery: number): number {
  return ref >= 0 && ref <= SMALL_WORD_REF_BOUND ? ref * 4 + variantOf(delivery) : -1;
}

/** The delivery a history-event variant stands for (not BOOKMARK: that is no history event). */
export function deliveryOf(variant: Variant): Delivery {
  return variant === Variant.ADDED ? Delivery.Added : variant === Variant.DELETED ? Delivery.Deleted : Delivery.AsIs;
}
