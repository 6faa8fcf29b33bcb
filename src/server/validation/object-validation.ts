/**
 * What kube-apiserver validates on every object it stores, for the served
 * resources: the name (required, unless generateName made one; a DNS-1123
 * subdomain, a DNS-1123 label for namespaces, a DNS-1035 label for
 * services), the namespace (a DNS-1123 label), label keys and values, and
 * annotation keys and their total size (256 KiB). On update (PUT, PATCH) the
 * uid cannot change and creationTimestamp keeps its stored value.
 *
 * Failures are one 422 Invalid with a cause per field error, so nothing that
 * kube-apiserver would reject is ever stored (and no stored object can break
 * a later list, watch or restart).
 */
import type { KubeObject } from '../../core/types.js';
import type { WatchCacheError } from '../../core/errors.js';
import type { ResourceSpec } from '../resources.js';
import { forbidden, invalid, invalidObject, required, tooLong, type FieldError } from './field-errors.js';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from './name-rules.js';

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** The name rule of a resource (apimachinery's ValidateNameFunc per registry). */
function nameRule(spec: ResourceSpec): (name: string) => string[] {
  if (spec.name === 'namespaces') return isDNS1123Label;
  if (spec.name === 'services') return isDNS1035Label;
  return isDNS1123Subdomain;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function validateStringMap(field: string, value: unknown, errors: FieldError[]): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    errors.push(invalid(field, value, 'must be a map of string keys to string values'));
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') errors.push(invalid(`${field}[${k}]`, v, 'must be a string'));
    else out[k] = v;
  }
  return out;
}

function validateLabels(labels: unknown, errors: FieldError[]): void {
  const map = validateStringMap('metadata.labels', labels, errors);
  if (map === undefined) return;
  for (const [k, v] of Object.entries(map)) {
    for (const msg of isQualifiedName(k)) errors.push(invalid('metadata.labels', k, msg));
    for (const msg of isValidLabelValue(v)) errors.push(invalid('metadata.labels', v, msg));
  }
}

function validateAnnotations(annotations: unknown, errors: FieldError[]): void {
  const map = validateStringMap('metadata.annotations', annotations, errors);
  if (map === undefined) return;
  let size = 0;
  for (const [k, v] of Object.entries(map)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errors.push(invalid('metadata.annotations', k, msg));
    size += k.length + v.length;
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT)
    errors.push(tooLong('metadata.annotations', `must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`));
}

/** The field errors of an object's metadata (create and update alike). */
function objectMetaErrors(object: KubeObject, spec: ResourceSpec): FieldError[] {
  const errors: FieldError[] = [];
  const meta = object.metadata;
  const name = meta.name;
  if (name === undefined || name === '') {
    errors.push(required('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of nameRule(spec)(name)) errors.push(invalid('metadata.name', name, msg));
  }
  if (spec.namespaced) {
    const ns = meta.namespace;
    if (ns === undefined || ns === '') errors.push(required('metadata.namespace', ''));
    else for (const msg of isDNS1123Label(ns)) errors.push(invalid('metadata.namespace', ns, msg));
  } else if (meta.namespace !== undefined && meta.namespace !== '') {
    errors.push(forbidden('metadata.namespace', 'not allowed on this type'));
  }
  validateLabels(meta.labels, errors);
  validateAnnotations(meta.annotations, errors);
  return errors;
}

/** 422 Invalid for an object to create, or undefined when it is valid. */
export function validateCreate(object: KubeObject, spec: ResourceSpec): WatchCacheError | undefined {
  return invalidObject(spec.kind, object.metadata.name ?? '', objectMetaErrors(object, spec));
}

/**
 * 422 Invalid for an update of `old` to `object` (uid immutable), or
 * undefined. `object`'s creationTimestamp is set back to the stored one, as
 * kube-apiserver's BeforeUpdate does (a client cannot change it).
 */
export function validateUpdate(object: KubeObject, old: KubeObject, spec: ResourceSpec): WatchCacheError | undefined {
  const errors = objectMetaErrors(object, spec);
  const uid = object.metadata.uid;
  if (uid !== undefined && uid !== '' && uid !== old.metadata.uid)
    errors.push(invalid('metadata.uid', uid, 'field is immutable'));
  if (old.metadata.creationTimestamp !== undefined) object.metadata.creationTimestamp = old.metadata.creationTimestamp;
  return invalidObject(spec.kind, object.metadata.name ?? '', errors);
}
