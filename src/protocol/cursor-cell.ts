/**
 * The cursor cell: one watcher's KEP position and the consumer's "drained
 * since its last service" flag, in two Float64 slots. In beta it is shared
 * memory (the first CELL_BYTES of the watcher's slab region,
 * src/beta/channel-slabs.ts, or a buffer of its own for a remote watcher), so
 * the main thread, the sync worker and the consuming thread read and write
 * the one copy; in off and alpha it is a plain array. Every side opens it
 * through SyncCursor (src/sync/sync-cursor.ts).
 *
 * | slot | meaning                                  | written by                              |
 * |------|------------------------------------------|-----------------------------------------|
 * | 0    | position (RV)                            | whoever owns the channel's writer side  |
 * | 1    | drained since last service (1 / 0)       | consumer sets, the serving pass clears  |
 *
 * Plain (non-Atomics) loads and stores: the position is written only by the
 * channel's current writer, and the hand-off of the writer side
 * (SpscChannel.handOff, a compare-and-swap) orders one writer's stores before
 * the next one's. The drained flag only orders candidates (key 2): a set
 * racing a pass's clear loses that one mark, nothing else.
 */

/** Slot of the position (RV). */
export const CELL_POSITION = 0;
/** Slot of the drained flag (1 / 0). */
export const CELL_DRAINED = 1;
/** Slots in a cell. */
export const CELL_SLOTS = 2;
/** Bytes of a cell (at the start of a slab region). */
export const CELL_BYTES = 8 * CELL_SLOTS;
