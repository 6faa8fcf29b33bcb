/**
 * Agenda: the simulator's own to-do list on the driver's tick grid (paced
 * reads waiting for a token, delayed reconnects, stall starts and ends).
 * One slot per tick instead of one engine timer per action, so a run with
 * thousands of paced readers costs one driver step per tick, not one event
 * loop turn per read.
 */
export class Agenda {
  private readonly tickMs: number;
  private readonly origin: number;
  private readonly slots = new Map<number, (() => void)[]>();
  /** The slot being (or last) run; work scheduled for it or earlier lands in the next one. */
  private current = -1;

  constructor(origin: number, tickMs: number) {
    this.origin = origin;
    this.tickMs = tickMs;
  }

  /** Run `fn` at the first tick at or after clock time `at`. */
  at(at: number, fn: () => void): void {
    let slot = Math.ceil((at - this.origin) / this.tickMs - 1e-9);
    if (slot <= this.current) slot = this.current + 1;
    let list = this.slots.get(slot);
    if (list === undefined) this.slots.set(slot, (list = []));
    list.push(fn);
  }

  /** Run everything due in slots up to `slot` (in slot order, then insertion order). */
  run(slot: number): void {
    while (this.current < slot) {
      this.current++;
      const list = this.slots.get(this.current);
      if (list === undefined) continue;
      this.slots.delete(this.current);
      for (let i = 0; i < list.length; i++) list[i]!();
    }
  }

  get pending(): number {
    let n = 0;
    for (const l of this.slots.values()) n += l.length;
    return n;
  }
}
