/**
 * The `watchcache` CLI as a real process: --help, usage errors (exit 2),
 * the listening line with the real port, SIGTERM with open watches (HTTP/1.1
 * and h2c: every response ends cleanly, exit 0), and `--store etcd` against a
 * throwaway etcd (skipped with a reason when etcd is not installed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { H2Watch, RawWatch, request, waitUntil } from '../support/http-client.js';
import { startEtcd } from '../support/etcd-server.js';
import { serve, type Served } from '../support/serve-process.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('watchcache CLI arguments', () => {
  test('--help prints the serve usage and exits 0', () => {
    const r = run(['serve', '--help']);
    assert.equal(r.status, 0);
    for (const flag of [
      '--host',
      '--port',
      '--mode',
      '--store',
      '--etcd',
      '--resources',
      '--token',
      '--channel-capacity',
      '--history-upper-bound',
      '--bookmark-frequency-ms',
      '--tls-cert',
      '--tls-key',
      '--max-watches',
    ]) {
      assert.ok(r.stdout.includes(flag), flag);
    }
    assert.equal(run(['--help']).status, 0);
  });

  test('usage errors exit 2 with a clear message', () => {
    const cases: [string[], RegExp][] = [
      [['serve', '--bogus'], /Unknown option '--bogus'/],
      [['serve', '--port', 'x'], /--port must be an integer between 0 and 65535, got "x"/],
      [['serve', '--port', '70000'], /--port must be an integer/],
      [['serve', '--mode', 'fast'], /--mode must be one of off, alpha, beta, got "fast"/],
      [['serve', '--store', 'redis'], /--store must be memory, etcd or kube/],
      [['serve', '--resources', 'pods,,cm'], /--resources/],
      [['serve', '--resources', 'Pods'], /invalid resource name "Pods"/],
      [['serve', '--resources', 'pods,pods'], /lists "pods" twice/],
      [['serve', '--channel-capacity', '0'], /--channel-capacity must be an integer between 1/],
      [['serve', '--tls-cert', 'c.pem'], /--tls-cert and --tls-key must be given together/],
      [
        ['serve', '--tls-cert', '/nonexistent/c.pem', '--tls-key', '/nonexistent/k.pem', '--port', '0'],
        /--tls-cert: cannot read/,
      ],
      [['serve', '--etcd', 'http://x:1'], /--etcd needs --store etcd/],
      [['serve', '--max-watches', '-3'], /--max-watches/],
      [['serve', 'extra'], /Unexpected argument|positional/i],
      [['frobnicate'], /unknown command "frobnicate"/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
  });

  test('bench and simulate: --help exits 0, bad flags and a missing scenario exit 2 with a clear message', () => {
    assert.equal(run(['bench', '--help']).status, 0);
    assert.equal(run(['simulate', '--help']).status, 0);
    const bad = run(['bench', '--bogus']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /Unknown option '--bogus'/);
    const missing = run(['simulate', '--scenario', '/nonexistent/scenario.json']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /invalid scenario .*cannot read/s);
  });
});

describe('watchcache serve process', () => {
  test('prints the listening line, serves, and on SIGTERM ends every watch cleanly and exits 0', async () => {
    const s = await serve([
      '--resources',
      'pods,configmaps',
      '--mode',
      'alpha',
      '--token',
      't0k',
      '--max-watches',
      '10',
    ]);
    try {
      assert.equal(s.line[1], 'pods,configmaps,events', 'events is always served (kubectl describe lists them)');
      assert.equal(s.line[4], 'alpha');
      assert.equal(s.line[5], 'memory');
      await waitUntil(async () => (await request(`${s.url}/readyz`)).status === 200, '/readyz');
      const auth = { authorization: 'Bearer t0k' };
      assert.equal((await request(`${s.url}/api/v1/pods`)).status, 401);
      const h1 = new RawWatch(s.port, '/api/v1/namespaces/default/pods?watch=true', auth);
      const h2 = new H2Watch(s.url, '/api/v1/namespaces/default/configmaps?watch=true', { headers: auth });
      await Promise.all([h1.response, h2.response]);
      assert.equal(h1.status, 200);
      assert.equal(h2.status, 200);
      const created = await request(`${s.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        body: { metadata: { name: 'p' }, spec: {} },
        headers: auth,
      });
      assert.equal(created.status, 201);
      await h1.waitFor(() => h1.events.length === 1, 'the ADDED event');
      s.child.kill('SIGTERM');
      await h1.waitFor(() => h1.endedCleanly, 'the HTTP/1.1 watch to end with the terminating chunk');
      await h2.waitFor(() => h2.endedCleanly, 'the HTTP/2 watch to end with END_STREAM');
      assert.ok(!h1.events.some((e) => e.type === 'ERROR'));
      const { code, signal } = await s.exited;
      assert.equal(signal, null);
      assert.equal(code, 0, s.stderr());
    } finally {
      s.child.kill('SIGKILL');
    }
  });

  test('--store etcd serves from a real etcd', async (t) => {
    const etcd = await startEtcd();
    if (etcd === null) {
      t.skip('etcd is not installed (CI unset)');
      return;
    }
    let s: Served | undefined;
    try {
      s = await serve(['--store', 'etcd', '--etcd', etcd.endpoint, '--resources', 'pods,configmaps']);
      assert.equal(s.line[5], 'etcd');
      const url = s.url;
      await waitUntil(async () => (await request(`${url}/readyz`)).status === 200, '/readyz with etcd');
      const w = new RawWatch(s.port, '/api/v1/namespaces/default/configmaps?watch=true');
      await w.response;
      const c = await request(`${url}/api/v1/namespaces/default/configmaps`, {
        method: 'POST',
        body: { metadata: { name: 'cfg' }, data: { a: '1' } },
      });
      assert.equal(c.status, 201, c.text);
      assert.equal(c.json<{ kind: string }>().kind, 'ConfigMap');
      await w.waitFor(() => w.events.length === 1, 'the ADDED event from etcd');
      assert.equal(w.events[0]!.object.metadata.name, 'cfg');
      assert.equal((await request(`${url}/api/v1/namespaces/default/configmaps/cfg`)).status, 200);
      const d = await request(`${url}/api/v1/namespaces/default/configmaps/cfg`, { method: 'DELETE' });
      assert.equal(d.status, 200);
      await w.waitFor(() => w.events.length === 2, 'the DELETED event');
      assert.equal(w.events[1]!.type, 'DELETED');
      s.child.kill('SIGTERM');
      await w.waitFor(() => w.endedCleanly, 'a clean end on SIGTERM');
      assert.equal((await s.exited).code, 0, s.stderr());
    } finally {
      s?.child.kill('SIGKILL');
      await etcd.stop();
    }
  });
});
