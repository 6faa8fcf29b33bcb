/**
 * Scale-out: two `watchcache serve --store etcd` processes in front of one
 * etcd. Writes through either server are seen by the watchers of the other,
 * in the same RV order (etcd's revisions), each exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RawWatch, request } from '../support/http-client.js';
import { startEtcd } from '../support/etcd-server.js';
import { serve } from '../support/serve-process.js';

const etcd = await startEtcd();

test(
  'two servers over one etcd: a write through one is seen, in order, by watchers of the other',
  { skip: etcd === null ? 'etcd not installed' : false, timeout: 120_000 },
  async (t) => {
    t.after(() => etcd?.stop());
    const a = await serve(['--store', 'etcd', '--etcd', etcd!.endpoint, '--mode', 'beta']);
    const b = await serve(['--store', 'etcd', '--etcd', etcd!.endpoint, '--mode', 'alpha']);
    t.after(async () => {
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
      await Promise.all([a.exited, b.exited]);
    });
    const list = await request(`${b.url}/api/v1/namespaces/default/pods?resourceVersion=`);
    assert.equal(list.status, 200);
    const rv = list.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const onB = new RawWatch(b.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    const onA = new RawWatch(a.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
    const written: string[] = [];
    for (let i = 0; i < 20; i++) {
      const via = i % 2 === 0 ? a : b; // alternate: both servers write into the one etcd
      const r = await request(`${via.url}/api/v1/namespaces/default/pods`, {
        method: 'POST',
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}` }, spec: { i } },
      });
      assert.equal(r.status, 201, r.text);
      written.push(`ADDED p${i}@${r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion}`);
    }
    const del = await request(`${b.url}/api/v1/namespaces/default/pods/p0`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    written.push(`DELETED p0@${del.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion}`);
    const seen = (w: RawWatch): string[] =>
      w.events
        .filter((e) => e.type !== 'BOOKMARK')
        .map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);
    await onB.waitFor(() => seen(onB).length >= written.length, 'server B sees every write');
    await onA.waitFor(() => seen(onA).length >= written.length, 'server A sees every write');
    assert.deepEqual(seen(onB), written, 'B: every write through either server, in RV order, once');
    assert.deepEqual(seen(onA), written, 'A: the same sequence');
    // A read-your-write through the other server: a consistent list on A sees B's last write.
    const listA = await request(`${a.url}/api/v1/namespaces/default/pods?resourceVersion=`);
    assert.equal(listA.json<{ items: unknown[] }>().items.length, 19);
    onA.close();
    onB.close();
  },
);
