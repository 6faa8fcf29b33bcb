/**
 * PATCH on one object, with kube-apiserver's semantics:
 *
 *   application/merge-patch+json           RFC 7386 (merge-patch.ts)
 *   application/json-patch+json            RFC 6902 (json-patch.ts; a failed test is 422)
 *   application/strategic-merge-patch+json strategic merge (strategic-merge-patch.ts)
 *   application/apply-patch+yaml           415: server-side apply is not supported
 *   anything else                          415
 *
 * A store that patches itself (isPatchingStore: an upstream API server) gets
 * the request as is, apply patches included (the upstream decides). Otherwise the server patches: read the object from the
 * store, apply the patch, check it (name and namespace as the URL's: 400;
 * kind/apiVersion unchanged: 400; validation and an unchanged uid: 422;
 * creationTimestamp kept), and update with a resourceVersion precondition.
 * When the patch set a resourceVersion of its own, that is the precondition
 * (stale: 409 Conflict, not retried); else it is the RV that was read, and a
 * conflict (someone wrote in between) reads and applies again, up to
 * MAX_ATTEMPTS times, as kube-apiserver's GuaranteedUpdate does.
 */
import { BadRequestError, ConflictError, type WatchCacheError } from '../../core/errors.js';
import type { KubeObject } from '../../core/types.js';
import { isPatchingStore, type PatchRequest } from '../../store/patch-request.js';
import { prepareObject, withTypeMeta } from '../object-shape.js';
import { checkWriteQuery } from '../query-params.js';
import { readBody } from '../request-body.js';
import type { ResourceRequest } from '../resource-request.js';
import { objectError, sendJSON, statusError } from '../status-response.js';
import { validateUpdate } from '../validation/object-validation.js';
import { storeOf } from '../write-handlers.js';
import { applyJsonPatch, jsonPatchOperations } from './json-patch.js';
import type { JsonValue } from './json-values.js';
import { applyMergePatch } from './merge-patch.js';
import { patchSchemaFor } from './patch-strategies.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

const MERGE_PATCH = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';
const PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH];

const MAX_ATTEMPTS = 5;

/** The media type of a Content-Type header, lower case, without parameters. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function unsupported(contentType: string): WatchCacheError {
  if (contentType === APPLY_PATCH) {
    return statusError(
      415,
      'UnsupportedMediaType',
      `server-side apply (${APPLY_PATCH}) is not supported by this server: use client-side apply (kubectl apply without --server-side) or another patch type: ${PATCH_TYPES.join(', ')}`,
    );
  }
  return statusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format "${contentType}": accepted media types for PATCH are ${PATCH_TYPES.join(', ')}`,
  );
}

function parsePatch(contentType: string, body: string): JsonValue {
  if (body.trim() === '') throw new BadRequestError('the PATCH body is empty');
  let patch: JsonValue;
  try {
    patch = JSON.parse(body) as JsonValue;
  } catch (err) {
    throw new BadRequestError(`the patch is not valid JSON: ${(err as Error).message}`);
  }
  if (contentType !== JSON_PATCH && (patch === null || typeof patch !== 'object' || Array.isArray(patch))) {
    throw new BadRequestError(
      `a ${contentType === MERGE_PATCH ? 'merge' : 'strategic merge'} patch must be a JSON object`,
    );
  }
  return patch;
}

/** The patch as a function of the current object. */
function patcher(contentType: string, patch: JsonValue, resource: string): (current: JsonValue) => JsonValue {
  switch (contentType) {
    case JSON_PATCH: {
      const ops = jsonPatchOperations(patch);
      return (current) => applyJsonPatch(current, ops);
    }
    case MERGE_PATCH:
      return (current) => applyMergePatch(current, patch);
    default: {
      const schema = patchSchemaFor(resource);
      return (current) => applyStrategicMergePatch(current, patch, schema);
    }
  }
}

export async function handlePatch(r: ResourceRequest, bodyLimit: number): Promise<void> {
  const store = storeOf(r);
  checkWriteQuery(r.params);
  const contentType = mediaType(r.req.headers['content-type']);
  const patching = isPatchingStore(store);
  // An upstream API server may support server-side apply: it gets apply patches too.
  if (!PATCH_TYPES.includes(contentType) && !(patching && contentType === APPLY_PATCH)) {
    r.req.resume();
    throw unsupported(contentType);
  }
  const body = (await readBody(r.req, bodyLimit)).toString('utf8');
  const { spec } = r.served;
  const namespace = r.namespace ?? '';
  const name = r.name!;
  try {
    if (patching) {
      const request: PatchRequest = { contentType, body, ...patchQuery(r.params) };
      sendJSON(r.res, 200, withTypeMeta(await store.patch(namespace, name, request), spec));
      return;
    }
    const apply = patcher(contentType, parsePatch(contentType, body), spec.name);
    for (let attempt = 1; ; attempt++) {
      const current = withTypeMeta(await store.get(namespace, name), spec);
      const readRV = current.metadata.resourceVersion;
      const patched = apply(current as unknown as JsonValue);
      if (patched === null || typeof patched !== 'object' || Array.isArray(patched))
        throw new BadRequestError('the patched object is not a JSON object');
      const patchedRV = (patched as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
      // A resourceVersion the patch set is the client's precondition; else the RV we read is ours.
      const explicit = patchedRV !== undefined && patchedRV !== null && patchedRV !== '' && patchedRV !== readRV;
      const object: KubeObject = prepareObject(patched, { spec, namespace, name });
      const invalid = validateUpdate(object, current, spec);
      if (invalid !== undefined) throw invalid;
      const clientRV = String(patchedRV);
      object.metadata.resourceVersion = explicit ? clientRV : readRV;
      try {
        sendJSON(r.res, 200, withTypeMeta(await store.update(object), spec));
        return;
      } catch (err) {
        const conflict = err instanceof ConflictError && err.reason === 'Conflict';
        if (!conflict || explicit || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    throw objectError(err, spec.name, name);
  }
}

function patchQuery(params: URLSearchParams): { fieldManager?: string; force?: boolean } {
  const out: { fieldManager?: string; force?: boolean } = {};
  const fm = params.get('fieldManager');
  if (fm !== null && fm !== '') out.fieldManager = fm;
  const force = params.get('force');
  if (force !== null) out.force = force === 'true' || force === '1';
  return out;
}
