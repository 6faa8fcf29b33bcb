/**
 * `watchcache simulate` as a command: exit codes, the table, and the JSON
 * and HTML reports (the HTML is self-contained: no script, no external URL).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runSimulateCommand } from '../../src/sim/simulate-command.js';
import type { SimReport } from '../../src/sim/report.js';

/** Run the command with stdout/stderr captured. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = (c: string | Uint8Array) => (out.push(String(c)), true);
  process.stderr.write = (c: string | Uint8Array) => (err.push(String(c)), true);
  try {
    const code = await runSimulateCommand(argv);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

const tiny = {
  name: 'tiny',
  durationS: 1,
  drainS: 1,
  seed: 3,
  tickMs: 2,
  engine: { channelCapacity: 5 },
  writes: { rate: [{ atS: 0, perSecond: 100 }], objects: 20, namespaces: { count: 2 } },
  watchers: [
    { name: 'fast', count: 2, selector: { kind: 'all' }, readRate: 'unlimited' },
    {
      name: 'slow',
      count: 2,
      selector: { kind: 'all' },
      readRate: 150,
      stalls: [{ atS: 0.2, forS: 0.3, fraction: 1 }],
    },
  ],
};

test('simulate command: table, JSON and self-contained HTML', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wc-sim-'));
  const file = join(dir, 'tiny.json');
  await writeFile(file, JSON.stringify(tiny));
  const json = join(dir, 'out.json');
  const html = join(dir, 'out.html');
  const r = await run([
    '--scenario',
    file,
    '--json',
    json,
    '--html',
    html,
    '--modes',
    'off,alpha',
    '--no-progress',
    '--threads',
    '1',
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^tiny /m);
  assert.match(r.out, /^off /m);
  assert.match(r.out, /^alpha /m);
  const report = JSON.parse(await readFile(json, 'utf8')) as SimReport;
  assert.equal(report.runs.length, 1);
  assert.deepEqual(
    report.runs[0]!.results.map((x) => x.variant.mode),
    ['off', 'alpha'],
  );
  const page = await readFile(html, 'utf8');
  assert.match(page, /^<!DOCTYPE html>/);
  assert.ok((page.match(/<svg /g) ?? []).length >= 8, 'the plots are inline SVG');
  assert.doesNotMatch(page, /<script|<link|\bsrc=|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
});

test('simulate command: usage errors and invalid scenarios exit 2', async () => {
  assert.equal((await run(['--bogus'])).code, 2);
  assert.equal((await run(['--sweep', 'colour=1'])).code, 2);
  assert.equal((await run(['--modes', 'gamma'])).code, 2);
  const dir = await mkdtemp(join(tmpdir(), 'wc-sim-'));
  const file = join(dir, 'bad.json');
  await writeFile(file, JSON.stringify({ ...tiny, durationS: 0 }));
  const r = await run(['--scenario', file, '--no-progress']);
  assert.equal(r.code, 2);
  assert.match(r.err, /durationS: must be > 0/);
  const help = await run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.out, /^Usage: watchcache simulate \[options\]$/m);
});
