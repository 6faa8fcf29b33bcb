/**
 * Shapes of objects going in and out. Outgoing objects always carry `kind`
 * and `apiVersion`. Incoming bodies (create, update) must be JSON objects
 * with a `metadata` object; `kind`/`apiVersion`, when given, must be the
 * resource's; the namespace and name must agree with the URL (a
 * cluster-scoped resource drops any namespace, as the apiserver does).
 */
import { BadRequestError } from '../core/errors.js';
import type { KubeObject } from '../core/types.js';
import { specApiVersion, type ResourceSpec } from './resources.js';
import { storableObject } from '../store/stored-shape.js';

/** The object with kind and apiVersion filled in (unchanged when both are present). */
export function withTypeMeta(object: KubeObject, spec: ResourceSpec): KubeObject {
  if (object.kind !== undefined && object.apiVersion !== undefined) return object;
  return { ...object, apiVersion: object.apiVersion ?? specApiVersion(spec), kind: object.kind ?? spec.kind };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return s;
}

export interface Target {
  spec: ResourceSpec;
  /** The namespace from the URL ('' for cluster-scoped resources). */
  namespace: string;
  /** The name from the URL (update), undefined for create. */
  name: string | undefined;
}

/**
 * Validate a create/update body against the URL and return the object to
 * store (kind, apiVersion and namespace filled in; generateName applied on create).
 */
export function prepareObject(body: unknown, target: Target): KubeObject {
  const { spec } = target;
  if (!isRecord(body)) throw new BadRequestError(`the request body must be a JSON object (a ${spec.kind})`);
  const apiVersion = specApiVersion(spec);
  if (body.kind !== undefined && body.kind !== spec.kind) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a JSON value from the body, shown as String() shows it
    const kind = String(body.kind);
    throw new BadRequestError(
      `the kind of the object (${kind}) does not match the resource (${spec.name} is ${spec.kind})`,
    );
  }
  if (body.apiVersion !== undefined && body.apiVersion !== apiVersion) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a JSON value from the body, shown as String() shows it
    const version = String(body.apiVersion);
    throw new BadRequestError(
      `the API version in the data (${version}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (!isRecord(body.metadata)) throw new BadRequestError('metadata is required and must be an object');
  const metadata: Record<string, unknown> = { ...body.metadata };
  for (const key of ['name', 'namespace', 'generateName', 'resourceVersion'] as const) {
    if (metadata[key] !== undefined && typeof metadata[key] !== 'string')
      throw new BadRequestError(`metadata.${key} must be a string`);
  }
  if (spec.namespaced) {
    const ns = metadata.namespace as string | undefined;
    if (ns !== undefined && ns !== '' && ns !== target.namespace) {
      throw new BadRequestError(
        `the namespace of the provided object (${ns}) does not match the namespace sent on the request (${target.namespace})`,
      );
    }
    metadata.namespace = target.namespace;
  } else {
    delete metadata.namespace;
  }
  let name = metadata.name as string | undefined;
  if (
    (name === undefined || name === '') &&
    target.name === undefined &&
    typeof metadata.generateName === 'string' &&
    metadata.generateName !== ''
  ) {
    name = metadata.generateName + randomSuffix();
  }
  // A create without any name is left to validation (422 Required, as kube-apiserver answers).
  if ((name === undefined || name === '') && target.name !== undefined) name = target.name;
  if (target.name !== undefined && name !== target.name) {
    throw new BadRequestError(`the name of the object (${name}) does not match the name on the URL (${target.name})`);
  }
  // The name's syntax is checked by validation (422 Invalid, src/server/validation/).
  metadata.name = name ?? '';
  const { kind: _kind, apiVersion: _apiVersion, metadata: _metadata, ...rest } = body;
  // Shape before syntax: wrong types, null maps, depth and size are decided here (400, as a
  // decode error is in kube-apiserver), so validation (422) only ever sees a well-typed object.
  return storableObject({ apiVersion, kind: spec.kind, metadata, ...rest }).object;
}

/** The preconditions of a DELETE body (DeleteOptions): uid and resourceVersion, each when given. */
export function deletePreconditions(body: unknown): { uid?: string; resourceVersion?: string } {
  if (body === undefined || body === null) return {};
  if (!isRecord(body)) throw new BadRequestError('the DELETE body must be a DeleteOptions JSON object');
  const pre = body.preconditions;
  if (pre === undefined || pre === null) return {};
  if (!isRecord(pre)) throw new BadRequestError('preconditions must be an object');
  const out: { uid?: string; resourceVersion?: string } = {};
  for (const key of ['uid', 'resourceVersion'] as const) {
    const v = pre[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new BadRequestError(`preconditions.${key} must be a string`);
    out[key] = v;
  }
  return out;
}
