/**
 * /metrics passes `promtool check metrics` (Debian's prometheus package; CI
 * extracts promtool into .ci/tools and sets $PROMTOOL). When promtool is missing it
 * fails under CI and skips with the reason otherwise (the reason is in the closing summary).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startFixture } from './server-fixture.js';

function findPromtool(): string | undefined {
  if (process.env.PROMTOOL !== undefined && existsSync(process.env.PROMTOOL)) return process.env.PROMTOOL;
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir !== '' && existsSync(join(dir, 'promtool'))) return join(dir, 'promtool');
  return undefined;
}
const PROMTOOL = findPromtool();
const MISSING =
  "promtool is not installed (set PROMTOOL=/path/to/promtool or put it on PATH; .ci/run extracts it from Debian's prometheus package)";
if (PROMTOOL === undefined && process.env.CI)
  throw new Error("promtool is required in CI (.ci/run extracts it from Debian's prometheus package)");

test(
  'GET /metrics passes promtool check metrics',
  { skip: PROMTOOL === undefined ? MISSING : false, timeout: 60_000 },
  async () => {
    for (const mode of ['off', 'alpha', 'beta'] as const) {
      const fx = await startFixture({ mode, resources: ['pods', 'configmaps'] });
      try {
        await fx.store('pods').create({ metadata: { namespace: 'default', name: 'a' } });
        await fetch(`${fx.url}/api/v1/pods?resourceVersion=`).then((r) => r.text());
        const text = await fetch(`${fx.url}/metrics`).then((r) => r.text());
        assert.match(text, /apiserver_watch_cache_watcher_stalls_total/);
        const out = await new Promise<{ code: number | null; output: string }>((resolve) => {
          const p = spawn(PROMTOOL!, ['check', 'metrics']);
          let output = '';
          p.stdout.on('data', (d: Buffer) => (output += d.toString()));
          p.stderr.on('data', (d: Buffer) => (output += d.toString()));
          p.on('close', (code) => resolve({ code, output }));
          p.stdin.end(text);
        });
        // promtool exits 0 when the exposition parses; lint findings (help text, naming) are reported too.
        assert.equal(out.code, 0, `promtool check metrics (${mode}) failed:\n${out.output}`);
      } finally {
        await fx.close();
      }
    }
  },
);
