/**
 * A command-line mistake (unknown flag, bad value): printed with a hint to
 * --help, exit status 2.
 */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
