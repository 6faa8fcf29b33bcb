/**
 * JSON Patch (RFC 6902), `application/json-patch+json`, through the
 * fast-json-patch package: add, remove, replace, move, copy and test, applied
 * in order to a copy of the target (the target is not modified), with
 * prototype modifications refused. As kube-apiserver answers: a patch that
 * is not a JSON array of operation objects is 400; an operation that cannot
 * be applied (a failed `test`, a missing path, an unknown op) is 422.
 */
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { BadRequestError, WatchCacheError } from '../../core/errors.js';
import { isJsonMap, type JsonValue } from './json-values.js';

const { applyPatch, JsonPatchError } = fastJsonPatch;

/** The operations of a JSON patch document; 400 when it is not an array of objects with `op` and `path`. */
export function jsonPatchOperations(patch: JsonValue): Operation[] {
  if (!Array.isArray(patch)) throw new BadRequestError('a JSON patch must be a JSON array of operations');
  patch.forEach((op, i) => {
    if (!isJsonMap(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw new BadRequestError(`JSON patch operation ${i} must be an object with string "op" and "path"`);
    }
  });
  return patch as unknown as Operation[];
}

export function applyJsonPatch(target: JsonValue, operations: readonly Operation[]): JsonValue {
  try {
    return applyPatch(target, operations, true, false, true).newDocument;
  } catch (err) {
    if (err instanceof JsonPatchError) {
      const op = err.operation as Partial<Operation> | undefined;
      const where = op === undefined ? '' : ` (operation ${err.index ?? '?'}: ${op.op} ${op.path})`;
      const what = err.name === 'TEST_OPERATION_FAILED' ? 'test failed' : err.message.split('\n')[0];
      // A cause, so kubectl prints it ("The request is invalid: patch: test failed (…)").
      const message = `${what}${where}`;
      throw new WatchCacheError(422, 'Invalid', `the JSON patch could not be applied: ${message}`, {
        causes: [{ reason: 'FieldValueInvalid', field: 'patch', message }],
      });
    }
    throw err;
  }
}
