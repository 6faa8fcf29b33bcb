/**
 * The README's walkthrough as written: `watchcache serve`, the informer
 * example (examples/informer.mjs, @kubernetes/client-node 2.x loading on
 * Node 20 through the undici override) and kubectl applying, labelling and
 * deleting the example manifests under examples/. kubectl is required when
 * CI is set (else the test is skipped with a reason).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/http-client.js';
import { findKubectl, KUBECTL_MISSING, kubectlRunner } from '../support/kubectl.js';
import { serve, type Served } from '../support/serve-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const KUBECTL = findKubectl();
const CI = process.env.CI !== undefined && process.env.CI !== '';
const skip = KUBECTL === undefined && !CI ? KUBECTL_MISSING : false;

let server: Served | undefined;
let informer: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), 'watchcache-examples-'));
after(async () => {
  informer?.kill('SIGTERM');
  server?.child.kill('SIGTERM');
  if (server !== undefined) await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

test('the informer example sees what kubectl applies from examples/', { skip, timeout: 90_000 }, async () => {
  assert.ok(KUBECTL !== undefined, `${KUBECTL_MISSING}; CI is set, so this is an error`);
  server = await serve(['--resources', 'pods,configmaps']);
  let out = '';
  let err = '';
  informer = spawn(process.execPath, [join(ROOT, 'examples', 'informer.mjs'), server.url], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  informer.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  informer.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const printed = (re: RegExp): Promise<void> =>
    waitUntil(() => re.test(out), `the informer example to print ${re} (stdout: ${out}; stderr: ${err})`, 30_000);
  await printed(/^watching pods in default on /m);

  const k = kubectlRunner(KUBECTL, dir, server.url);
  const ok = async (args: string[], re: RegExp): Promise<void> => {
    const r = await k(args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, re);
  };
  await ok(['apply', '-f', join(ROOT, 'examples', 'pod.yaml')], /^pod\/web created$/m);
  await printed(/^added web \(resourceVersion \d+\)$/m);
  await ok(['apply', '-f', join(ROOT, 'examples', 'configmap.yaml')], /^configmap\/web-config created$/m);
  await ok(['get', 'pods'], /^web\s+0\/1\s/m);
  await ok(['get', 'configmaps'], /^web-config\s+2\s/m);
  await ok(['label', 'pod', 'web', 'tier=front'], /^pod\/web labeled$/m);
  await printed(/^updated web /m);
  await ok(['delete', 'pod', 'web'], /^pod "web" deleted$/m);
  await printed(/^deleted web /m);
  assert.equal(err, '', 'the example loaded and never stopped with an error');
});
