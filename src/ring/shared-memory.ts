/**
 * Typed access to the shared-memory features the ring modules use that Node 20
 * has at run time but the project's `lib` (ES2023) does not declare:
 *
 * - growable SharedArrayBuffer: `new SharedArrayBuffer(n, { maxByteLength })`
 *   and `.grow(n)` (ES2024). Checked on Node 20.20 (platform-floor.md §6): a
 *   length-tracking view (a typed array built without an explicit length)
 *   follows `grow()` in every thread the buffer was shared with. Shrinking is
 *   not possible (RangeError).
 * - `Atomics.waitAsync` (ES2024). A pending waitAsync by itself does NOT keep
 *   the Node event loop alive; {@link waitAsync} below holds a ref'd handle
 *   while it waits unless told not to.
 *
 * Plus a spin back-off used by the seqlock readers.
 */

/** What `Atomics.wait` / `Atomics.waitAsync` report. */
export type WaitOutcome = 'ok' | 'not-equal' | 'timed-out';

interface GrowableSharedArrayBuffer extends SharedArrayBuffer {
  readonly growable: boolean;
  readonly maxByteLength: number;
  grow(newByteLength: number): void;
}

type GrowableSabConstructor = new (byteLength: number, options: { maxByteLength: number }) => GrowableSharedArrayBuffer;

type WaitAsyncResult =
  { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };

type WaitAsyncFn = (typedArray: Int32Array, index: number, value: number, timeout?: number) => WaitAsyncResult;

/** A SharedArrayBuffer of `byteLength` bytes that can later grow up to `maxByteLength`. */
export function createGrowableSab(byteLength: number, maxByteLength: number): SharedArrayBuffer {
  const Ctor = SharedArrayBuffer as unknown as GrowableSabConstructor;
  const sab = new Ctor(byteLength, { maxByteLength });
  if (sab.growable !== true || typeof sab.grow !== 'function') {
    throw new Error('growable SharedArrayBuffer is not supported by this runtime');
  }
  return sab;
}

/** Grow a growable SharedArrayBuffer to at least `newByteLength` (never shrinks). */
export function growSab(sab: SharedArrayBuffer, newByteLength: number): void {
  if (newByteLength <= sab.byteLength) return;
  (sab as GrowableSharedArrayBuffer).grow(newByteLength);
}

/**
 * `Atomics.waitAsync(array, index, value, timeoutMs)` as a promise. Resolves
 * 'not-equal' at once when the word already differs from `value`. Allocates
 * (a promise): not for per-event hot paths.
 *
 * keepAlive (default true): while the wait is pending, hold a ref'd handle (an
 * idle interval that never fires in practice; it is a keep-alive, not a
 * timing device) so the process does not exit with the wait unsettled, the
 * way a pending socket read keeps it alive. Pass false for waits that must
 * not keep the process alive.
 */
export function waitAsync(
  array: Int32Array,
  index: number,
  value: number,
  timeoutMs?: number,
  keepAlive = true,
): Promise<WaitOutcome> {
  const fn = (Atomics as unknown as { waitAsync?: WaitAsyncFn }).waitAsync;
  if (typeof fn !== 'function') {
    return Promise.reject(new Error('Atomics.waitAsync is not supported by this runtime'));
  }
  const r = fn(array, index, value, timeoutMs === undefined ? Infinity : timeoutMs);
  if (!r.async) return Promise.resolve(r.value);
  if (!keepAlive) return r.value;
  const handle = setInterval(noop, 0x7fffffff);
  return r.value.finally(() => clearInterval(handle));
}

function noop(): void {}

const pauseCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * Back-off for a seqlock reader that found a word mid-update: spin for the
 * first few attempts, then sleep a few microseconds so a descheduled writer
 * can finish (Atomics.wait is allowed on Node's main thread too; it blocks for
 * at most ~50 µs here).
 */
export function backoff(attempt: number): void {
  if (attempt < 64) return;
  Atomics.wait(pauseCell, 0, 0, 0.05);
}
