/**
 * Table output: the age format (apimachinery's HumanDuration), the pod
 * STATUS / READY / RESTARTS rules of kube-apiserver's printer, Accept
 * negotiation and includeObject, and Tables over HTTP on list, get and
 * watch (column definitions in the first watch event only).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration } from '../../src/server/table/human-duration.js';
import { podCells } from '../../src/server/table/pod-printer.js';
import { tableRequest } from '../../src/server/table/table-request.js';
import { RawWatch, request } from '../support/http-client.js';
import { pod, startFixture, type Fixture } from './server-fixture.js';

const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const KUBECTL_ACCEPT = `${TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`;

describe('ages', () => {
  test('HumanDuration as apimachinery prints it', () => {
    const s = 1000;
    const cases: [number, string][] = [
      [-3 * s, '<invalid>'],
      [-1 * s, '0s'],
      [0, '0s'],
      [119 * s, '119s'],
      [120 * s, '2m'],
      [200 * s, '3m20s'],
      [15 * 60 * s, '15m'],
      [179 * 60 * s, '179m'],
      [3 * 3600 * s, '3h'],
      [(5 * 3600 + 10 * 60) * s, '5h10m'],
      [30 * 3600 * s, '30h'],
      [52 * 3600 * s, '2d4h'],
      [10 * 86400 * s, '10d'],
      [(3 * 365 + 5) * 86400 * s, '3y5d'],
      [9 * 365 * 86400 * s, '9y'],
    ];
    for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms} ms`);
  });
});

describe('pod columns', () => {
  const now = Date.parse('2026-01-01T01:00:00Z');
  const base = {
    metadata: { name: 'p', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { containers: [{ name: 'a' }, { name: 'b' }] },
  };
  test('a running pod: ready count, phase, restarts with the last restart age', () => {
    const cells = podCells(
      {
        ...base,
        spec: { ...base.spec, nodeName: 'n1', readinessGates: [{ conditionType: 'x/ready' }] },
        status: {
          phase: 'Running',
          podIPs: [{ ip: '10.0.0.7' }],
          conditions: [{ type: 'x/ready', status: 'True' }],
          containerStatuses: [
            {
              name: 'a',
              ready: true,
              restartCount: 2,
              state: { running: {} },
              lastState: { terminated: { finishedAt: '2026-01-01T00:55:00Z' } },
            },
            { name: 'b', ready: false, restartCount: 0, state: { running: {} } },
          ],
        },
      },
      now,
    );
    assert.deepEqual(cells, ['p', '1/2', 'Running', '2 (5m ago)', '60m', '10.0.0.7', 'n1', '<none>', '1/1']);
  });
  test('waiting and terminated reasons, init containers, Terminating', () => {
    const waiting = podCells(
      {
        ...base,
        status: {
          phase: 'Pending',
          containerStatuses: [{ name: 'a', state: { waiting: { reason: 'CrashLoopBackOff' } }, restartCount: 4 }],
        },
      },
      now,
    );
    assert.equal(waiting[2], 'CrashLoopBackOff');
    assert.equal(waiting[3], '4');
    const exit = podCells(
      {
        ...base,
        status: { phase: 'Failed', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 3 } } }] },
      },
      now,
    );
    assert.equal(exit[2], 'ExitCode:3');
    const init = podCells(
      {
        ...base,
        spec: { ...base.spec, initContainers: [{ name: 'i0' }, { name: 'i1' }] },
        status: {
          phase: 'Pending',
          initContainerStatuses: [{ state: { terminated: { exitCode: 0 } } }, { state: { running: {} } }],
        },
      },
      now,
    );
    assert.equal(init[2], 'Init:1/2');
    const gone = podCells(
      {
        ...base,
        metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:59:00Z' },
        status: { phase: 'Running' },
      },
      now,
    );
    assert.equal(gone[2], 'Terminating');
    const bare = podCells({ metadata: { name: 'q' } }, now);
    assert.deepEqual(bare, ['q', '0/0', '', '0', '<unknown>', '<none>', '<none>', '<none>', '<none>']);
  });
});

describe('Accept', () => {
  const none = new URLSearchParams();
  test("kubectl's Accept asks for a v1 Table; v1beta1 alone too; plain JSON first means no Table", () => {
    assert.deepEqual(tableRequest(KUBECTL_ACCEPT, none), { version: 'v1', includeObject: 'Metadata' });
    assert.deepEqual(tableRequest('application/json;as=Table;v=v1beta1;g=meta.k8s.io', none), {
      version: 'v1beta1',
      includeObject: 'Metadata',
    });
    assert.equal(tableRequest(`application/json,${TABLE_V1}`, none), undefined);
    assert.equal(tableRequest('application/json;as=Table;v=v9;g=meta.k8s.io, application/json', none), undefined);
    assert.equal(tableRequest(undefined, none), undefined);
    assert.deepEqual(tableRequest(TABLE_V1, new URLSearchParams('includeObject=Object')), {
      version: 'v1',
      includeObject: 'Object',
    });
    assert.throws(
      () => tableRequest(TABLE_V1, new URLSearchParams('includeObject=All')),
      (e: { code: number }) => e.code === 400,
    );
  });
});

interface Table {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string };
  columnDefinitions: { name: string; priority: number }[];
  rows: {
    cells: unknown[];
    object?: {
      kind: string;
      apiVersion?: string;
      metadata: { name: string; namespace: string; labels?: Record<string, string> };
      spec?: unknown;
    };
  }[];
}

describe('Tables over HTTP', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ resources: ['pods', 'configmaps', 'services'] });
    await f.store().create(pod('t-1', 'default', 0, { app: 't' }));
    await f
      .store('configmaps')
      .create({ metadata: { namespace: 'default', name: 'c' }, data: { a: '1' }, binaryData: { b: 'AA==' } });
    await f.store('services').create({ metadata: { namespace: 'default', name: 's' } });
  });
  after(() => f.close());

  test('list: pod columns, rows with PartialObjectMetadata, the list RV; the Content-Type names the Table', async () => {
    const r = await request(`${f.url}/api/v1/namespaces/default/pods`, { headers: { accept: KUBECTL_ACCEPT } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], TABLE_V1);
    const t = r.json<Table>();
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.equal(t.metadata.resourceVersion, String(f.cache().resourceVersion));
    assert.deepEqual(
      t.columnDefinitions.map((c) => `${c.name}:${c.priority}`),
      [
        'Name:0',
        'Ready:0',
        'Status:0',
        'Restarts:0',
        'Age:0',
        'IP:1',
        'Node:1',
        'Nominated Node:1',
        'Readiness Gates:1',
      ],
    );
    assert.deepEqual(t.rows[0]!.cells.slice(0, 4), ['t-1', '0/1', '', '0']);
    assert.deepEqual(t.rows[0]!.object, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: t.rows[0]!.object!.metadata,
    });
    assert.equal(t.rows[0]!.object.metadata.namespace, 'default');
    assert.deepEqual(t.rows[0]!.object.metadata.labels, { app: 't' });
  });

  test('get: one row; includeObject=Object and None; v1beta1', async () => {
    const one = (
      await request(`${f.url}/api/v1/namespaces/default/configmaps/c?includeObject=Object`, {
        headers: { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' },
      })
    ).json<Table>();
    assert.equal(one.apiVersion, 'meta.k8s.io/v1beta1');
    assert.deepEqual(
      one.columnDefinitions.map((c) => c.name),
      ['Name', 'Data', 'Age'],
    );
    assert.deepEqual(one.rows[0]!.cells.slice(0, 2), ['c', 2]);
    assert.equal(one.rows[0]!.object!.kind, 'ConfigMap');
    const bare = (
      await request(`${f.url}/api/v1/namespaces/default/services?includeObject=None`, { headers: { accept: TABLE_V1 } })
    ).json<Table>();
    assert.deepEqual(
      bare.columnDefinitions.map((c) => c.name),
      ['Name', 'Age'],
    );
    assert.equal(bare.rows[0]!.object, undefined);
    const plain = (await request(`${f.url}/api/v1/namespaces/default/pods/t-1`)).json<{ kind: string }>();
    assert.equal(plain.kind, 'Pod', 'without the Table Accept the object is plain');
  });

  test('watch: one Table per event, the column definitions only in the first', async () => {
    const w = new RawWatch(f.port, `/api/v1/namespaces/default/pods?watch=true&resourceVersion=0`, {
      accept: KUBECTL_ACCEPT,
    });
    await w.response;
    assert.equal(w.status, 200);
    await w.waitFor(() => w.events.length >= 1, 'the initial ADDED');
    await f.store().create(pod('t-2'));
    await w.waitFor(() => w.events.length >= 2, 'the live ADDED');
    const [first, second] = w.events.map((e) => e.object as unknown as Table);
    assert.equal(first!.kind, 'Table');
    assert.equal(first!.columnDefinitions.length, 9);
    assert.deepEqual(
      first!.rows.map((r) => r.cells[0]),
      ['t-1'],
    );
    assert.equal(second!.columnDefinitions.length, 0);
    assert.deepEqual(
      second!.rows.map((r) => r.cells[0]),
      ['t-2'],
    );
    assert.equal(second!.metadata.resourceVersion, String(f.cache().resourceVersion));
    w.close();
  });
});
