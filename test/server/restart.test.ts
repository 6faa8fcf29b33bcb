/**
 * Restart safety of the embedded memory store, end to end: a
 * @kubernetes/client-node informer connected to `watchcache serve` before a
 * restart ends up exactly matching the server after it, with no silent gap.
 *
 * The restart is two real server processes behind one TCP proxy (the address
 * the informer knows): the second server is started, gets writes of its own,
 * the proxy is pointed at it, and the first gets SIGTERM. The informer's
 * watch ends cleanly and it reconnects at once from its last RV (no re-list,
 * no error) to the new server. Had the new server's RVs started at 1 again,
 * that old RV would look like a future RV there: the informer would wait on
 * it, never see the new objects and keep the deleted ones. With the RV epoch
 * the old RV is older than the new history: 410, re-list, exact match.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { request, waitUntil } from '../support/http-client.js';
import { serve, type Served } from '../support/serve-process.js';
import { pod } from './server-fixture.js';

/**
 * A TCP proxy whose backend port can be switched. A connection opened before
 * the switch moves to the new backend with the first bytes the client sends
 * after it (HTTP/1.1 without pipelining: the previous response is complete
 * by then), so a request the client sends on a kept-alive connection after
 * the switch never reaches the old, shutting-down server.
 */
async function startProxy(port: number): Promise<{ port: number; target(port: number): void; close(): Promise<void> }> {
  let backend = port;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): net.Socket => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    return s;
  };
  const server = net.createServer((client) => {
    track(client);
    let upstreamPort = -1;
    let upstream: net.Socket | undefined;
    const connect = (): net.Socket => {
      const u = track(net.connect(backend, '127.0.0.1'));
      upstreamPort = backend;
      u.on('data', (d: Buffer) => {
        if (u === upstream) client.write(d);
      });
      u.on('close', () => {
        if (u === upstream) client.destroy();
      });
      return u;
    };
    upstream = connect();
    client.on('data', (d: Buffer) => {
      if (upstreamPort !== backend) {
        const old = upstream!;
        upstream = connect();
        old.destroy();
      }
      upstream!.write(d);
    });
    client.on('close', () => upstream?.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    target: (p) => void (backend = p),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

interface Listed {
  metadata?: { name?: string; resourceVersion?: string };
}

const servers: Served[] = [];
after(() => {
  for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

test(
  'an informer connected before a memory-store restart matches the server after it',
  { timeout: 60_000 },
  async () => {
    const first = await serve(['--resources', 'pods']);
    servers.push(first);
    // Enough writes that the first server's RVs are far above anything the second hands out first.
    for (let i = 0; i < 6; i++)
      assert.equal(
        (await request(`${first.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod(`old-${i}`) }))
          .status,
        201,
      );
    assert.equal(
      (await request(`${first.url}/api/v1/namespaces/default/pods/old-0`, { method: 'DELETE' })).status,
      200,
    );

    const proxy = await startProxy(first.port);
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'local', server: `http://127.0.0.1:${proxy.port}`, skipTLSVerify: true }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'local', cluster: 'local', user: 'anonymous', namespace: 'default' }],
      currentContext: 'local',
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/pods', () =>
      core.listNamespacedPod({ namespace: 'default' }),
    );
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    const names = (): string[] =>
      informer
        .list('default')
        .map((o) => o.metadata?.name ?? '')
        .sort();
    try {
      await waitUntil(() => names().length === 5, 'the informer lists the first server');
      const firstRV = Number(
        (await request(`${first.url}/api/v1/namespaces/default/pods`)).json<{ metadata: { resourceVersion: string } }>()
          .metadata.resourceVersion,
      );

      const second = await serve(['--resources', 'pods']);
      servers.push(second);
      for (const name of ['new-1', 'new-2'])
        assert.equal(
          (await request(`${second.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: pod(name) })).status,
          201,
        );
      proxy.target(second.port);
      first.child.kill('SIGTERM');
      assert.equal((await first.exited).code, 0);

      const truth = (await request(`${second.url}/api/v1/namespaces/default/pods`)).json<{
        metadata: { resourceVersion: string };
        items: Listed[];
      }>();
      assert.ok(
        Number(truth.metadata.resourceVersion) > firstRV,
        `the second server's RVs (${truth.metadata.resourceVersion}) start above the first's (${firstRV})`,
      );
      const expected = truth.items.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
      const actual = (): string[] =>
        informer
          .list('default')
          .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
          .sort();
      await waitUntil(
        () => actual().join() === expected.join(),
        `the informer to match the second server (${expected.join()}); it has ${actual().join()}`,
        20_000,
      );
      assert.deepEqual(
        errors,
        [],
        'the informer never stopped with an error: the restart was handled by its own 410 re-list',
      );
      second.child.kill('SIGTERM');
      await second.exited;
    } finally {
      await informer.stop();
      await proxy.close();
    }
  },
);
