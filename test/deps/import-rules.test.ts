/**
 * The import direction, checked on the sources (CI runs it with `npm test`):
 *  - the engine (everything the package entry src/index.ts reaches) never
 *    imports the simulator, the CLI, the benchmarks or the tests, nor the
 *    tool-only packages tinybench and hdr-histogram-js;
 *  - src/cli reaches the benchmarks only through their command module;
 *  - no engine file imports test-only fault injection (src/testing/): the
 *    harness hands its faults to a cache as an engine-internal option
 *    (src/cache/engine-options.ts, src/watch/fault-points.ts);
 *  - the threads that only read the history ring (the sync worker, a remote
 *    watch consumer) never reach its writer (src/ring/ring-writer.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function specifiers(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of src.matchAll(IMPORT)) out.push((m[1] ?? m[2])!);
  return out;
}

/** A relative specifier's source file (the .js suffix names the .ts source). */
function sourceOf(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const ts = resolve(dirname(from), spec.replace(/\.js$/, '.ts'));
  return existsSync(ts) ? ts : undefined;
}

function rel(f: string): string {
  return relative(ROOT, f);
}

function reachable(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (files.has(f)) continue;
    files.add(f);
    for (const s of specifiers(f)) {
      const t = sourceOf(f, s);
      if (t !== undefined) todo.push(t);
      else if (!s.startsWith('.'))
        packages.add(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
    }
  }
  return { files, packages };
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

test('the engine reaches no tool: simulator, CLI, benchmarks, tests, tinybench, hdr-histogram-js', () => {
  const { files, packages } = reachable(join(ROOT, 'src/index.ts'));
  const tools = [...files].map(rel).filter((f) => /^(src\/sim|src\/cli|native-bench|test)\//.test(f));
  assert.deepEqual(tools, []);
  assert.equal(packages.has('tinybench'), false, 'tinybench is in the engine graph');
  assert.equal(packages.has('hdr-histogram-js'), false, 'hdr-histogram-js is in the engine graph');
});

test('the worker thread entry reaches no tool either', () => {
  const entry = join(ROOT, 'workers/sync-worker.ts');
  if (!existsSync(entry)) return;
  const { files, packages } = reachable(entry);
  assert.deepEqual(
    [...files].map(rel).filter((f) => /^(src\/sim|src\/cli|native-bench|test)\//.test(f)),
    [],
  );
  assert.equal(packages.has('tinybench') || packages.has('hdr-histogram-js'), false);
});

test('the ring readers (sync worker thread, remote watch consumer) never reach the ring writer', () => {
  for (const entry of ['workers/sync-worker.ts', 'src/beta/watch-port.ts']) {
    const { files } = reachable(join(ROOT, entry));
    assert.ok(files.has(join(ROOT, 'src/ring/ring-reader.ts')), `${entry} does not read the ring`);
    assert.equal(files.has(join(ROOT, 'src/ring/ring-writer.ts')), false, `${entry} reaches src/ring/ring-writer.ts`);
  }
});

test('src/cli reaches the benchmarks only through their command module', () => {
  for (const f of walk(join(ROOT, 'src/cli'))) {
    for (const s of specifiers(f)) {
      const t = sourceOf(f, s);
      if (t !== undefined && rel(t).startsWith('native-bench/'))
        assert.equal(rel(t), 'native-bench/bench-command.ts', `${rel(f)} imports ${s}`);
    }
  }
});

test('no engine file imports test-only fault injection (it is an engine-internal option)', () => {
  const importers: string[] = [];
  for (const f of walk(join(ROOT, 'src'))) {
    if (/^src\/(testing|sim|cli)\//.test(rel(f))) continue;
    for (const s of specifiers(f))
      if (sourceOf(f, s) !== undefined && rel(sourceOf(f, s)!).startsWith('src/testing/')) importers.push(rel(f));
  }
  assert.deepEqual(importers.sort(), []);
});
