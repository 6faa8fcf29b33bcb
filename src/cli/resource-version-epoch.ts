/**
 * Where the embedded memory store's resource versions start, so that an RV
 * handed out before a restart is never taken for a future RV after it.
 *
 * The memory store keeps nothing across a restart. Its RVs start at the
 * time the server starts, in microseconds since the Unix epoch, and count one
 * per write from there. An RV from an earlier run is at most that run's start
 * plus its number of writes, which is below this run's start unless the
 * earlier run averaged more than one write per microsecond (or the wall clock
 * was set back by more than the earlier run lasted). So a client that comes
 * back with an old RV is older than the new history: it gets 410 Expired and
 * re-lists, as after an etcd compaction, instead of silently waiting for a
 * "future" RV while missing every new object.
 *
 * Microseconds since 1970 stay safe integers (< 2^53) until the year 2255.
 */

/** The start RV of a memory store created now. */
export function resourceVersionEpoch(nowMs: number = Date.now()): number {
  const rv = Math.floor(nowMs) * 1000;
  if (!Number.isSafeInteger(rv) || rv < 0)
    throw new RangeError(`the clock (${nowMs} ms) gives no safe resource version epoch`);
  return rv;
}
