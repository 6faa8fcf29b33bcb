/**
 * The write rules every store shares (MemoryStore and EtcdStore give the same
 * answers): what identifies an object, the resourceVersion precondition of
 * update, and DELETE's preconditions (uid, resourceVersion): 409 Conflict
 * when stale.
 */
import { BadRequestError, ConflictError } from '../core/errors.js';
import type { KubeObject } from '../core/types.js';

/** Namespace and name of an object to write; 400 when missing or malformed. */
export function identify(object: KubeObject): { namespace: string; name: string } {
  const meta = object?.metadata;
  if (meta === undefined || meta === null || typeof meta !== 'object') {
    throw new BadRequestError('object has no metadata');
  }
  if (typeof meta.name !== 'string' || meta.name === '') throw new BadRequestError('metadata.name is required');
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string') {
    throw new BadRequestError('metadata.namespace must be a string');
  }
  return { namespace: meta.namespace ?? '', name: meta.name };
}

/** A given resourceVersion must equal the stored one (as a string), else 409 Conflict. */
export function checkPrecondition(given: string | undefined, stored: KubeObject, name: string, verb: string): void {
  if (given === undefined || given === '') return;
  if (given !== stored.metadata.resourceVersion) {
    throw new ConflictError(
      'Conflict',
      `Operation cannot be fulfilled on "${name}": the object has been modified; please apply your changes to the latest version and try again (${verb} at resourceVersion ${given}, stored ${stored.metadata.resourceVersion})`,
      name,
    );
  }
}

/** DeleteOptions.preconditions: each given field must equal the stored object's. */
export interface DeletePreconditions {
  uid?: string | undefined;
  resourceVersion?: string | undefined;
}

/**
 * 409 Conflict for a failed DELETE precondition, worded as kube-apiserver
 * does (`Precondition failed: UID in precondition: X, UID in object meta: Y`);
 * `detail` is that sentence, for callers that re-word the message.
 */
export class PreconditionFailedError extends ConflictError {
  readonly detail: string;
  constructor(name: string, detail: string) {
    super('Conflict', `Operation cannot be fulfilled on "${name}": ${detail}`, name);
    this.detail = detail;
  }
}

/** Check a DELETE's preconditions against the stored object (uid first, then resourceVersion, as Kubernetes). */
export function checkDeletePreconditions(pre: DeletePreconditions, stored: KubeObject, name: string): void {
  if (pre.uid !== undefined && pre.uid !== stored.metadata.uid) {
    throw new PreconditionFailedError(
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${stored.metadata.uid ?? ''}`,
    );
  }
  const rv = pre.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== stored.metadata.resourceVersion) {
    throw new PreconditionFailedError(
      name,
      `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${stored.metadata.resourceVersion ?? ''}`,
    );
  }
}
