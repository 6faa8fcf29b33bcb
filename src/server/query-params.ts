/**
 * Query strings of list, watch and get, parsed and validated before anything
 * runs: a malformed value is a 400 BadRequest Status with a message naming
 * the parameter. Rules follow Kubernetes: booleans as Go's strconv.ParseBool,
 * resourceVersion an unsigned decimal integer (or empty), resourceVersionMatch
 * NotOlderThan|Exact, limit and timeoutSeconds non-negative integers,
 * selectors at most MAX_SELECTOR_LENGTH characters and syntactically valid.
 * Repeated parameters use the first value. Unknown parameters (timeout,
 * pretty, fieldManager, fieldValidation, propagationPolicy, ...) are ignored.
 */
import { BadRequestError } from '../core/errors.js';
import type { ResourceVersionMatch } from '../cache/request-options.js';
import { parseFieldSelector, parseLabelSelector } from '../selection/selection.js';

const MAX_SELECTOR_LENGTH = 10_000;

export interface ReadQuery {
  watch: boolean;
  resourceVersion: string | undefined;
  resourceVersionMatch: ResourceVersionMatch | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  limit: number | undefined;
  continue: string | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  /** undefined (or 0 on the wire) = the server's randomized default. */
  timeoutSeconds: number | undefined;
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** Go strconv.ParseBool; undefined when absent or empty. */
function parseBool(params: URLSearchParams, name: string): boolean | undefined {
  const v = params.get(name);
  if (v === null || v === '') return undefined;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new BadRequestError(`invalid ${name} "${v}": must be true or false`);
}

function parseCount(params: URLSearchParams, name: string): number | undefined {
  const v = params.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new BadRequestError(`invalid ${name} "${v}": must be a non-negative integer`);
  }
  return Number(v);
}

function parseRV(params: URLSearchParams): string | undefined {
  const v = params.get('resourceVersion');
  if (v === null) return undefined;
  if (v !== '' && (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))) {
    throw new BadRequestError(`invalid resourceVersion "${v}": must be an unsigned decimal integer`);
  }
  return v;
}

function parseMatch(params: URLSearchParams): ResourceVersionMatch | undefined {
  const v = params.get('resourceVersionMatch');
  if (v === null || v === '') return undefined;
  if (v !== 'NotOlderThan' && v !== 'Exact') {
    throw new BadRequestError(`invalid resourceVersionMatch "${v}": must be NotOlderThan or Exact`);
  }
  return v;
}

function parseSelector(params: URLSearchParams, name: 'labelSelector' | 'fieldSelector'): string | undefined {
  const v = params.get(name);
  if (v === null || v === '') return undefined;
  if (v.length > MAX_SELECTOR_LENGTH) {
    throw new BadRequestError(`invalid ${name}: ${v.length} characters, the limit is ${MAX_SELECTOR_LENGTH}`);
  }
  try {
    if (name === 'labelSelector') parseLabelSelector(v);
    else parseFieldSelector(v);
  } catch (err) {
    throw new BadRequestError(`invalid ${name}: ${(err as Error).message}`);
  }
  return v;
}

/** Parse list/watch/get parameters. `forceWatch`: the legacy /watch/ path prefix. */
export function parseReadQuery(params: URLSearchParams, forceWatch = false): ReadQuery {
  const watch = forceWatch || parseBool(params, 'watch') === true;
  const timeoutSeconds = parseCount(params, 'timeoutSeconds');
  const query: ReadQuery = {
    watch,
    resourceVersion: parseRV(params),
    resourceVersionMatch: parseMatch(params),
    labelSelector: parseSelector(params, 'labelSelector'),
    fieldSelector: parseSelector(params, 'fieldSelector'),
    limit: parseCount(params, 'limit'),
    continue: params.get('continue') ?? undefined,
    allowWatchBookmarks: parseBool(params, 'allowWatchBookmarks') === true,
    sendInitialEvents: parseBool(params, 'sendInitialEvents'),
    timeoutSeconds: timeoutSeconds === 0 ? undefined : timeoutSeconds,
  };
  if (!watch && query.sendInitialEvents !== undefined) {
    throw new BadRequestError('sendInitialEvents is forbidden for list');
  }
  return query;
}

/** Writes: reject what this server cannot honour (dryRun would otherwise persist). */
export function checkWriteQuery(params: URLSearchParams): void {
  const dryRun = params.getAll('dryRun').filter((v) => v !== '');
  if (dryRun.length > 0) throw new BadRequestError(`dryRun is not supported by this server (got ${dryRun.join(',')})`);
}
