/**
 * Writes, straight to the resource's store (the cache sees them through its
 * store watch):
 *   POST   collection  -> 201 and the stored object (409 AlreadyExists)
 *   PUT    object      -> 200 and the stored object (404 missing; 409
 *                         Conflict when metadata.resourceVersion is stale)
 *   DELETE object      -> 200 and the deleted object: its last state with the
 *                         deletion RV (DeleteOptions.preconditions uid and
 *                         resourceVersion are honoured: 409 Conflict when they
 *                         do not match; other DeleteOptions are ignored)
 * Bodies are JSON, at most `bodyLimit` bytes (413 above). Every returned
 * object carries kind and apiVersion. Creates and updates are validated as
 * kube-apiserver does (422 Invalid, src/server/validation/); a PUT whose
 * metadata.uid is not the stored one's is a 409 precondition failure. A
 * store in front of an upstream API server (KubeStore) answers with the
 * upstream's code and body. PATCH is src/server/patch/patch-handler.ts.
 */
import { BadRequestError } from '../core/errors.js';
import { upstreamCodeOf } from '../store/upstream-response.js';
import { deletePreconditions, prepareObject, withTypeMeta } from './object-shape.js';
import { checkWriteQuery } from './query-params.js';
import { readJsonBody } from './request-body.js';
import type { ResourceRequest } from './resource-request.js';
import type { WritableStore } from './served-resource.js';
import { methodNotAllowed, objectError, sendJSON, statusError } from './status-response.js';
import { validateCreate, validateUpdate } from './validation/object-validation.js';

export function storeOf(r: ResourceRequest): WritableStore {
  const store = r.served.store;
  if (store === undefined) throw methodNotAllowed();
  return store;
}

export async function handleCreate(r: ResourceRequest, bodyLimit: number): Promise<void> {
  const store = storeOf(r);
  checkWriteQuery(r.params);
  const body = await readJsonBody(r.req, bodyLimit);
  const object = prepareObject(body, { spec: r.served.spec, namespace: r.namespace ?? '', name: undefined });
  const rv = object.metadata.resourceVersion;
  if (rv !== undefined && rv !== '')
    throw new BadRequestError('metadata.resourceVersion must not be set on objects to be created');
  const invalid = validateCreate(object, r.served.spec);
  if (invalid !== undefined) throw invalid;
  try {
    const stored = await store.create(object);
    sendJSON(r.res, upstreamCodeOf(stored) ?? 201, withTypeMeta(stored, r.served.spec));
  } catch (err) {
    throw objectError(err, r.served.spec.name, object.metadata.name!);
  }
}

export async function handleUpdate(r: ResourceRequest, bodyLimit: number): Promise<void> {
  const store = storeOf(r);
  checkWriteQuery(r.params);
  const body = await readJsonBody(r.req, bodyLimit);
  const object = prepareObject(body, { spec: r.served.spec, namespace: r.namespace ?? '', name: r.name });
  const old = await store.get(r.namespace ?? '', r.name!).catch((err: unknown) => {
    throw objectError(err, r.served.spec.name, r.name!);
  });
  const uid = object.metadata.uid;
  if (uid !== undefined && uid !== '' && uid !== old.metadata.uid) {
    throw statusError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${r.served.spec.name} "${r.name}": Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid ?? ''}`,
      { name: r.name!, kind: r.served.spec.name },
    );
  }
  const invalid = validateUpdate(object, old, r.served.spec);
  if (invalid !== undefined) throw invalid;
  try {
    const stored = await store.update(object);
    sendJSON(r.res, upstreamCodeOf(stored) ?? 200, withTypeMeta(stored, r.served.spec));
  } catch (err) {
    throw objectError(err, r.served.spec.name, r.name!);
  }
}

export async function handleDelete(r: ResourceRequest, bodyLimit: number): Promise<void> {
  const store = storeOf(r);
  checkWriteQuery(r.params);
  const body = await readJsonBody(r.req, bodyLimit, true);
  const preconditions = deletePreconditions(body);
  try {
    const last = await store.delete(r.namespace ?? '', r.name!, preconditions);
    sendJSON(r.res, upstreamCodeOf(last) ?? 200, withTypeMeta(last, r.served.spec));
  } catch (err) {
    throw objectError(err, r.served.spec.name, r.name!);
  }
}
