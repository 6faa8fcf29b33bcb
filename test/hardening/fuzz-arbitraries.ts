/**
 * fast-check arbitraries for the fuzz tests: request bodies (pod-shaped
 * objects whose fields take any JSON type, null maps, deep nesting, raw
 * non-JSON text), selectors, resourceVersions, query strings and paths.
 * Names come from a small pool so updates and deletes hit stored objects.
 */
import fc from 'fast-check';

export const NAMES = ['a', 'b', 'web-1'] as const;
export const NAMESPACES = ['default', 'ns1'] as const;

/** A JSON text nested `depth` objects deep (built as text: JSON.stringify cannot go that deep). */
export function nestedJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A value nested `depth` objects deep. */
export function nestedValue(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 1; i < depth; i++) {
    const next: Record<string, unknown> = {};
    cur.a = next;
    cur = next;
  }
  return root;
}

/** Any JSON value of modest size, plus the odd ones (null, deep nests). */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.constant(null)), { maxLength: 4 }),
  },
  {
    weight: 2,
    arbitrary: fc.dictionary(
      fc.string({ maxLength: 8 }),
      fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(null), fc.boolean()),
      { maxKeys: 4 },
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 400 }).map(nestedValue) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const labelKey = fc.constantFrom('app', 'tier', 'example.com/x', 'k');
const labelValue = fc.constantFrom('x', 'y', 'db', '');
const goodLabels = fc.dictionary(labelKey, labelValue, { maxKeys: 3 });

const metadata = fc.record(
  {
    name: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...NAMES) }, { weight: 1, arbitrary: oddValue }),
    namespace: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NAMESPACES) }, { weight: 1, arbitrary: oddValue }),
    generateName: fc.oneof(fc.constant('gen-'), oddValue),
    labels: fc.oneof({ weight: 4, arbitrary: goodLabels }, { weight: 3, arbitrary: oddValue }),
    annotations: fc.oneof(goodLabels, oddValue),
    resourceVersion: fc.oneof(fc.constantFrom('', '1', '2', '99999'), oddValue),
    uid: oddValue,
    finalizers: oddValue,
    ownerReferences: oddValue,
    creationTimestamp: oddValue,
  },
  { requiredKeys: [] },
);

const spec = fc.oneof(
  fc.record({ nodeName: fc.oneof(fc.constantFrom('n1', 'n2'), oddValue), containers: oddValue }, { requiredKeys: [] }),
  oddValue,
);

/** A pod-shaped object with odd fields (as a JS value). */
const podLike: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    apiVersion: fc.oneof({ weight: 4, arbitrary: fc.constant('v1') }, { weight: 1, arbitrary: oddValue }),
    kind: fc.oneof({ weight: 4, arbitrary: fc.constant('Pod') }, { weight: 1, arbitrary: oddValue }),
    metadata: fc.oneof({ weight: 8, arbitrary: metadata }, { weight: 1, arbitrary: oddValue }),
    spec,
    status: oddValue,
  },
  { requiredKeys: ['metadata'] },
);

/** A request body as text: JSON of a pod-like object, JSON of anything, a deep nest, raw garbage, or nothing. */
const bodyText: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: podLike.map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 200, max: 20_000 }).map((d) => `{"metadata":{"name":"a"},"spec":${nestedJson(d)}}`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc
      .record({ preconditions: fc.record({ uid: oddValue, resourceVersion: oddValue }, { requiredKeys: [] }) })
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** A resourceVersion as a client might send it. */
export const resourceVersion: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '0', '1', '2', '5', '999999999', '-1', '1.5', 'abc', '9007199254740993', '1e3', ' 1'),
  fc.nat().map(String),
  fc.string({ maxLength: 12 }),
);

export const labelSelector: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'app=x',
    'app!=x',
    'app in (x,y)',
    'tier notin (db)',
    'app',
    '!app',
    'app=x,tier=db',
    'app==',
    '(',
    'a b',
    'example.com/x=y',
  ),
  fc.string({ maxLength: 30 }),
);

export const fieldSelector: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'metadata.name=a',
    'metadata.namespace!=default',
    'spec.nodeName=n1',
    'status.phase=Running',
    'spec.nodeName',
    'a\\',
    '=x',
    'metadata.name=a,spec.nodeName!=n2',
  ),
  fc.string({ maxLength: 30 }),
);

/** Read query parameters (a random subset, each with a plausible or junk value). */
const readQuery: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    watch: fc.constantFrom('true', '1', 'false', '0', 'yes', ''),
    resourceVersion,
    resourceVersionMatch: fc.constantFrom('NotOlderThan', 'Exact', '', 'bogus'),
    labelSelector,
    fieldSelector,
    limit: fc.oneof(
      fc.constantFrom('1', '2', '0', '-1', 'x', '500', '99999999999999999999'),
      fc.string({ maxLength: 5 }),
    ),
    continue: fc.oneof(fc.constantFrom('', 'abc', 'eyJydiI6MX0='), fc.base64String({ maxLength: 40 })),
    timeoutSeconds: fc.constantFrom('1', '0', '-5', '2147484', '99999999999', 'x', '1.5'),
    allowWatchBookmarks: fc.constantFrom('true', 'false', 'x'),
    sendInitialEvents: fc.constantFrom('true', 'false', 'x'),
    pretty: fc.constantFrom('true', '1'),
  },
  { requiredKeys: [] },
);

/** A request target: the resource paths mostly, with junk now and then. */
const path: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...NAMESPACES).map((ns) => `/api/v1/namespaces/${ns}/pods`) },
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...NAMES))
      .map(([ns, n]) => `/api/v1/namespaces/${ns}/pods/${n}`),
  },
  { weight: 2, arbitrary: fc.constant('/api/v1/pods') },
  { weight: 1, arbitrary: fc.constantFrom(...NAMESPACES).map((ns) => `/api/v1/watch/namespaces/${ns}/pods`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/api',
      '/api/v1',
      '/apis',
      '/version',
      '/healthz',
      '/livez',
      '/readyz',
      '/metrics',
      '/openapi/v2',
      '/',
      '//x',
      '/api/v1/namespaces/default/pods/a/b/c',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `/api/v1/namespaces/${encodeURIComponent(s)}/pods`) },
);

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constant('GET') },
  { weight: 4, arbitrary: fc.constant('POST') },
  { weight: 3, arbitrary: fc.constant('PUT') },
  { weight: 3, arbitrary: fc.constant('DELETE') },
  { weight: 1, arbitrary: fc.constantFrom('PATCH', 'HEAD', 'OPTIONS') },
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/merge-patch+json',
  'text/plain',
  'application/yaml',
  '',
);

export interface FuzzRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string;
  body: string | undefined;
}

/** Fields a mutation may overwrite (dot paths into a pod). */
const MUTABLE = [
  'metadata.labels',
  'metadata.labels',
  'metadata.labels.app',
  'metadata.annotations',
  'metadata.name',
  'metadata.namespace',
  'metadata.resourceVersion',
  'metadata.uid',
  'metadata.finalizers',
  'metadata.ownerReferences',
  'metadata.generateName',
  'metadata.creationTimestamp',
  'metadata',
  'spec',
  'spec.nodeName',
  'status',
  'kind',
  'apiVersion',
] as const;

/** Overwrite one dot path of a (plain, JSON) object, creating objects on the way. */
function setPath(o: Record<string, unknown>, dotted: string, value: unknown): void {
  const steps = dotted.split('.');
  let cur = o;
  for (const step of steps.slice(0, -1)) {
    const next = cur[step];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[step] = {};
    cur = cur[step] as Record<string, unknown>;
  }
  cur[steps[steps.length - 1]!] = value;
}

/** A valid pod for ns/name with 0-3 of its fields overwritten by odd values. */
export function mutatedPod(ns: string, name: string): fc.Arbitrary<Record<string, unknown>> {
  const mutation = fc.record({ path: fc.constantFrom(...MUTABLE), value: oddValue });
  return fc
    .tuple(goodLabels, fc.constantFrom('n1', 'n2'), fc.array(mutation, { maxLength: 3 }))
    .map(([labels, node, muts]) => {
      const pod: Record<string, unknown> = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { namespace: ns, name, labels },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
      };
      for (const m of muts) setPath(pod, m.path, m.value);
      return pod;
    });
}

const nsName = fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...NAMES));

/** Creates and updates of mostly-valid pods with odd fields (or a deep nest) at the matching path. */
const write: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    nsName,
    fc.constantFrom('POST', 'PUT'),
    fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 200, max: 20_000 }) }),
  )
  .chain(([[ns, name], m, depth]) =>
    (depth > 0
      ? fc.constant(
          `{"metadata":{"namespace":"${ns}","name":"${name}","labels":{"app":"x"}},"spec":${nestedJson(depth)}}`,
        )
      : mutatedPod(ns, name).map((p) => JSON.stringify(p))
    ).map((body) => ({
      method: m,
      path: m === 'POST' ? `/api/v1/namespaces/${ns}/pods` : `/api/v1/namespaces/${ns}/pods/${name}`,
      query: {},
      contentType: 'application/json',
      body,
    })),
  );

const preconditions = fc.record(
  { uid: fc.oneof(fc.string({ maxLength: 8 }), oddValue), resourceVersion: fc.oneof(resourceVersion, oddValue) },
  { requiredKeys: [] },
);

/** Deletes, with or without DeleteOptions (preconditions of any type). */
const del: fc.Arbitrary<FuzzRequest> = fc
  .tuple(nsName, fc.option(fc.record({ preconditions: fc.oneof(preconditions, oddValue) }, { requiredKeys: [] })))
  .map(([[ns, name], opts]) => ({
    method: 'DELETE',
    path: `/api/v1/namespaces/${ns}/pods/${name}`,
    query: {},
    contentType: 'application/json',
    body: opts === null ? undefined : JSON.stringify(opts),
  }));

/** Lists, gets and watches with random queries. */
const read: fc.Arbitrary<FuzzRequest> = fc
  .tuple(path, readQuery)
  .map(([p, query]) => ({ method: 'GET', path: p, query, contentType: '', body: undefined }));

/** Anything: random method, path, query, content type and body. */
const junk: fc.Arbitrary<FuzzRequest> = fc.record({ method, path, query: readQuery, contentType, body: bodyText });

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 5, arbitrary: write },
  { weight: 1, arbitrary: del },
  { weight: 4, arbitrary: read },
  { weight: 2, arbitrary: junk },
);
