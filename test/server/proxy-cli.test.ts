/**
 * `watchcache serve --store kube`: the --upstream* flags and --kubeconfig (read the way kubectl
 * reads it), checked as flags and end to end against a TLS root that needs a bearer token.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeArgs } from '../../src/cli/serve-command.js';
import { readKubeconfig, resolveUpstream } from '../../src/cli/kubeconfig.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { request, waitUntil } from '../support/http-client.js';
import { makeSelfSignedCert } from '../support/self-signed-cert.js';
import { serve, type Served } from '../support/serve-process.js';

async function stopServed(s: Served): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
}

describe('serve --store kube flags', () => {
  test('the upstream flags need --store kube; --store kube needs an upstream; URLs are checked', () => {
    const cases: [string[], RegExp][] = [
      [['--upstream', 'http://127.0.0.1:1'], /--upstream needs --store kube/],
      [['--kubeconfig', 'x'], /--kubeconfig needs --store kube/],
      [
        ['--store', 'memory', '--upstream-insecure-skip-tls-verify'],
        /--upstream-insecure-skip-tls-verify needs --store kube/,
      ],
      [['--store', 'kube'], /--store kube needs --upstream URL or --kubeconfig FILE/],
      [['--store', 'kube', '--upstream', 'ftp://x'], /--upstream must be an http:\/\/ or https:\/\/ URL/],
      [['--store', 'kube', '--upstream', ''], /--upstream must not be empty/],
    ];
    for (const [args, message] of cases)
      assert.throws(
        () => parseServeArgs(args),
        (err: unknown) => err instanceof UsageError && message.test(err.message),
        args.join(' '),
      );
    const c = parseServeArgs([
      '--store',
      'kube',
      '--upstream',
      'https://127.0.0.1:6443',
      '--upstream-token',
      't',
      '--upstream-ca',
      'ca.pem',
      '--upstream-insecure-skip-tls-verify',
    ]);
    assert.deepEqual(c?.upstream, {
      server: 'https://127.0.0.1:6443',
      token: 't',
      caFile: 'ca.pem',
      insecureSkipTLSVerify: true,
      watchList: false,
      kubeconfig: undefined,
    });
    assert.equal(
      parseServeArgs(['--store', 'kube', '--upstream', 'http://x:1', '--upstream-watch-list'])?.upstream.watchList,
      true,
    );
  });

  test('a kubeconfig: the current context, files relative to it, -data fields, tokenFile; flags override', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'watchcache-kubeconfig-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'ca.pem'), 'CA-PEM');
    writeFileSync(join(dir, 'token'), 'file-token\n');
    const file = join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: b',
        'clusters:',
        '- name: one',
        '  cluster: { server: "https://one:6443", insecure-skip-tls-verify: true }',
        '- name: two',
        '  cluster:',
        '    server: https://two:6443',
        '    certificate-authority: ca.pem',
        'users:',
        '- name: u1',
        '  user: { token: inline-token }',
        '- name: u2',
        '  user:',
        '    tokenFile: token',
        `    client-certificate-data: ${Buffer.from('CERT').toString('base64')}`,
        `    client-key-data: ${Buffer.from('KEY').toString('base64')}`,
        'contexts:',
        '- { name: a, context: { cluster: one, user: u1 } }',
        '- { name: b, context: { cluster: two, user: u2, namespace: default } }',
      ].join('\n'),
    );
    const o = readKubeconfig(file);
    assert.equal(o.server, 'https://two:6443');
    assert.equal(String(o.ca), 'CA-PEM');
    assert.equal(o.token, 'file-token');
    assert.equal(String(o.clientCert), 'CERT');
    assert.equal(String(o.clientKey), 'KEY');
    assert.equal(o.insecureSkipTLSVerify, undefined);
    const overridden = resolveUpstream({
      kubeconfig: file,
      server: 'https://three:1',
      token: 'flag-token',
      caFile: undefined,
      insecureSkipTLSVerify: true,
      watchList: false,
    });
    assert.equal(overridden.server, 'https://three:1');
    assert.equal(overridden.token, 'flag-token');
    assert.equal(overridden.insecureSkipTLSVerify, true);
    writeFileSync(file, 'current-context: nope\ncontexts: []\n');
    assert.throws(() => readKubeconfig(file), /no context named "nope"/);
    assert.throws(() => readKubeconfig(join(dir, 'missing')), /cannot read/);
  });
});

describe('a proxy in front of a TLS root that needs a token', () => {
  const dir = mkdtempSync(join(tmpdir(), 'watchcache-proxy-tls-'));
  const made = makeSelfSignedCert(dir);

  test(
    '--kubeconfig (CA data, token) and --upstream with --upstream-ca or --upstream-insecure-skip-tls-verify',
    { skip: typeof made === 'string' ? made : false, timeout: 90_000 },
    async (t) => {
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const { cert, key } = made as { cert: string; key: string };
      const served = await serve(['--tls-cert', cert, '--tls-key', key, '--token', 's3cret']);
      t.after(() => stopServed(served));
      const root = { ...served, url: `https://127.0.0.1:${served.port}` };
      const ca = readFileSync(cert);
      const created = await request(`${root.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        ca,
        headers: { authorization: 'Bearer s3cret' },
        body: { metadata: { name: 'on-root' } },
      });
      assert.equal(created.status, 201, created.text);
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'current-context: root',
          `clusters: [{ name: root, cluster: { server: "${root.url}", certificate-authority-data: "${ca.toString('base64')}" } }]`,
          'users: [{ name: admin, user: { token: s3cret } }]',
          'contexts: [{ name: root, context: { cluster: root, user: admin } }]',
        ].join('\n'),
      );
      const proxies = [
        await serve(['--store', 'kube', '--kubeconfig', kubeconfig]),
        await serve(['--store', 'kube', '--upstream', root.url, '--upstream-ca', cert, '--upstream-token', 's3cret']),
        await serve([
          '--store',
          'kube',
          '--upstream',
          root.url,
          '--upstream-insecure-skip-tls-verify',
          '--upstream-token',
          's3cret',
        ]),
      ];
      const untrusting = await serve(['--store', 'kube', '--upstream', root.url, '--upstream-token', 's3cret']);
      t.after(() => Promise.all([...proxies, untrusting].map(stopServed)));
      for (const p of proxies) {
        assert.equal(p.line[5], 'kube');
        await waitUntil(async () => (await request(`${p.url}/readyz`)).status === 200, `${p.url} ready`);
        const list = await request(`${p.url}/api/v1/namespaces/default/pods`);
        assert.deepEqual(
          list.json<{ items: { metadata: { name: string } }[] }>().items.map((o) => o.metadata.name),
          ['on-root'],
        );
        // A write through the proxy lands in the root, answered as the root answered it.
        const name = `via-${p.port}`;
        const w = await request(`${p.url}/api/v1/namespaces/default/pods`, {
          method: 'POST',
          body: { metadata: { name } },
        });
        assert.equal(w.status, 201, w.text);
        const onRoot = await request(`${root.url}/api/v1/namespaces/default/pods/${name}`, {
          ca,
          headers: { authorization: 'Bearer s3cret' },
        });
        assert.equal(
          onRoot.json<{ metadata: { uid: string } }>().metadata.uid,
          w.json<{ metadata: { uid: string } }>().metadata.uid,
        );
        await request(`${root.url}/api/v1/namespaces/default/pods/${name}`, {
          method: 'DELETE',
          ca,
          headers: { authorization: 'Bearer s3cret' },
        });
      }
      // No CA and verification on: the root's certificate is not trusted; the proxy never gets ready.
      const ready = await request(`${untrusting.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(ready.text, /\[-\]store pods: unreachable: .*certificate/i, 'readyz names the upstream and why');
      assert.match(untrusting.stderr(), /self.signed|certificate/i);
    },
  );
});
