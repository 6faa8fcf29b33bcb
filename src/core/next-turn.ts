/**
 * NextTurn: one run of `run` on the next turn of the event loop (the clock's
 * setImmediate: timers and I/O run before it, and it has no 1 ms timer
 * floor; setTimeout 0 on a clock without one), at most one pending at a
 * time. The per-turn slices of work that must not hold the main thread in
 * one go schedule their next slice with it (beta's stall hand-over and its
 * hand-backs, the live path's live-first walk), and beta's deferred mirror
 * its flush.
 */
import type { Clock } from './clock.js';

/** Run `run` once on `clock`'s next turn: its setImmediate where it has one, else setTimeout 0. */
function onNextTurn(clock: Clock, run: () => void): void {
  if (clock.setImmediate !== undefined) clock.setImmediate(run);
  else clock.setTimeout(run, 0);
}

export class NextTurn {
  private readonly clock: Clock;
  private readonly run: () => void;
  private pending = false;
  private closed = false;
  private readonly fire = (): void => {
    if (!this.pending) return; // cancelled (or closed) since it was scheduled
    this.pending = false;
    this.run();
  };

  constructor(clock: Clock, run: () => void) {
    this.clock = clock;
    this.run = run;
  }

  /** Run on the next turn, unless a run is pending already or it was closed. */
  schedule(): void {
    if (this.pending || this.closed) return;
    this.pending = true;
    onNextTurn(this.clock, this.fire);
  }

  /** The pending run, if any, does nothing (the work was done meanwhile); a later `schedule` plans a new one. */
  cancel(): void {
    this.pending = false;
  }

  /** Nothing runs from now on. */
  close(): void {
    this.closed = true;
    this.pending = false;
  }
}
