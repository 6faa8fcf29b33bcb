/**
 * The patch metadata strategic merge patch needs, for the served core/v1
 * types: which lists merge (and by which key) instead of being replaced,
 * taken from the `patchStrategy` / `patchMergeKey` struct tags of
 * k8s.io/api/core/v1 and apimachinery's ObjectMeta. A field that is not
 * listed is a map (merged key by key) or an atomic list (replaced whole);
 * every resource gets ObjectMeta's entries under `metadata`.
 */

/** Patch metadata of one field. */
export interface FieldPatchMeta {
  /** Lists: merge element by element (by `mergeKey` for lists of maps, by value for primitives). */
  readonly merge?: boolean;
  /** The key identifying an element of a merging list of maps. */
  readonly mergeKey?: string;
  /** The schema of the field's value (a map) or of its elements (a list of maps). */
  readonly schema?: PatchSchema;
}

/** The patch metadata of a map's fields, by JSON field name. */
export interface PatchSchema {
  readonly [field: string]: FieldPatchMeta;
}

const byKey = (mergeKey: string, schema?: PatchSchema): FieldPatchMeta => ({
  merge: true,
  mergeKey,
  ...(schema === undefined ? {} : { schema }),
});
const nested = (schema: PatchSchema): FieldPatchMeta => ({ schema });

const OBJECT_META: PatchSchema = {
  finalizers: { merge: true },
  ownerReferences: byKey('uid'),
};

const CONTAINER: PatchSchema = {
  ports: byKey('containerPort'),
  env: byKey('name'),
  volumeMounts: byKey('mountPath'),
  volumeDevices: byKey('devicePath'),
};

const POD_SPEC: PatchSchema = {
  containers: byKey('name', CONTAINER),
  initContainers: byKey('name', CONTAINER),
  ephemeralContainers: byKey('name', CONTAINER),
  volumes: byKey('name'), // patchStrategy "merge,retainKeys": elements honour $retainKeys
  imagePullSecrets: byKey('name'),
  hostAliases: byKey('ip'),
  topologySpreadConstraints: byKey('topologyKey'),
  resourceClaims: byKey('name'),
  schedulingGates: byKey('name'),
};

const POD_STATUS: PatchSchema = {
  conditions: byKey('type'),
  podIPs: byKey('ip'),
  hostIPs: byKey('ip'),
  resourceClaimStatuses: byKey('name'),
};

const POD_TEMPLATE: PatchSchema = { metadata: nested(OBJECT_META), spec: nested(POD_SPEC) };

const BY_RESOURCE: Readonly<Record<string, PatchSchema>> = {
  pods: { spec: nested(POD_SPEC), status: nested(POD_STATUS) },
  podtemplates: { template: nested(POD_TEMPLATE) },
  replicationcontrollers: {
    spec: nested({ template: nested(POD_TEMPLATE) }),
    status: nested({ conditions: byKey('type') }),
  },
  services: { spec: nested({ ports: byKey('port') }) },
  nodes: {
    spec: nested({ podCIDRs: { merge: true } }),
    status: nested({ conditions: byKey('type'), addresses: byKey('type') }),
  },
  namespaces: { status: nested({ conditions: byKey('type') }) },
  persistentvolumeclaims: { status: nested({ conditions: byKey('type') }) },
  serviceaccounts: { secrets: byKey('name'), imagePullSecrets: byKey('name') },
};

/** The top-level patch schema of a resource: its own fields plus ObjectMeta under `metadata`. */
export function patchSchemaFor(resource: string): PatchSchema {
  return { ...(BY_RESOURCE[resource] ?? {}), metadata: nested(OBJECT_META) };
}
