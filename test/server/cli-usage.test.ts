/**
 * What a user of the `watchcache` command sees first: `--version`, one help
 * format on every subcommand (Usage line, description, Options with
 * -h/--help), and a bad flag answered with one line naming it and a hint,
 * exit 2, never a stack trace.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { timeout: 20_000 }, (err, out, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out, err: stderr });
    });
  });
}

test('--version and -v print the package version', async () => {
  for (const flag of ['--version']) {
    const r = await run([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.out, `watchcache ${PACKAGE.version}\n`);
  }
});

test('every subcommand has the same --help format', async () => {
  for (const [command, flag] of [
    ['serve', '--help'],
    ['bench', '--help'],
    ['simulate', '-h'],
  ] as const) {
    {
      const r = await run([command, flag]);
      assert.equal(r.code, 0, `${command} ${flag}: ${r.err}`);
      assert.equal(r.err, '');
      assert.match(r.out, new RegExp(`^Usage: watchcache ${command} \\[options\\]\\n\\n\\S`), `${command} ${flag}`);
      assert.match(r.out, /\n\nOptions:\n {2}--/);
      assert.match(r.out, /^ {2}-h, --help {20}Show this help$/m);
    }
  }
  assert.deepEqual(await run(['help', 'serve']), await run(['serve', '-h']));
  const main = await run(['--help']);
  assert.match(main.out, /^Usage: watchcache <command> \[options\]\n/);
  assert.match(main.out, /^ {2}-v, --version {17}Print the version$/m);
});

test('a bad flag or command: one line naming it, a hint, exit 2, no stack trace', async () => {
  const cases: [string[], RegExp][] = [
    [
      ['serve', '--bogus'],
      /^watchcache serve: Unknown option '--bogus'.*\nRun 'watchcache serve --help' for usage\.\n$/s,
    ],
    [['serve', '--port', 'x'], /^watchcache serve: --port must be .*\nRun 'watchcache serve --help' for usage\.\n$/s],
    [['bench', '--bogus'], /^watchcache bench: .*--bogus.*\nRun 'watchcache bench --help' for usage\.\n$/s],
    [['simulate', '--bogus'], /^watchcache simulate: .*--bogus.*\nRun 'watchcache simulate --help' for usage\.\n$/s],
    [['frobnicate'], /^watchcache: unknown command "frobnicate"\nRun 'watchcache --help' for usage\.\n$/],
  ];
  for (const [args, err] of cases) {
    const r = await run(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.out, '');
    assert.match(r.err, err);
    assert.doesNotMatch(r.err, /^\s+at /m, 'no stack trace');
  }
});
