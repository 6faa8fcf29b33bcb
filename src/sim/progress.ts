/**
 * ProgressBar: progress of a batch of simulations on stderr. On a terminal
 * it redraws one line (bar, share done, tasks done, running tasks, elapsed);
 * otherwise it prints one line per finished task.
 */
export interface ProgressStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

export class ProgressBar {
  private readonly stream: ProgressStream;
  private readonly total: number;
  private readonly fractions = new Map<string, number>();
  private readonly started = performance.now();
  private done = 0;
  private lastDraw = 0;
  private readonly enabled: boolean;

  constructor(total: number, stream: ProgressStream = process.stderr, enabled = true) {
    this.total = total;
    this.stream = stream;
    this.enabled = enabled;
  }

  /** A task reported how far it got (0..1). */
  update(task: string, fraction: number): void {
    this.fractions.set(task, Math.max(0, Math.min(1, fraction)));
    this.draw(false);
  }

  /** A task finished. */
  finished(task: string, note = ''): void {
    this.fractions.delete(task);
    this.done++;
    if (this.enabled && this.stream.isTTY !== true) {
      this.stream.write(
        `[${this.done}/${this.total}] ${task} done${note === '' ? '' : ` (${note})`} after ${this.elapsed()}\n`,
      );
    }
    this.draw(true);
  }

  /** Clear the bar line. */
  end(): void {
    if (this.enabled && this.stream.isTTY === true) this.stream.write('\r\x1b[2K');
  }

  private elapsed(): string {
    return `${((performance.now() - this.started) / 1000).toFixed(1)}s`;
  }

  private draw(force: boolean): void {
    if (!this.enabled || this.stream.isTTY !== true) return;
    const now = performance.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    let partial = 0;
    for (const f of this.fractions.values()) partial += f;
    const share = this.total === 0 ? 1 : (this.done + partial) / this.total;
    const width = 24;
    const filled = Math.round(share * width);
    const running = [...this.fractions.keys()].join(', ');
    let line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${this.done}/${this.total} ${this.elapsed()}${running === '' ? '' : ` · ${running}`}`;
    const cols = this.stream.columns ?? 120;
    if (line.length > cols - 1) line = line.slice(0, cols - 2) + '…';
    this.stream.write(`\r\x1b[2K${line}`);
  }
}
