/**
 * ArenaPrefault: the sync worker commits the history ring's arena pages
 * ahead of the main thread's writer, so the ring mirror's first lap over the
 * arena does not pay a page fault per page on the main thread.
 *
 * The arena is a growable SharedArrayBuffer: the OS commits each page on its
 * first write. On this 2-vCPU VM a first write costs about 11 µs per 4 KiB
 * page (minor fault), so packing a 2 KiB pod's payload into fresh arena costs
 * ~6 µs more than into arena written before (13.9 against 8.0 µs per pack,
 * `in-place-pack` into a fresh 64 MiB SharedArrayBuffer against one touched
 * first). Until the writer has gone once round the arena (and after each time
 * it doubles) every event paid that on the main thread, about a quarter of the
 * ring mirror's cost (issue 13, deliverable 3).
 *
 * Steps:
 * 1. The main thread asks for [0, upTo): RingMirror sends the arena end it
 *    wants warm (its write position plus PREFAULT_WINDOW_BYTES) whenever the
 *    writer comes within half a window of what it asked last.
 * 2. The worker touches one word per page, PREFAULT_SLICE_BYTES at a time,
 *    each slice in a turn of its own, so its passes run between slices.
 *
 * Invariant (no value changes): a touch is Atomics.compareExchange(word, 0, 0).
 * It writes only where the word is already 0, and writes 0. It is an atomic
 * read-modify-write, so a plain store by the writer to the same word is never
 * lost: it lands either before (the exchange then leaves it) or after. A touch
 * may land on live payload bytes or on bytes the writer is writing at that
 * moment; neither thread ever sees a value change.
 */
import type { Clock } from '../core/clock.js';

/** How far ahead of the writer the arena is kept committed (about 4,000 payloads of 2 KiB). */
export const PREFAULT_WINDOW_BYTES = 8 * 1024 * 1024;
/** Bytes touched per turn of the worker: 256 pages, ~3 ms at ~11 µs a fault. */
const PREFAULT_SLICE_BYTES = 1024 * 1024;
/** The page size the touches step by (4 KiB: a larger page is touched more than once, which is harmless). */
const PAGE_BYTES = 4096;

/** The worker's side: touches the arena pages it was asked for, a slice per turn. */
export class ArenaPrefault {
  private readonly arena: SharedArrayBuffer;
  private readonly clock: Clock;
  /** Every page below this was touched by this worker. */
  private touched = 0;
  /** The end the main thread asked for last. */
  private target = 0;
  private scheduled = false;
  private stopped = false;
  /** Pages touched so far (a statistic for tests and tools). */
  pages = 0;

  constructor(arena: SharedArrayBuffer, clock: Clock) {
    this.arena = arena;
    this.clock = clock;
  }

  /** Step 1: the main thread wants [0, upTo) committed. */
  request(upTo: number): void {
    if (this.stopped || !(upTo > this.target)) return;
    this.target = upTo;
    this.schedule();
  }

  /** No more touches (the worker is stopping). */
  stop(): void {
    this.stopped = true;
  }

  /** True while asked-for pages are still untouched. */
  get pending(): boolean {
    return this.touched < Math.min(this.target, this.arena.byteLength);
  }

  private schedule(): void {
    if (this.scheduled || !this.pending) return;
    this.scheduled = true;
    this.clock.setTimeout(this.step, 0);
  }

  /** Step 2: one slice. */
  private readonly step = (): void => {
    this.scheduled = false;
    if (this.stopped) return;
    // The arena may have grown since the request (a growable buffer's length follows grow() in every thread):
    // never past its length now. Scheduled only while pending (schedule), so touched < end here.
    const length = this.arena.byteLength;
    const end = Math.min(this.target, this.touched + PREFAULT_SLICE_BYTES, length);
    // A fixed-length view of what this slice touches: the words up to `end` rounded up (the arena's length is
    // a whole number of words, so never past it). An end asked for anywhere inside a word is still reached.
    const words = new Int32Array(this.arena, 0, Math.min((end + 3) >> 2, length >> 2));
    let pages = 0;
    for (let b = this.touched - (this.touched % PAGE_BYTES); b < end; b += PAGE_BYTES) {
      // Invariant (no value changes): 0 stays 0, anything else is left as it is (module doc).
      Atomics.compareExchange(words, b >> 2, 0, 0);
      pages++;
    }
    this.pages += pages;
    // Invariant (progress): every slice moves `touched` forward, so `pending` ends after finitely many slices.
    // (Rounding `end` down to a word once left a request ending inside a word pending for ever: a slice per
    // turn that touched one page and kept the worker thread at 100 % of a core until the next request.)
    this.touched = end;
    this.schedule();
  };
}

/**
 * The main thread's side (step 1): after each append, asks the worker (`ask`)
 * for the next window once the writer is within half a window of what it
 * asked for last.
 */
export class PrefaultRequests {
  private readonly ask: (upTo: number) => void;
  /** The end asked for last (0: nothing yet). */
  asked = 0;

  constructor(ask: (upTo: number) => void) {
    this.ask = ask;
  }

  /** After an append that left the writer at `writeEnd` in an arena of `arenaBytes`. */
  afterAppend(writeEnd: number, arenaBytes: number): void {
    const asked = this.asked;
    if (asked >= arenaBytes || writeEnd + PREFAULT_WINDOW_BYTES / 2 <= asked) return;
    // Above `asked`: the arena is larger than it, and the writer within half a window of it.
    const upTo = Math.min(arenaBytes, writeEnd + PREFAULT_WINDOW_BYTES);
    this.asked = upTo;
    this.ask(upTo);
  }
}
