/**
 * The resources a server can serve: a small table of well-known core/v1
 * resources (kind, scope, short names), and a derived entry for any other
 * name (kind = the name capitalised and singularised, namespaced).
 */
import type { ResourceInfo } from '../core/types.js';

export interface ResourceSpec {
  /** Plural resource name, e.g. `pods`. */
  readonly name: string;
  readonly singularName: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly group: string;
  readonly version: string;
}

type Entry = Omit<ResourceSpec, 'name' | 'group' | 'version' | 'categories'> & { categories?: string[] };

const WELL_KNOWN: Readonly<Record<string, Entry>> = {
  pods: { singularName: 'pod', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'] },
  configmaps: { singularName: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  secrets: { singularName: 'secret', kind: 'Secret', namespaced: true, shortNames: [] },
  services: { singularName: 'service', kind: 'Service', namespaced: true, shortNames: ['svc'], categories: ['all'] },
  endpoints: { singularName: 'endpoints', kind: 'Endpoints', namespaced: true, shortNames: ['ep'] },
  events: { singularName: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  serviceaccounts: { singularName: 'serviceaccount', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] },
  persistentvolumeclaims: {
    singularName: 'persistentvolumeclaim',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
  },
  persistentvolumes: {
    singularName: 'persistentvolume',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
  },
  nodes: { singularName: 'node', kind: 'Node', namespaced: false, shortNames: ['no'] },
  namespaces: { singularName: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
};

const NAME_RE = /^[a-z]([a-z0-9-]*[a-z0-9])?$/;

/** Singular form of a plural resource name (policies -> policy, classes -> class, widgets -> widget). */
export function singularize(plural: string): string {
  if (plural.endsWith('ies') && plural.length > 3) return plural.slice(0, -3) + 'y';
  if (/(ss|x|z|ch|sh)es$/.test(plural)) return plural.slice(0, -2);
  if (plural.endsWith('s') && !plural.endsWith('ss')) return plural.slice(0, -1);
  return plural;
}

/** Kind of a derived resource: `foo-widgets` -> `FooWidget`. */
export function deriveKind(plural: string): string {
  return singularize(plural)
    .split('-')
    .filter((p) => p !== '')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}

/** The spec of a resource name; throws an Error with a clear message for an invalid name. */
export function resolveResource(name: string): ResourceSpec {
  if (!NAME_RE.test(name) || name.length > 63) {
    throw new Error(`invalid resource name "${name}": use lowercase letters, digits and '-' (e.g. pods)`);
  }
  const known = WELL_KNOWN[name];
  const entry: Entry = known ?? {
    singularName: singularize(name),
    kind: deriveKind(name),
    namespaced: true,
    shortNames: [],
  };
  return Object.freeze({
    name,
    singularName: entry.singularName,
    kind: entry.kind,
    namespaced: entry.namespaced,
    shortNames: Object.freeze([...entry.shortNames]),
    categories: Object.freeze([...(entry.categories ?? [])]),
    group: '',
    version: 'v1',
  });
}

/** A spec for a cache's ResourceInfo (well-known table first, the cache's kind wins). */
export function specForResource(info: ResourceInfo): ResourceSpec {
  const base = resolveResource(info.resource);
  return Object.freeze({ ...base, kind: info.kind, group: info.group, version: info.version });
}

/** The engine's ResourceInfo of a spec. */
export function resourceInfo(spec: ResourceSpec): ResourceInfo {
  return { group: spec.group, version: spec.version, resource: spec.name, kind: spec.kind };
}

/** `v1` for the core group, else `group/version`. */
export function specApiVersion(spec: ResourceSpec): string {
  return spec.group === '' ? spec.version : `${spec.group}/${spec.version}`;
}
