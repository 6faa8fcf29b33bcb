/**
 * Test reporter (`node --test --test-reporter=./dist/test/support/summary-reporter.js`): node's spec
 * reporter, followed by a closing summary that names every skipped test with its reason (so a test
 * whose tool — etcd, kubectl, promtool, openssl — is missing says so at the end of the run, not only
 * in a line scrolled past), and the plain line `tests: N passed, N failed, N skipped`.
 *
 * Under CI (CI set, and not '' / 'false' / '0') nothing may skip: a skipped test makes the run exit 1.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { spec } from 'node:test/reporters';

/** The fields of a node:test reporter event that this reporter reads. */
interface TestEvent {
  type: string;
  data?: {
    name?: string;
    file?: string;
    nesting?: number;
    skip?: string | boolean;
    todo?: string | boolean;
    details?: { type?: string; error?: { failureType?: string } };
  };
}

interface Skipped {
  readonly where: string;
  readonly reason: string;
}

function inCI(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/** `file › name`, the file relative to the working directory. */
function where(data: NonNullable<TestEvent['data']>): string {
  const file = data.file === undefined ? '' : data.file.replace(process.cwd() + '/', '').replace(/^file:\/\//, '');
  return file === '' || file === data.name ? (data.name ?? '?') : `${file} › ${data.name ?? '?'}`;
}

class SummaryReporter extends Transform {
  private readonly inner: Transform = new spec();
  private readonly skipped: Skipped[] = [];
  private passed = 0;
  private failed = 0;

  constructor() {
    super({ writableObjectMode: true });
    this.inner.on('data', (chunk: string | Buffer) => this.push(chunk));
  }

  override _transform(event: TestEvent, _encoding: BufferEncoding, done: TransformCallback): void {
    this.count(event);
    this.inner.write(event, done);
  }

  override _flush(done: TransformCallback): void {
    this.inner.once('end', () => {
      this.push(this.closing());
      done();
    });
    this.inner.end();
  }

  private count(event: TestEvent): void {
    const data = event.data;
    if (data === undefined) return;
    const isSuite = data.details?.type === 'suite';
    if (event.type === 'test:pass') {
      if (data.skip !== undefined && data.skip !== false) {
        this.skipped.push({
          where: where(data),
          reason: typeof data.skip === 'string' ? data.skip : '(no reason given)',
        });
      } else if (!isSuite && (data.todo === undefined || data.todo === false)) {
        this.passed++;
      }
    } else if (event.type === 'test:fail') {
      // A suite fails when one of its tests does (counted there); it counts itself only for its own error.
      if (!isSuite || data.details?.error?.failureType !== 'subtestsFailed') this.failed++;
    }
  }

  private closing(): string {
    const lines: string[] = [''];
    if (this.skipped.length > 0) {
      lines.push(`skipped (${this.skipped.length}), each with its reason:`);
      for (const s of this.skipped) lines.push(`  - ${s.where}: ${s.reason}`);
      if (inCI()) {
        lines.push('CI is set, and in CI nothing may skip: install what the skipped tests need (see .ci/run).');
        process.exitCode = 1;
      }
    }
    lines.push(`tests: ${this.passed} passed, ${this.failed} failed, ${this.skipped.length} skipped`, '');
    return lines.join('\n');
  }
}

export default new SummaryReporter();
